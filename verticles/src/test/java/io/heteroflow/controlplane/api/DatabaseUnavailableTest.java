package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;


import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which failures the API answers 503 (retry shortly) rather than 500: the database out of reach, however it shows. */
class DatabaseUnavailableTest {
  static Stream<Arguments> failures() {
    return Stream.of(
        Arguments.of("connection refused", new ConnectException("Connection refused"), true),
        Arguments.of("connection reset", new IOException("Connection reset by peer"), true),
        Arguments.of("channel closed under a write", new java.nio.channels.ClosedChannelException(), true),
        Arguments.of("pooled connection closed", ClosedConnectionException.INSTANCE, true),
        Arguments.of("admin shutdown 57P01", new PgException("terminating connection", "FATAL", "57P01", null), true),
        Arguments.of("starting up 57P03", new PgException("the database system is starting up", "FATAL", "57P03", null), true),
        Arguments.of("too many connections 53300", new PgException("too many clients", "FATAL", "53300", null), true),
        Arguments.of("connection failure 08006", new PgException("connection failure", "FATAL", "08006", null), true),
        Arguments.of("wrapped reset", new CompletionException(new IOException("Connection reset")), true),
        Arguments.of("a constraint violation is ours", new PgException("duplicate key", "ERROR", "23505", null), false),
        Arguments.of("a syntax error is ours", new PgException("syntax error", "ERROR", "42601", null), false),
        Arguments.of("a bug is ours", new NullPointerException(), false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("failures")
  void answers503OnlyWhenTheDatabaseIsOutOfReach(String what, Throwable failure, boolean unavailable) {
    assertEquals(unavailable, Http.isDatabaseUnavailable(failure), what);
  }
}
