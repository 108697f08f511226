package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code /api/v1/groups}: strict decoding naming the field (nothing written), limits, tenant isolation. */
class GroupApiTest {
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();
  private static final String MEMBER = "{\"name\":\"w\",\"command\":[\"true\"],\"gpu_required\":1}";
  private static String alice;
  private static String bob;

  @BeforeAll
  static void tenants() throws Exception {
    alice = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"alice\"}", 201).getString("token");
    bob = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"bob\"}", 201).getString("token");
  }

  static Stream<Arguments> badGroups() {
    return Stream.of(
        Arguments.of("{\"members\":[" + MEMBER + "]}", "name"),
        Arguments.of("{\"name\":\"g\"}", "members"),
        Arguments.of("{\"name\":\"g\",\"members\":[]}", "members"),
        Arguments.of("{\"name\":\"g\",\"members\":7}", "members"),
        Arguments.of("{\"name\":\"g\",\"memebrs\":[" + MEMBER + "]}", "memebrs"),
        Arguments.of("{\"name\":\"g\",\"type\":\"batch\",\"members\":[" + MEMBER + "]}", "type"),
        Arguments.of("{\"name\":\"g\",\"gpu_type\":\"voodoo\",\"members\":[" + MEMBER + "]}", "gpu_type"),
        Arguments.of("{\"name\":\"g\",\"parallelism\":\"expert\",\"members\":[" + MEMBER + "]}", "parallelism"),
        Arguments.of("{\"name\":\"g\",\"members\":[" + MEMBER + ",{\"name\":\"w\",\"command\":[\"true\"],"
            + "\"gpu_required\":-1}]}", "members[1].gpu_required"),
        Arguments.of("{\"name\":\"g\",\"members\":[" + MEMBER + ",3]}", "members[1]"),
        Arguments.of("{\"name\":\"g\",\"members\":[{\"name\":\"w\",\"command\":[\"true\"],\"group_id\":\"x\"}]}",
            "members[0].group_id"),
        Arguments.of("{\"name\":\"g\",\"members\":[{\"name\":\"w\",\"command\":[\"true\"],\"env\":{\"RANK\":\"3\"}}]}",
            "members[0].env.RANK"),
        Arguments.of("{\"name\":\"g\",\"type\":\"training\",\"members\":[{\"name\":\"w\",\"command\":[\"true\"],"
            + "\"type\":\"job\"}]}", "members[0].type"),
        Arguments.of("{\"name\":\"g\",\"gpu_type\":\"nvidia\",\"members\":[{\"name\":\"w\",\"command\":[\"true\"],"
            + "\"gpu_type\":\"ascend\"}]}", "members[0].gpu_type"),
        Arguments.of("{\"name\":\"g\",\"members\":[" + MEMBER + ",{\"name\":\"w\",\"command\":[\"true\"],"
            + "\"priority\":90}]}", "members[1].priority"),
        Arguments.of("{\"name\":\"g\",\"members\":[{\"name\":\"w\",\"command\":[\"true\"],\"preemptible\":true}]}",
            "members[0].preemptible"),
        Arguments.of("{\"name\":\"g\",\"members\":{\"template\":" + MEMBER + ",\"count\":1025}}", "members.count"),
        Arguments.of("{\"name\":\"g\",\"members\":{\"template\":" + MEMBER + "}}", "members.count"),
        Arguments.of("{\"name\":\"g\",\"members\":{\"count\":2}}", "members.template"),
        Arguments.of("{\"name\":\"g\",\"members\":{\"template\":" + MEMBER + ",\"count\":2,\"size\":3}}", "members.size"),
        Arguments.of("{\"name\":\"g\",\"members\":{\"template\":{\"command\":[\"true\"],\"gpu_required\":999},"
            + "\"count\":2}}", "members.template.gpu_required"),
        Arguments.of("{\"name\":\"g\",\"restart_policy\":{\"max_restarts\":11},\"members\":[" + MEMBER + "]}",
            "restart_policy.max_restarts"),
        Arguments.of("{\"name\":\"g\",\"restart_policy\":{\"backoff\":1},\"members\":[" + MEMBER + "]}",
            "restart_policy.backoff"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badGroups")
  void aBadGroupIsA400NamingTheFieldAndWritesNothing(String body, String field) throws Exception {
    long tasksBefore = count("SELECT count(*) FROM tasks");
    HttpResponse<String> response = cp.call("POST", "/api/v1/groups", alice, body);
    assertEquals(400, response.statusCode(), response.body());
    assertEquals(field, new JsonObject(response.body()).getString("field"), response.body());
    assertEquals(0, count("SELECT count(*) FROM task_groups WHERE tenant = 'alice' AND name = 'g'"));
    assertEquals(tasksBefore, count("SELECT count(*) FROM tasks"));
  }

  @Test
  void aTaskCannotJoinAGroupByItsOwnGroupId() throws Exception {
    HttpResponse<String> response = cp.call("POST", "/api/v1/tasks", alice,
        "{\"name\":\"t\",\"command\":[\"true\"],\"group_id\":\"mine\"}");
    assertEquals(400, response.statusCode());
    assertEquals("group_id", new JsonObject(response.body()).getString("field"));
  }

  @Test
  void aTemplateMakesRankedMembersAndATenantSeesOnlyItsOwnGroups() throws Exception {
    JsonObject created = cp.json("POST", "/api/v1/groups", alice, "{\"name\":\"workers\",\"gpu_type\":\"nvidia\","
        + "\"members\":{\"template\":{\"command\":[\"true\"],\"gpu_required\":8},\"count\":16},"
        + "\"restart_policy\":{\"max_restarts\":2}}", 201);
    String id = created.getString("id");
    assertEquals(16, created.getJsonArray("members").size());
    assertEquals(16, created.getInteger("member_count"));
    assertEquals(2, created.getJsonObject("restart_policy").getInteger("max_restarts"));
    for (int rank = 0; rank < 16; rank++) {
      JsonObject member = created.getJsonArray("members").getJsonObject(rank);
      assertEquals(rank, member.getInteger("rank"));
      assertEquals("workers-" + rank, member.getString("name"));
      JsonObject task = cp.json("GET", "/api/v1/tasks/" + member.getString("task_id"), alice, null, 200);
      assertEquals(id, task.getString("group_id"));
      assertEquals("nvidia", task.getString("gpu_type"), "the group's gpu_type");
      assertEquals("training", task.getString("type"));
    }
    assertEquals(404, cp.call("GET", "/api/v1/groups/" + id, bob, null).statusCode());
    assertEquals(404, cp.call("POST", "/api/v1/groups/" + id + "/stop", bob, null).statusCode());
    assertEquals(404, cp.call("GET", "/api/v1/groups/not-a-uuid", alice, null).statusCode());
    assertTrue(cp.json("GET", "/api/v1/groups", bob, null, 200).getJsonArray("items").isEmpty());
    assertEquals(id, cp.json("GET", "/api/v1/groups", alice, null, 200).getJsonArray("items").getJsonObject(0)
        .getString("id"));
    assertEquals(1, cp.json("GET", "/api/v1/groups?limit=1", ControlPlaneHarness.ADMIN, null, 200).getInteger("count"));
    assertEquals(400, cp.call("GET", "/api/v1/groups?limit=0", alice, null).statusCode());
    JsonObject stopped = cp.json("POST", "/api/v1/groups/" + id + "/stop", alice, null, 202);
    assertEquals("stopped", stopped.getString("status"), "a waiting group stops at once");
    assertTrue(stopped.getJsonArray("members").stream().map(JsonObject.class::cast)
        .allMatch(member -> "stopped".equals(member.getString("status"))), stopped.encode());
  }

  @Test
  void listedMembersTakeTheirRanksInListOrder() throws Exception {
    JsonObject created = cp.json("POST", "/api/v1/groups", alice, "{\"name\":\"ps\",\"type\":\"job\",\"members\":["
        + "{\"name\":\"server\",\"command\":[\"true\"],\"cpu_cores\":2},"
        + "{\"name\":\"worker\",\"command\":[\"true\"],\"gpu_required\":4,\"type\":\"job\"}]}", 201);
    assertEquals("server", created.getJsonArray("members").getJsonObject(0).getString("name"));
    assertEquals("worker", created.getJsonArray("members").getJsonObject(1).getString("name"));
    assertEquals(1, created.getJsonArray("members").getJsonObject(1).getInteger("rank"));
    assertEquals(4, created.getJsonArray("members").getJsonObject(1).getInteger("gpu_required"));
    cp.json("POST", "/api/v1/groups/" + created.getString("id") + "/stop", alice, null, 202);
  }

  private static long count(String sql) throws Exception {
    return ControlPlaneHarness.await(cp.pool().query(sql).execute()).iterator().next().getLong(0);
  }
}
