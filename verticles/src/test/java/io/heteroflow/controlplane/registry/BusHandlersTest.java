package io.heteroflow.controlplane.registry;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every consumer of a bus address, control plane and agent, answers a malformed payload with a 4xx failure
 * code within a short timeout: never a 503 the sender would retry, never an exception and no reply.
 */
class BusHandlersTest {
  private static final String AGENT = "bus-agent";
  private static final String SOME_TASK = UUID.randomUUID().toString();
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(ControlPlaneHarness.node(AGENT, GpuVendor.NVIDIA, 1)));


  record Case(String address, Object body, int code, String why) {
    @Override
    public String toString() {
      return address + ": " + why;
    }
  }

  private static JsonObject json(String encoded) {
    return new JsonObject(encoded);
  }

  /** The malformed payloads every request-reply consumer refuses: wrong body type, non-JSON. */
  private static Stream<Case> wrongBodies(String address) {
    return Stream.of(new Case(address, "{\"task_id\": \"x\"}", 400, "a String body"),
        new Case(address, "not json {", 400, "a non-JSON String"),
        new Case(address, Buffer.buffer("{}"), 400, "a Buffer body"),
        new Case(address, new JsonArray().add(1), 400, "a JSON array"));
  }

  static Stream<Case> cases() {
    String heartbeat = BusAddresses.NODE_HEARTBEAT;
    String claim = BusAddresses.TASK_CLAIM;
    String report = BusAddresses.TASK_REPORT;
    String bind = BusAddresses.SCHEDULER_BIND;
    String fence = "\"fence\": {\"member\": \"m\", \"term\": 1}";
    return Stream.of(
        wrongBodies(heartbeat), wrongBodies(BusAddresses.NODE_RELEASE), wrongBodies(claim), wrongBodies(report), wrongBodies(bind),
        wrongBodies(BusAddresses.SCHEDULER_KICK), wrongBodies(BusAddresses.LEADERSHIP_CHANGED), wrongBodies(BusAddresses.agentRun(AGENT)),
        wrongBodies(BusAddresses.agentStop(AGENT)), wrongBodies(BusAddresses.agentLogs(AGENT)),
        wrongBodies(BusAddresses.NODE_BEAT),
        Stream.of(
            new Case(BusAddresses.NODE_BEAT, json("{\"node_id\": \"bus-n\", \"seq\": 1, \"active_tasks\": []}"), 400,
                "a beat without boot_id"),
            new Case(BusAddresses.NODE_BEAT, json("{\"node_id\": \"bus-n\", \"boot_id\": \"b\", \"active_tasks\": []}"),
                400, "a beat without seq"),
            new Case(BusAddresses.NODE_BEAT, json("{\"node_id\": \"bus-n\", \"boot_id\": \"b\", \"seq\": 1}"), 400,
                "a beat without active_tasks"),
            new Case(BusAddresses.NODE_BEAT, json("{\"node_id\": \"bus-n\", \"boot_id\": \"b\", \"seq\": 1,"
                + " \"active_tasks\": [\"not-a-task\"]}"), 400, "a beat with a task id that is no UUID"),
            new Case(heartbeat, json("{}"), 400, "no node_id"),
            new Case(heartbeat, json("{\"node_id\": null}"), 400, "a null node_id"),
            new Case(heartbeat, json("{\"node_id\": 42}"), 400, "a numeric node_id"),
            new Case(heartbeat, json("{\"node_id\": \"n b\"}"), 400, "a node_id with a space"),
            new Case(heartbeat, json("{\"node_id\": \"bus-n\", \"seq\": \"7\"}"), 400, "a string seq"),
            new Case(heartbeat, json("{\"node_id\": \"bus-n\", \"cpu_cores\": 1.5}"), 400, "fractional cpu_cores"),
            new Case(heartbeat, json("{\"node_id\": \"bus-n\", \"cards\": [\"x\"]}"), 400, "a card that is a string"),
            new Case(heartbeat, json("{\"node_id\": \"bus-n\", \"cards\": [{\"index\": \"0\"}]}"), 400,
                "a string card index"),
            new Case(heartbeat, json("{\"node_id\": \"bus-n\", \"active_tasks\": [1]}"), 400,
                "a numeric active task"),
            new Case(heartbeat, json("{\"node_id\": \"bus-n\", \"location\": \"here\"}"), 400, "a string location"),
            new Case(heartbeat, json("{\"node_id\": \"bus-n\", \"cards\": [{\"index\": -1}]}"), 400,
                "a card index PostgreSQL refuses"),
            new Case(heartbeat, json("{\"node_id\": \"bus-n\", \"labels\": {\"rdma\": true}}"), 400,
                "a label that is not a string"),
            new Case(heartbeat, json("{\"v\": 2, \"node_id\": \"bus-n\"}"), 400, "another protocol version"),
            new Case(heartbeat, beat("gpu_vendor", "quantum"), 400, "an unknown gpu_vendor"),
            new Case(heartbeat, beat("cards", cards(65)), 400, "65 cards"),
            new Case(heartbeat, beat("cards", new JsonArray().add(card(64))), 400, "a card index above 63"),
            new Case(heartbeat, beat("cards", new JsonArray().add(card(3)).add(card(3))), 400, "a repeated card index"),
            new Case(heartbeat, beat("cards", new JsonArray().add(card(0).put("uuid", LONG))), 400,
                "a card uuid of 257 characters"),
            new Case(heartbeat, beat("cards", new JsonArray().add(card(0).put("model", LONG))), 400,
                "a card model of 257 characters"),
            new Case(heartbeat, beat("labels", labels(65)), 400, "65 labels"),
            new Case(heartbeat, beat("labels", new JsonObject().put("rack", LONG)), 400, "a label of 257 characters"),
            new Case(heartbeat, beat("labels", new JsonObject().put(LONG, "x")), 400, "a label name of 257 characters"),
            new Case(heartbeat, beat("internal_ips", ips(65)), 400, "65 internal IPs"),
            new Case(heartbeat, beat("public_ips", ips(65)), 400, "65 public IPs"),
            new Case(heartbeat, beat("topology", "nvlink=0-1;" + "x".repeat(64 * 1024)), 400, "a topology over 64 KiB"),
            new Case(heartbeat, beat("boot_id", LONG), 400, "a boot_id of 257 characters"),
            new Case(heartbeat, beat("location", new JsonObject().put("rack", LONG)), 400, "a rack of 257 characters"),
            new Case(BusAddresses.NODE_RELEASE, json("{\"boot_id\": \"b\"}"), 400, "no node_id"),
            new Case(BusAddresses.NODE_RELEASE, json("{\"node_id\": \"bus-n\"}"), 400, "no boot_id"),
            new Case(BusAddresses.NODE_RELEASE, json("{\"node_id\": \"bus-n\", \"boot_id\": \"\"}"), 400,
                "an empty boot_id"),
            new Case(BusAddresses.NODE_RELEASE, json("{\"node_id\": \"bus-n\", \"boot_id\": 7}"), 400,
                "a numeric boot_id"),
            new Case(BusAddresses.NODE_RELEASE, json("{\"node_id\": \"n b\", \"boot_id\": \"b\"}"), 400,
                "a node_id with a space"),
            new Case(BusAddresses.NODE_RELEASE, new JsonObject().put("node_id", "bus-n").put("boot_id", LONG), 400,
                "a boot_id of 257 characters"),
            new Case(claim, json("{\"v\": \"1\", \"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"bus-n\"}"), 400,
                "a string protocol version"),
            new Case(claim, json("{}"), 400, "no fields"),
            new Case(claim, json("{\"task_id\": null, \"node_id\": \"bus-n\"}"), 400, "a null task_id"),
            new Case(claim, json("{\"task_id\": 5, \"node_id\": \"bus-n\"}"), 400, "a numeric task_id"),
            new Case(claim, json("{\"task_id\": \"nope\", \"node_id\": \"bus-n\"}"), 400, "a task_id not an id"),
            new Case(claim, json("{\"task_id\": \"" + SOME_TASK + "\"}"), 400, "no node_id"),
            new Case(claim, json("{\"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"bus-n\", \"retry\": \"yes\"}"),
                400, "a string retry"),
            new Case(claim, json("{\"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"bus-n\"}"), 404,
                "a task that does not exist"),
            new Case(report, json("{}"), 400, "no fields"),
            new Case(report, json("{\"task_id\": null, \"node_id\": \"bus-n\", \"outcome\": \"failed\"}"), 400,
                "a null task_id"),
            new Case(report, json("{\"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"bus-n\"}"), 400, "no outcome"),
            new Case(report, json("{\"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"bus-n\", \"outcome\": \"exploded\"}"),
                400, "an unknown outcome"),
            new Case(report, json("{\"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"bus-n\", \"outcome\": \"failed\","
                + " \"exit_code\": \"1\"}"), 400, "a string exit_code"),
            new Case(report, json("{\"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"bus-n\", \"outcome\": \"failed\"}"),
                404, "a task that does not exist"),
            new Case(bind, json("{\"binds\": []}"), 400, "no fence"),
            new Case(bind, json("{\"binds\": [], \"fence\": {\"member\": \"m\"}}"), 400, "a fence without term"),
            new Case(bind, json("{\"binds\": [], \"fence\": {\"member\": \"m\", \"term\": \"1\"}}"), 400,
                "a string term"),
            new Case(bind, json("{\"binds\": \"all\", " + fence + "}"), 400, "binds not an array"),
            new Case(bind, json("{\"binds\": [7], " + fence + "}"), 400, "a bind that is a number"),
            new Case(bind, json("{\"binds\": [{\"task_id\": null, \"node_id\": \"n\"}], " + fence + "}"), 400,
                "a bind with a null task_id"),
            new Case(bind, json("{\"binds\": [{\"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"n\","
                + " \"gpu_indices\": [\"0\"]}], " + fence + "}"), 400, "string card indices"),
            new Case(bind, json("{\"binds\": [{\"task_id\": \"" + SOME_TASK + "\", \"node_id\": \"n\","
                + " \"shard\": {\"card_index\": 0}}], " + fence + "}"), 400, "a shard without memory"),
            new Case(BusAddresses.SCHEDULER_KICK, json("{\"task_id\": \"nope\"}"), 400, "a task_id not an id"),
            new Case(BusAddresses.LEADERSHIP_CHANGED, json("{\"member_id\": \"m\"}"), 400, "a change without term"),
            new Case(BusAddresses.agentRun(AGENT), json("{}"), 400, "no task_id"),
            new Case(BusAddresses.agentRun(AGENT), json("{\"task_id\": null}"), 400, "a null task_id"),
            new Case(BusAddresses.agentRun(AGENT), json("{\"task_id\": \"" + SOME_TASK + "\", \"term\": \"3\"}"), 400,
                "a string term"),
            new Case(BusAddresses.agentRun(AGENT), json("{\"task_id\": \"" + SOME_TASK + "\", \"gpu_indices\": \"0\"}"),
                400, "card indices not an array"),
            new Case(BusAddresses.agentStop(AGENT), json("{}"), 400, "no task_id"),
            new Case(BusAddresses.agentStop(AGENT), json("{\"task_id\": 12}"), 400, "a numeric task_id"),
            new Case(BusAddresses.agentLogs(AGENT), json("{\"task_id\": null}"), 400, "a null task_id"),
            new Case(BusAddresses.agentLogs(AGENT), json("{\"task_id\": \"" + SOME_TASK + "\", \"max_bytes\": \"9\"}"),
                400, "a string max_bytes"))).flatMap(cases -> cases);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void aMalformedPayloadIsAnsweredWithA4xxCode(Case c) throws Exception {
    ReplyException reply = assertThrows(ReplyException.class, () -> cp.vertx.eventBus()
        .request(c.address(), c.body(), new DeliveryOptions().setSendTimeout(3000)).await(10, TimeUnit.SECONDS),
        "answered as if well formed");
    assertEquals(ReplyFailure.RECIPIENT_FAILURE, reply.failureType(), "refused by the consumer, not timed out: "
        + reply.getMessage());
    assertEquals(c.code(), reply.failureCode(), reply.getMessage());
  }

  @Test
  void anAgentAskedToStopATaskItDoesNotKnowSaysSoTruthfully() throws Exception {
    String id = cp.submit("{\"name\":\"ghost\",\"command\":[\"true\"],\"node_selector\":{\"no\":\"such-node\"}}");
    // stopping on the agent's node, though the agent never saw it (as after an agent restart)
    await(cp.pool().preparedQuery("UPDATE tasks SET status = 'stopping', node_id = $2 WHERE id = $1")
        .execute(io.vertx.sqlclient.Tuple.of(UUID.fromString(id), AGENT)));
    JsonObject task = cp.awaitStatus(id, "stopped");
    String message = task.getJsonObject("reason").getString("message");
    assertTrue(message.startsWith("the agent of " + AGENT + " is not running it"), message);
  }

  private static JsonObject request(String address, JsonObject body) throws Exception {
    return (JsonObject) await(cp.vertx.eventBus().request(address, body)).body();
  }

  private static ReplyException refused(String address, JsonObject body) {
    return assertThrows(ReplyException.class, () -> cp.vertx.eventBus().request(address, body,
        new DeliveryOptions().setSendTimeout(3000)).await(10, TimeUnit.SECONDS), "answered as if applied");
  }

  @Test
  void aHeartbeatOfAnotherAgentProcessForANodeHeldByALiveAgentIsRefusedWith409NodeHeld() throws Exception {
    ControlPlaneHarness.eventually(java.time.Duration.ofSeconds(20), "the live agent's first heartbeat",
        () -> cp.get("/api/v1/nodes/" + AGENT).getString("id") != null);
    ReplyException held = refused(BusAddresses.NODE_HEARTBEAT, new JsonObject().put("node_id", AGENT)
        .put("boot_id", "another-process").put("seq", 1).put("active_tasks", new JsonArray()));
    assertEquals(ReplyFailure.RECIPIENT_FAILURE, held.failureType(), held.getMessage());
    assertEquals(409, held.failureCode(), held.getMessage());
    assertTrue(held.getMessage().startsWith("node_held: node " + AGENT + " is held by another live agent process"
        + " since "), held.getMessage());
    assertEquals(false, request(BusAddresses.NODE_RELEASE, new JsonObject().put("node_id", AGENT)
        .put("boot_id", "another-process")).getBoolean("released"), "only the holder releases its node");
  }

  @Test
  void aReleaseByTheHolderLetsAnotherAgentProcessTakeTheNodeOverAtOnce() throws Exception {
    JsonObject first = new JsonObject().put("node_id", "bus-release").put("boot_id", "first").put("seq", 1)
        .put("active_tasks", new JsonArray());
    JsonObject second = first.copy().put("boot_id", "second");
    assertEquals(true, request(BusAddresses.NODE_HEARTBEAT, first).getBoolean("applied"));
    assertEquals(409, refused(BusAddresses.NODE_HEARTBEAT, second).failureCode());
    JsonObject release = new JsonObject().put("v", 1).put("node_id", "bus-release").put("boot_id", "first");
    assertEquals(true, request(BusAddresses.NODE_RELEASE, release).getBoolean("released"));
    assertEquals(true, request(BusAddresses.NODE_HEARTBEAT, second).getBoolean("applied"), "taken over at once");
    assertEquals(409, refused(BusAddresses.NODE_HEARTBEAT, first.copy().put("seq", 2)).failureCode(),
        "the released process does not come back while the new one lives");
  }

  @Test
  void aBeatRenewsOnlyItsHoldersLeaseAndAnswersAsAHeartbeatDoes() throws Exception {
    JsonObject full = new JsonObject().put("node_id", "bus-beat").put("boot_id", "holder").put("seq", 1)
        .put("gpu_vendor", "nvidia").put("cards", new JsonArray().add(new JsonObject().put("index", 0)))
        .put("active_tasks", new JsonArray());
    JsonObject beat = new JsonObject().put("v", 1).put("node_id", "bus-beat").put("boot_id", "holder").put("seq", 2)
        .put("active_tasks", new JsonArray());
    assertEquals(false, request(BusAddresses.NODE_BEAT, beat).getBoolean("applied"), "no full heartbeat yet");
    assertEquals(true, request(BusAddresses.NODE_HEARTBEAT, full).getBoolean("applied"));
    JsonObject renewed = request(BusAddresses.NODE_BEAT, beat.copy().put("seq", 3));
    assertEquals(true, renewed.getBoolean("applied"), renewed.encode());
    assertEquals(new JsonArray(), renewed.getJsonArray("run"), "the reconciliation: nothing to run");
    assertEquals(false, request(BusAddresses.NODE_BEAT, beat.copy().put("boot_id", "other").put("seq", 9))
        .getBoolean("applied"), "another boot's beat renews nothing");
    assertEquals(1L, (long) await(cp.pool().preparedQuery("SELECT count(*) FROM node_leases WHERE node_id = $1"
        + " AND boot_id = 'holder' AND seq = 3").execute(io.vertx.sqlclient.Tuple.of("bus-beat")))
        .iterator().next().getLong(0), "the holder's lease, renewed by its beat");
  }

  @Test
  void aWellFormedHeartbeatIsStillAnswered() throws Exception {
    JsonObject reply = (JsonObject) await(cp.vertx.eventBus().request(BusAddresses.NODE_HEARTBEAT,
        new JsonObject().put("node_id", "bus-ok").put("boot_id", "b").put("seq", 1).put("active_tasks",
            new JsonArray()))).body();
    assertEquals(true, reply.getBoolean("applied"));
  }

  @Test
  void aHeartbeatAtEveryLimitIsApplied() throws Exception {
    String longest = "b".repeat(256);
    JsonArray cards = cards(64);
    cards.getJsonObject(63).put("index", 63).put("uuid", longest).put("model", longest);
    JsonObject beat = beat("cards", cards).put("gpu_vendor", "NVIDIA").put("labels", labels(64))
        .put("internal_ips", ips(64)).put("public_ips", ips(64)).put("boot_id", longest)
        .put("topology", "nvlink=0-1;" + "x".repeat(64 * 1024 - 11));
    JsonObject reply = (JsonObject) await(cp.vertx.eventBus().request(BusAddresses.NODE_HEARTBEAT, beat)).body();
    assertEquals(true, reply.getBoolean("applied"));
  }

  private static final String LONG = "a".repeat(257);

  /** A heartbeat of node bus-n with one more field. */
  private static JsonObject beat(String field, Object value) {
    return new JsonObject().put("node_id", "bus-n").put(field, value);
  }

  private static JsonObject card(int index) {
    return new JsonObject().put("index", index);
  }

  private static JsonArray cards(int count) {
    JsonArray cards = new JsonArray();
    for (int i = 0; i < count; i++) {
      cards.add(new JsonObject());
    }
    return cards;
  }

  private static JsonObject labels(int count) {
    JsonObject labels = new JsonObject();
    for (int i = 0; i < count; i++) {
      labels.put("l" + i, "v");
    }
    return labels;
  }

  private static JsonArray ips(int count) {
    JsonArray ips = new JsonArray();
    for (int i = 0; i < count; i++) {
      ips.add("10.0." + (i / 250) + "." + (i % 250 + 1));
    }
    return ips;
  }
}
