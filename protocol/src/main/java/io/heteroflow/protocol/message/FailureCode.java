package io.heteroflow.protocol.message;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/**
 * Why a request on the bus failed, as one code (the failure code of a {@link ReplyException}), and what each
 * side does about it. The receiving side maps its exceptions to a code in {@link BusPayload#answer}; the sending
 * side maps a failed request back with {@link #of} and retries only what {@link #retryable} says.
 */
public enum FailureCode {
  /** The message is malformed; the text names the field. */
  BAD_REQUEST(400),
  /** The sender may not send this (an agent speaking for another node). */
  FORBIDDEN(403),
  /** The message names something that does not exist (a task id). */
  NOT_FOUND(404),
  /** The message conflicts with the state it meets (a term that has passed). */
  CONFLICT(409),
  /** The receiver failed in a way it did not expect (a bug): the text says what. */
  INTERNAL(500),
  /** The receiver cannot reach PostgreSQL, nobody answered in time, or no receiver is registered yet. */
  UNAVAILABLE(503);

  private final int code;

  FailureCode(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** A 4xx is the sender's fault: repeating the same message cannot succeed. */
  public boolean retryable() {
    return code >= 500;
  }

  /** A refusal with this code, as a consumer fails a request (throw it or fail the reply's future with it). */
  public ReplyException refusal(String message) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, code, message);
  }

  /**
   * The code of a failed request, on the sending side: the receiver's own code; a timeout or no receiver is
   * {@link #UNAVAILABLE}; any other failure (the request never left) {@link #INTERNAL}.
   */
  public static FailureCode of(Throwable failure) {
    if (failure instanceof ReplyException reply) {
      if (reply.failureType() != ReplyFailure.RECIPIENT_FAILURE) {
        return UNAVAILABLE;
      }
      return forCode(reply.failureCode());
    }
    return INTERNAL;
  }

  /** The code of a number received on the wire; an unknown 4xx reads as a bad request, anything else internal. */
  public static FailureCode forCode(int code) {
    for (FailureCode each : values()) {
      if (each.code == code) {
        return each;
      }
    }
    return code >= 400 && code < 500 ? BAD_REQUEST : code == 503 ? UNAVAILABLE : INTERNAL;
  }
}
