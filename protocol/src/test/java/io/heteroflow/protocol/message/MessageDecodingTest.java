package io.heteroflow.protocol.message;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** Malformed messages are refused with a 400 naming the field; what may be left out has its documented default. */
class MessageDecodingTest {
  private static final String TASK = UUID.randomUUID().toString();

  static Stream<Arguments> malformed() {
    return Stream.of(
        Arguments.of("Claim", "{\"task_id\":null,\"node_id\":\"n\"}", "task_id: required"),
        Arguments.of("Claim", "{\"task_id\":\"x\",\"node_id\":\"n\"}", "task_id: not an id: x"),
        Arguments.of("Claim", "{\"v\":2,\"task_id\":\"" + TASK + "\",\"node_id\":\"n\"}", "v: protocol version 1"),
        Arguments.of("Heartbeat", "{\"node_id\":\"n\",\"cpu_cores\":\"many\"}", "cpu_cores: an integer is required"),
        Arguments.of("Heartbeat", "{\"node_id\":\"../etc\"}", "node_id: "),
        Arguments.of("Heartbeat", "{\"node_id\":\"n\",\"cards\":[{\"index\":1.5}]}", "cards[0].index: an integer"),
        Arguments.of("Heartbeat", "{\"node_id\":\"n\",\"labels\":{\"rdma\":true}}", "labels.rdma: a string"),
        Arguments.of("Report", "{\"task_id\":\"" + TASK + "\",\"node_id\":\"n\",\"outcome\":\"won\"}",
            "outcome: one of succeeded, failed, stopped"),
        Arguments.of("BindBatch", "{\"binds\":[]}", "fence: required"),
        Arguments.of("BindBatch", "{\"binds\":[{\"task_id\":\"" + TASK + "\",\"node_id\":\"n\",\"shard\":{\"card_index\":0}}],"
            + "\"fence\":{\"member\":\"m\",\"term\":1}}", "binds[0].shard.memory_mb: required"),
        Arguments.of("Run", "{\"task_id\":\"" + TASK + "\",\"env\":{\"A\":1}}", "env.A: a string"),
        Arguments.of("Logs", "{\"task_id\":\"" + TASK + "\",\"max_bytes\":-1}", "max_bytes: 0 or more"),
        Arguments.of("LeadershipChange", "{\"member_id\":\"m\"}", "term: required"));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("malformed")
  void aMalformedMessageIsABadRequestNamingTheField(String message, String json, String expected) {
    Function<JsonObject, ? extends BusMessage> reader = Messages.READERS.get(message);
    ReplyException refused = assertThrows(ReplyException.class, () -> reader.apply(new JsonObject(json)));
    assertEquals(FailureCode.BAD_REQUEST, FailureCode.of(refused));
    assertEquals(true, refused.getMessage().startsWith(expected), refused.getMessage());
  }

  @Test
  void whatMayBeLeftOutHasItsDefault() {
    Heartbeat beat = Heartbeat.fromJson(new JsonObject().put("node_id", "n"));
    assertEquals(0, beat.cpuCores());
    assertNull(beat.activeTasks(), "no active_tasks field: no absence is counted");
    assertEquals(Heartbeat.Location.NONE, beat.location());
    Run run = Run.fromJson(new JsonObject().put("task_id", TASK));
    assertEquals(Run.DEFAULT_TIMEOUT_SECONDS, run.timeoutSeconds());
    assertEquals(0, run.term());
    assertEquals(Logs.DEFAULT_MAX_BYTES, Logs.fromJson(new JsonObject().put("task_id", TASK)).maxBytes());
    assertEquals(new Kick(null, null), Kick.fromJson(new JsonObject()));
  }

  @Test
  void aFailureMapsToItsCodeOnTheSendingSide() {
    assertEquals(FailureCode.NOT_FOUND, FailureCode.of(FailureCode.NOT_FOUND.refusal("task_id: no task")));
    assertEquals(FailureCode.UNAVAILABLE, FailureCode.of(new ReplyException(
        io.vertx.core.eventbus.ReplyFailure.TIMEOUT, "timed out")));
    assertEquals(FailureCode.UNAVAILABLE, FailureCode.of(new ReplyException(
        io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS, "none")));
    assertEquals(false, FailureCode.BAD_REQUEST.retryable());
    assertEquals(false, FailureCode.FORBIDDEN.retryable());
    assertEquals(true, FailureCode.UNAVAILABLE.retryable());
  }
}
