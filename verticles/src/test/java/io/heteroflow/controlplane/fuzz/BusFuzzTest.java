package io.heteroflow.controlplane.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.fuzz.ApiCase.Expect;
import io.heteroflow.controlplane.fuzz.HostileValues.Value;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 18 §6 for the event bus: every control-plane address gets its well-formed payload with each field
 * replaced by each hostile value, and bodies that are no JSON object. Each is answered (never a sender's
 * timeout), never with a 5xx failure code; a value of another type, or an integer beyond 64 bits, is a 400 whose
 * message names the field; and a refused message writes nothing. (The agents' own addresses are fuzzed by hand in
 * BusHandlersTest: a live agent's heartbeats would rewrite the node rows this test fingerprints.)
 */
class BusFuzzTest {
  private static final String NODE = "fz-bus";
  private static final String TASK = UUID.randomUUID().toString();
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().offlineGraceSeconds(3600);

  /** Address → a well-formed payload. A new address constant must be added here or to {@link #ELSEWHERE}. */
  private static final Map<String, String> SAMPLES = Map.of(
      BusAddresses.NODE_HEARTBEAT, "{\"v\":1,\"node_id\":\"" + NODE + "\",\"boot_id\":\"b\",\"seq\":1,"
          + "\"gpu_vendor\":\"nvidia\",\"cpu_cores\":8,\"memory_total_gb\":64,\"active_tasks\":[],"
          + "\"internal_ips\":[\"127.0.0.1\"],\"labels\":{\"zone\":\"a\"},"
          + "\"cards\":[{\"index\":0,\"model\":\"A100\",\"memory_total_mb\":81920}]}",
      BusAddresses.NODE_RELEASE, "{\"v\":1,\"node_id\":\"" + NODE + "\",\"boot_id\":\"b\"}",
      BusAddresses.NODE_BEAT, "{\"v\":1,\"node_id\":\"" + NODE + "\",\"boot_id\":\"b\",\"seq\":2,"
          + "\"active_tasks\":[]}",
      BusAddresses.TASK_CLAIM, "{\"v\":1,\"task_id\":\"" + TASK + "\",\"node_id\":\"" + NODE + "\",\"retry\":false}",
      BusAddresses.TASK_REPORT, "{\"v\":1,\"task_id\":\"" + TASK + "\",\"node_id\":\"" + NODE + "\","
          + "\"outcome\":\"failed\",\"exit_code\":1,\"attempt\":0}",
      BusAddresses.SCHEDULER_BIND, "{\"v\":1,\"binds\":[{\"task_id\":\"" + TASK + "\",\"node_id\":\"" + NODE + "\","
          + "\"gpu_indices\":[0]}],\"fence\":{\"member\":\"m\",\"term\":1}}",
      BusAddresses.SCHEDULER_KICK, "{\"v\":1,\"task_id\":\"" + TASK + "\",\"reason\":\"fuzz\"}",
      BusAddresses.GROUPS_KICK, "{\"v\":1,\"task_id\":\"" + TASK + "\"}",
      BusAddresses.SERVICES_KICK, "{\"v\":1,\"task_id\":\"" + TASK + "\"}",
      BusAddresses.LEADERSHIP_CHANGED, "{\"v\":1,\"member_id\":\"m\",\"term\":1}");
  /**
   * Addresses consumed elsewhere: the bus-client commands, local consumers reached only through the SockJS bridge,
   * which sets the principal (EventBusClientTest sends an invalid body and bad tokens there), and the task events, published
   * to bus clients and consumed by none here.
   */
  private static final Set<String> ELSEWHERE = Set.of(BusAddresses.API_TASKS_SUBMIT, BusAddresses.API_TASKS_STOP,
      BusAddresses.ADMIN_TASK_EVENTS);
  /** A well-typed change of leadership would be believed; only refusals are sent there. */
  private static final Set<String> REFUSALS_ONLY = Set.of(BusAddresses.LEADERSHIP_CHANGED);

  record BusCase(String address, String why, Object body, Expect expect, String field) {}

  @Test
  void everyAddressRefusesHostilePayloadsWithA4xxNamingTheFieldAndWritesNothing() throws Exception {
    for (Field constant : BusAddresses.class.getFields()) {
      if (Modifier.isStatic(constant.getModifiers()) && constant.getType() == String.class) {
        String address = (String) constant.get(null);
        assertTrue(SAMPLES.containsKey(address) || ELSEWHERE.contains(address),
            address + " has no sample payload in BusFuzzTest");
      }
    }
    List<BusCase> cases = cases();
    WrittenState state = WrittenState.of(cp.pool());
    Map<String, String> before = state.read();
    List<String> failures = new ArrayList<>();
    for (BusCase c : cases) {
      String problem = judge(c, send(c), before, before = state.read());
      if (problem != null) {
        failures.add(c.address() + " | " + c.why() + ": " + problem);
      }
    }
    assertTrue(cases.size() >= 300, "only " + cases.size() + " cases");
    assertEquals(List.of(), failures, failures.size() + " of " + cases.size() + " cases failed");
  }

  private static List<BusCase> cases() {
    List<BusCase> cases = new ArrayList<>();
    for (Map.Entry<String, String> sample : SAMPLES.entrySet()) {
      String address = sample.getKey();
      cases.add(new BusCase(address, "a string body", sample.getValue(), Expect.REFUSED, null));
      cases.add(new BusCase(address, "a Buffer body", Buffer.buffer(sample.getValue()), Expect.REFUSED, null));
      cases.add(new BusCase(address, "a JSON array", new JsonArray().add(1), Expect.REFUSED, null));
      cases.add(new BusCase(address, "no body", null, Expect.REFUSED, null));
      JsonObject root = new JsonObject(sample.getValue());
      mutate(cases, address, root, root, "");
    }
    return cases;
  }

  private static void mutate(List<BusCase> cases, String address, JsonObject root, JsonObject object, String prefix) {
    for (String field : List.copyOf(object.fieldNames())) {
      Object original = object.getValue(field);
      for (Value value : HostileValues.VALUES) {
        Expect expect = value.json() == null ? Expect.ANSWERED
            : original instanceof Number && value.beyond64Bits() ? Expect.NAMED
            : ApiCases.Json.type(original).equals(ApiCases.Json.type(value.json())) ? Expect.ANSWERED : Expect.NAMED;
        if (expect == Expect.ANSWERED && REFUSALS_ONLY.contains(address)) {
          continue;
        }
        object.put(field, value.json());
        cases.add(new BusCase(address, prefix + field + " = " + value.why(), root.copy(), expect, field));
      }
      object.put(field, original);
      if (original instanceof JsonObject nested) {
        mutate(cases, address, root, nested, prefix + field + ".");
      } else if (original instanceof JsonArray array && !array.isEmpty() && array.getValue(0) instanceof JsonObject o) {
        mutate(cases, address, root, o, prefix + field + "[0].");
      }
    }
  }

  private static Object send(BusCase c) {
    try {
      return cp.vertx.eventBus().request(c.address(), c.body(), new DeliveryOptions().setSendTimeout(5000))
          .await(10, TimeUnit.SECONDS).body();
    } catch (ReplyException e) {
      return e;
    } catch (Exception e) {
      return new IllegalStateException("no answer: " + e);
    }
  }

  private static String judge(BusCase c, Object answer, Map<String, String> before, Map<String, String> after) {
    if (answer instanceof IllegalStateException silence) {
      return silence.getMessage();
    }
    if (answer instanceof ReplyException failure) {
      if (failure.failureType() != ReplyFailure.RECIPIENT_FAILURE) {
        return "not answered by the consumer: " + failure.failureType() + " " + failure.getMessage();
      }
      if (failure.failureCode() >= 500 || failure.failureCode() < 400) {
        return "failure code " + failure.failureCode() + ": " + failure.getMessage();
      }
      List<String> written = WrittenState.changed(before, after);
      if (!written.isEmpty()) {
        return "refused with " + failure.failureCode() + " yet wrote to " + written;
      }
      if (c.expect() == Expect.NAMED && !String.valueOf(failure.getMessage()).contains(c.field())) {
        return "a " + failure.failureCode() + " that does not name " + c.field() + ": " + failure.getMessage();
      }
      if (c.expect() == Expect.NAMED && failure.failureCode() != 400) {
        return "a " + failure.failureCode() + " for a malformed " + c.field() + ": " + failure.getMessage();
      }
      return null;
    }
    return c.expect() == Expect.ANSWERED ? null : "accepted: " + answer;
  }
}
