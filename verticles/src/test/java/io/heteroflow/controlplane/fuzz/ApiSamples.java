package io.heteroflow.controlplane.fuzz;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Set;

/**
 * A well-formed request for every API route that takes a JSON body, which the fuzz mutates field by field, and
 * the routes that take none. A route added later must be listed in one of the two ({@link ApiFuzzTest} fails
 * otherwise), so no route escapes the fuzz.
 */
final class ApiSamples {
  private ApiSamples() {}

  static final String TENANT = "fz-t";
  static final String NODE = "fz-1";
  static final String QUEUE = "fz-q";

  /** "METHOD /path/{param}" → a body the route accepts (a 2xx) with the fixtures of {@link ApiFuzzTest}. */
  static final Map<String, JsonObject> BODIES = Map.ofEntries(
      entry("POST /api/v1/tasks", "{\"name\":\"fz\",\"command\":[\"true\"],\"gpu_required\":99,"
          + "\"env\":{\"MODE\":\"fuzz\"},\"labels\":{\"team\":\"a\"}}"),
      entry("POST /api/v1/tasks/explain", "{\"name\":\"fz\",\"command\":[\"true\"],\"gpu_required\":1}"),
      entry("POST /api/v1/groups", "{\"name\":\"fz-svc\",\"type\":\"inference\",\"replicas\":0,"
          + "\"template\":{\"command\":[\"true\"],\"gpu_required\":1}}"),
      entry("PUT /api/v1/groups/{id}/replicas", "{\"replicas\":0}"),
      entry("POST /api/v1/tenants", "{\"name\":\"fz-new\"}"),
      entry("PUT /api/v1/tenants/{name}", "{\"active\":true}"),
      entry("POST /api/v1/tenants/{name}/tokens", "{\"revoke_previous\":false}"),
      entry("POST /api/v1/share-groups", "{\"name\":\"fz-g\",\"tenants\":[\"" + TENANT + "\"]}"),
      entry("POST /api/v1/queues", "{\"name\":\"fz-q2\",\"guaranteed\":1,\"max\":2}"),
      entry("PUT /api/v1/queues/{name}", "{\"max\":3}"),
      entry("PUT /api/v1/nodes/{id}/labels", "{\"labels\":{\"zone\":\"a\"}}"),
      entry("PUT /api/v1/nodes/{id}/location", "{\"rack\":\"r1\"}"),
      entry("PUT /api/v1/nodes/{id}/dedicated", "{\"tenant\":\"" + TENANT + "\"}"),
      entry("PUT /api/v1/plugins/{name}", "{\"weight\":1}"),
      entry("PUT /api/v1/gpu-equivalents", "{\"A100-SXM4-80GB\":0.5}"));

  /** Routes whose body's keys are names the client chooses (GPU models), so no key is unknown. */
  static final Set<String> FREE_KEYS = Set.of("PUT /api/v1/gpu-equivalents");

  /** Routes that read no body (their actions are driven by path and query alone). */
  static final Set<String> WITHOUT_BODY = Set.of("POST /api/v1/tasks/{id}/stop", "POST /api/v1/groups/{id}/stop",
      "POST /api/v1/nodes/{id}/cordon", "POST /api/v1/nodes/{id}/uncordon", "POST /api/v1/nodes/{id}/drain",
      "POST /api/v1/plugins/{name}", "DELETE /api/v1/queues/{name}", "DELETE /api/v1/tenants/{name}/tokens/{id}");

  private static Map.Entry<String, JsonObject> entry(String route, String body) {
    return Map.entry(route, new JsonObject(body));
  }
}
