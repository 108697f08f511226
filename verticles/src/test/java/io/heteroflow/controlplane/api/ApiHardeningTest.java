package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.config.ApiConfig;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.testsupport.MutableClock;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tokens (listed without secrets, rotated, revoked at once), the audit ledger, admin-only routes, per-token rate
 * limits and reserved env names, over real HTTP against a control plane on real PostgreSQL. The clock is the
 * test's: rate-limit buckets refill only when the test moves it.
 */
class ApiHardeningTest {
  private static final int BURST = 8;
  private static final MutableClock CLOCK = new MutableClock(Instant.parse("2026-03-01T10:00:00Z"));
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness()
      .config(SchedulerConfig.defaults().withApi(new ApiConfig(new ApiConfig.RateLimits(true, 1, BURST, true, 1000))))
      .services(ControlPlane.ServiceBeats.DEFAULTS, CLOCK);

  private static String tenant(String name) throws Exception {
    return cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"" + name + "\"}", 201)
        .getString("token");
  }

  private static String admin(String method, String path, String body, int status) throws Exception {
    return cp.json(method, path, ControlPlaneHarness.ADMIN, body, status).encode();
  }

  @Test
  void rotateListAndRevokeTokensWithoutEverShowingASecret() throws Exception {
    String first = tenant("rotating");
    JsonObject rotated = new JsonObject(admin("POST", "/api/v1/tenants/rotating/tokens", "{}", 201));
    String second = rotated.getString("token");
    assertTrue(second.startsWith("hft_") && !second.equals(first));
    assertEquals(second.substring(0, 8), rotated.getString("prefix"));
    assertEquals(200, cp.call("GET", "/api/v1/whoami", first, null).statusCode(), "the old token stays valid");
    assertEquals(200, cp.call("GET", "/api/v1/whoami", second, null).statusCode());

    String listing = admin("GET", "/api/v1/tenants/rotating/tokens", null, 200);
    JsonArray tokens = new JsonObject(listing).getJsonArray("tokens");
    assertEquals(2, tokens.size());
    assertFalse(listing.contains(first) || listing.contains(second), "no secret in the listing: " + listing);
    assertFalse(listing.contains(ApiTokens.sha256Hex(first)), "no digest in the listing");
    JsonObject firstListed = tokens.stream().map(JsonObject.class::cast)
        .filter(t -> !t.getString("id").equals(rotated.getString("id"))).findFirst().orElseThrow();
    assertEquals(first.substring(0, 8), firstListed.getString("prefix"));
    assertTrue(firstListed.getBoolean("active"));

    String firstId = firstListed.getString("id");
    JsonObject revoked = new JsonObject(admin("DELETE", "/api/v1/tenants/rotating/tokens/" + firstId, null, 200));
    assertEquals(CLOCK.instant().toString(), revoked.getString("revoked_at"));
    HttpResponse<String> refused = cp.call("GET", "/api/v1/whoami", first, null);
    assertEquals(401, refused.statusCode(), "the next request with a revoked token: " + refused.body());
    assertEquals(200, cp.call("GET", "/api/v1/whoami", second, null).statusCode());
    admin("DELETE", "/api/v1/tenants/rotating/tokens/" + firstId, null, 200); // idempotent

    JsonObject third = new JsonObject(admin("POST", "/api/v1/tenants/rotating/tokens",
        "{\"revoke_previous\":true}", 201));
    assertEquals(List.of(rotated.getString("id")), third.getJsonArray("revoked").getList());
    assertEquals(401, cp.call("GET", "/api/v1/whoami", second, null).statusCode());
    assertEquals(200, cp.call("GET", "/api/v1/whoami", third.getString("token"), null).statusCode());
  }

  @Test
  void unknownTenantsAndTokensAre404NamingThem() throws Exception {
    tenant("known");
    String missing = cp.call("GET", "/api/v1/tenants/nobody/tokens", ControlPlaneHarness.ADMIN, null).body();
    assertTrue(missing.contains("tenant nobody not found"), missing);
    assertEquals(404, cp.call("POST", "/api/v1/tenants/nobody/tokens", ControlPlaneHarness.ADMIN, "{}").statusCode());
    String id = "6f1c1b54-0000-4000-8000-000000000000";
    HttpResponse<String> token = cp.call("DELETE", "/api/v1/tenants/known/tokens/" + id, ControlPlaneHarness.ADMIN, null);
    assertEquals(404, token.statusCode());
    assertTrue(token.body().contains(id) && token.body().contains("known"), token.body());
    assertEquals(400, cp.call("POST", "/api/v1/tenants/known/tokens", ControlPlaneHarness.ADMIN,
        "{\"revoke_previous\":\"yes\"}").statusCode());
  }

  @Test
  void tenantTokensAreRefusedOnTokenAndAuditRoutes() throws Exception {
    String token = tenant("curious");
    assertEquals(403, cp.call("GET", "/api/v1/tenants/curious/tokens", token, null).statusCode());
    assertEquals(403, cp.call("POST", "/api/v1/tenants/curious/tokens", token, "{}").statusCode());
    assertEquals(403, cp.call("GET", "/api/v1/audit", token, null).statusCode());
    String listing = admin("GET", "/api/v1/tenants/curious/tokens", null, 200);
    assertEquals(1, new JsonObject(listing).getJsonArray("tokens").size(), "the refused rotation wrote nothing");
  }

  @Test
  void adminActionsAreAuditedWithWhoWhatWhenAndTheRequestId() throws Exception {
    String token = tenant("audited");
    HttpResponse<String> rotated = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest
        .newBuilder(java.net.URI.create("http://127.0.0.1:" + cp.running.httpPort() + "/api/v1/tenants/audited/tokens"))
        .header("Authorization", "Bearer " + ControlPlaneHarness.ADMIN).header("X-Request-Id", "req-42")
        .header("Content-Type", "application/json").POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(201, rotated.statusCode());
    admin("PUT", "/api/v1/tenants/audited", "{\"active\":false}", 200);
    assertEquals(404, cp.call("POST", "/api/v1/nodes/no-such-node/cordon", ControlPlaneHarness.ADMIN, null)
        .statusCode());
    admin("PUT", "/api/v1/plugins/frag", "{\"weight\":2}", 200);

    String ledger = admin("GET", "/api/v1/audit?limit=1000", null, 200);
    JsonArray events = new JsonObject(ledger).getJsonArray("events");
    JsonObject rotation = find(events, "token.rotate", "tenant/audited");
    assertEquals("admin", rotation.getString("actor"));
    assertEquals("req-42", rotation.getString("request_id"));
    assertEquals(CLOCK.instant().toString(), rotation.getString("at"));
    assertEquals(new JsonObject(rotated.body()).getString("id"), rotation.getJsonObject("detail").getString("token_id"));
    assertEquals(false, find(events, "tenant.update", "tenant/audited").getJsonObject("detail").getBoolean("active"));
    assertNull(find(events, "tenant.create", "tenant/audited").getString("request_id"));
    assertEquals(200, find(events, "plugin.configure", "plugin/frag").getJsonObject("detail").getInteger("status"),
        "a multi-step action is audited once it succeeded");
    assertTrue(events.stream().noneMatch(e -> ((JsonObject) e).getString("target").equals("node/no-such-node")),
        "a refused action is not audited");
    assertFalse(ledger.contains(token) || ledger.contains(new JsonObject(rotated.body()).getString("token")),
        "no token in the ledger");

    JsonObject page = cp.json("GET", "/api/v1/audit?limit=1", ControlPlaneHarness.ADMIN, null, 200);
    long before = page.getLong("next_before");
    JsonObject next = cp.json("GET", "/api/v1/audit?limit=1&before=" + before, ControlPlaneHarness.ADMIN, null, 200);
    assertTrue(next.getJsonArray("events").getJsonObject(0).getLong("id") < before);
    assertEquals("before", cp.json("GET", "/api/v1/audit?before=x", ControlPlaneHarness.ADMIN, null, 400)
        .getString("field"));
  }

  @Test
  void aTokenOverItsRateIsAnswered429WithRetryAfterUntilTheClockRefillsIt() throws Exception {
    String token = tenant("hasty");
    String other = tenant("patient");
    for (int i = 0; i < BURST; i++) {
      assertEquals(200, cp.call("GET", "/api/v1/whoami", token, null).statusCode(), "request " + i + " of the burst");
    }
    HttpResponse<String> limited = cp.call("GET", "/api/v1/whoami", token, null);
    assertEquals(429, limited.statusCode());
    assertEquals("1", limited.headers().firstValue("Retry-After").orElseThrow());
    JsonObject error = new JsonObject(limited.body());
    assertEquals("rate_limited", error.getString("code"));
    assertTrue(error.getString("message").contains("1 requests per second, burst " + BURST), error.encode());
    assertEquals(200, cp.call("GET", "/api/v1/whoami", other, null).statusCode(), "another token has its own bucket");
    for (int i = 0; i < BURST + 5; i++) {
      assertEquals(200, cp.call("GET", "/api/v1/whoami", ControlPlaneHarness.ADMIN, null).statusCode(),
          "the admin token is exempt");
    }
    CLOCK.set(CLOCK.instant().plus(Duration.ofSeconds(1)));
    assertEquals(200, cp.call("GET", "/api/v1/whoami", token, null).statusCode(), "one request refilled");
    assertEquals(429, cp.call("GET", "/api/v1/whoami", token, null).statusCode());
  }

  @Test
  void aTaskEnvNamingAnInjectedVariableIs400NamingIt() throws Exception {
    for (String name : List.of("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "MASTER_ADDR", "MASTER_PORT",
        "RANK", "WORLD_SIZE", "LOCAL_RANK", "PORT", "HETEROFLOW_GPU_MEMORY_LIMIT_MB", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")) {
      JsonObject error = cp.json("POST", "/api/v1/tasks", ControlPlaneHarness.ADMIN,
          "{\"name\":\"t\",\"command\":[\"true\"],\"env\":{\"" + name + "\":\"0\"}}", 400);
      assertEquals("env." + name, error.getString("field"), error.encode());
    }
    JsonObject member = cp.json("POST", "/api/v1/groups", ControlPlaneHarness.ADMIN, "{\"name\":\"g\",\"members\":"
        + "[{\"name\":\"m\",\"command\":[\"true\"],\"env\":{\"RANK\":\"3\"}}]}", 400);
    assertTrue(member.getString("field").endsWith("env.RANK"), member.encode());
    assertEquals(0, cp.json("GET", "/api/v1/tasks", ControlPlaneHarness.ADMIN, null, 200).getInteger("count"),
        "nothing was written");
  }

  @Test
  void tokensNeverAppearInTheLogs() throws Exception {
    List<String> logged = new ArrayList<>();
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord record) {
        synchronized (logged) {
          logged.add(record.getLoggerName() + " " + record.getMessage() + " " + java.util.Arrays.toString(
              record.getParameters()) + " " + (record.getThrown() == null ? "" : record.getThrown().toString()));
        }
      }

      @Override
      public void flush() {
      }

      @Override
      public void close() {
      }
    };
    capture.setLevel(Level.ALL);
    Logger root = Logger.getLogger("");
    Level was = root.getLevel();
    root.addHandler(capture);
    root.setLevel(Level.ALL);
    try {
      String token = tenant("quiet");
      cp.call("GET", "/api/v1/whoami", token, null);
      cp.call("POST", "/api/v1/tasks", token, "{\"name\":\"t\",\"command\":[\"true\"],\"env\":{\"RANK\":\"1\"}}");
      String id = new JsonObject(admin("GET", "/api/v1/tenants/quiet/tokens", null, 200)).getJsonArray("tokens")
          .getJsonObject(0).getString("id");
      admin("DELETE", "/api/v1/tenants/quiet/tokens/" + id, null, 200);
      cp.call("GET", "/api/v1/whoami", token, null);
      cp.call("GET", "/api/v1/whoami", "hft_" + token.substring(4, 20), null);
      synchronized (logged) {
        assertFalse(logged.isEmpty(), "the capture sees the control plane's logging");
        for (String line : logged) {
          assertFalse(line.contains(token) || line.contains(token.substring(4, 20)), "a token was logged: " + line);
          assertFalse(line.contains(ControlPlaneHarness.ADMIN), "the admin token was logged: " + line);
        }
      }
    } finally {
      root.removeHandler(capture);
      root.setLevel(was);
    }
  }

  private static JsonObject find(JsonArray events, String action, String target) {
    return events.stream().map(JsonObject.class::cast)
        .filter(e -> e.getString("action").equals(action) && e.getString("target").equals(target)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + action + " of " + target + " in " + events.encode()));
  }
}
