package io.heteroflow.controlplane.fuzz;

/**
 * One fuzz request and what must come of it. Every case: an answer within the timeout, never a 5xx, never a
 * stack trace, and nothing written when refused. {@link Expect#REFUSED} also needs a 4xx with an error body;
 * {@link Expect#NAMED} a 4xx whose {@code field} or message names {@code field}.
 */
record ApiCase(String route, String why, String method, String path, String contentType, byte[] body,
               String token, Expect expect, String field) {
  enum Expect { ANSWERED, REFUSED, NAMED }

  @Override
  public String toString() {
    return route + " | " + why;
  }
}
