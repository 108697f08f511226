package io.heteroflow.launcher.browser;

import static io.heteroflow.testsupport.ControlPlaneHarness.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The operator console in real headless Chromium against a real control plane: what the page does goes
 * through the REST API, and what the API then says is what the page shows.
 */
@EnabledIf(value = "browserRuns", disabledReason = "no Chromium on this machine: install chromium chromium-driver to run"
    + " the browser tests")
class ConsoleBrowserTest {
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(
      new SimulatedNode("web-nv-1", GpuVendor.NVIDIA, "A100", 4, 40960, 16, 128, 5, 4096, List.of(), List.of(),
          Map.of(), Map.of("rack", "r1"), List.of("127.0.0.1"), null),
      new SimulatedNode("web-asc-1", GpuVendor.ASCEND, "910B", 8, 65536, 16, 128, 5, 4096, List.of(), List.of(),
          Map.of(), Map.of("rack", "r2"), List.of("127.0.0.1"), null)));
  private static Browser browser;
  private static String base;

  /** Runs where Chromium is; where CI requires it and it is missing, runs to fail in {@link #start}. */
  static boolean browserRuns() {
    return Browser.available() || Browser.requiredHere();
  }

  @BeforeAll
  static void start() throws Exception {
    assertTrue(Browser.available(), "CI must have chromium and chromium-driver (see .ci/run)");
    ControlPlaneHarness.eventually(Duration.ofSeconds(30), "two nodes",
        () -> cp.get("/api/v1/nodes").getInteger("count") == 2);
    base = "http://127.0.0.1:" + cp.running.httpPort() + "/";
    browser = Browser.start();
    browser.driver.get(base);
    browser.driver.findElement(By.id("token")).sendKeys(ADMIN);
    browser.driver.findElement(By.cssSelector("#token-form button")).click();
  }

  @AfterAll
  static void stop() throws Exception {
    if (browser != null) {
      browser.close();
    }
  }

  private static WebElement waitFor(By selector) {
    return new WebDriverWait(browser.driver, Duration.ofSeconds(15)).until(driver -> {
      List<WebElement> found = driver.findElements(selector);
      return found.isEmpty() ? null : found.get(0);
    });
  }

  private static void waitUntil(String what, java.util.function.BooleanSupplier condition) {
    // the cluster view redraws every 3 s: an element found may be replaced before it is read
    new WebDriverWait(browser.driver, Duration.ofSeconds(15)).withMessage(what)
        .ignoring(StaleElementReferenceException.class).until(driver -> condition.getAsBoolean());
  }

  private static JsonObject plugin(String name) {
    return cp.get("/api/v1/scheduler/plugins").getJsonArray("plugins").stream().map(JsonObject.class::cast)
        .filter(p -> p.getString("name").equals(name)).findFirst().orElseThrow();
  }

  private static void openView(String view) {
    browser.driver.get(base + "#" + view);
    browser.driver.navigate().refresh();
  }

  @Test
  void aTaskStatusChangeArrivesLiveOverTheEventBusBridge() throws Exception {
    openView("queue");
    waitUntil("the console is connected to the bridge",
        () -> browser.driver.findElement(By.id("live-state")).getText().equals("live updates"));
    String id = cp.json("POST", "/api/v1/tasks", ADMIN, "{\"name\":\"live-one\",\"command\":[\"sleep\",\"1\"],"
        + "\"gpu_required\":1,\"gpu_type\":\"nvidia\"}", 201).getString("id");
    for (String status : List.of("pending", "scheduled", "running", "succeeded")) {
      waitFor(By.cssSelector("#task-events li[data-task='" + id + "'][data-status='" + status + "']"));
    }
    assertTrue(waitFor(By.cssSelector("#task-events li[data-task='" + id + "'][data-status='succeeded']")).getText()
        .startsWith("live-one: running → succeeded"));
  }

  @Test
  void switchingBinpackOnInThePageSwitchesSpreadOffForTheScheduler() {
    openView("plugins");
    waitFor(By.cssSelector("tr[data-plugin='binpack'] button[data-action='enable']")).click();
    waitUntil("the page re-read binpack as on",
        () -> !browser.driver.findElements(By.cssSelector("tr[data-plugin='binpack'][data-enabled='true']")).isEmpty());
    assertTrue(plugin("binpack").getBoolean("enabled"));
    assertFalse(plugin("spread").getBoolean("enabled"));
    assertEquals("false", browser.driver.findElement(By.cssSelector("tr[data-plugin='spread']")).getAttribute("data-enabled"));
    waitFor(By.cssSelector("tr[data-plugin='spread'] button[data-action='enable']")).click();
    waitUntil("spread back on", () -> plugin("spread").getBoolean("enabled"));
  }

  @Test
  void disablingACorrectnessFilterIsRefusedAndTheRefusalIsShown() {
    openView("plugins");
    waitFor(By.cssSelector("button[aria-label='Disable gpu-filter']")).click();
    WebElement error = waitFor(By.cssSelector("#error:not([hidden])"));
    waitUntil("the API's refusal on the page", () -> error.getText().contains("correctness filter"));
    assertTrue(plugin("gpu-filter").getBoolean("enabled"));
  }

  @Test
  void theBuiltInFiltersShowAsAlwaysOnAndEachSettingGetsAControlFromItsSchema() {
    openView("plugins");
    for (String builtIn : List.of("availability", "tenant", "resource-prefilter", "affinity")) {
      WebElement row = waitFor(By.cssSelector("tr[data-plugin='" + builtIn + "']"));
      assertTrue(row.getText().contains("always on"), builtIn + ": " + row.getText());
    }
    WebElement stage = waitFor(By.id("setting-preempt-preempt_stage"));
    assertEquals("running", stage.getAttribute("value"));
    new org.openqa.selenium.support.ui.Select(stage).selectByValue("scheduled");
    waitUntil("scheduled stored", () -> "scheduled".equals(plugin("preempt").getJsonObject("extra")
        .getString("preempt_stage")));
    // saving redraws the table: select on the redrawn control, not on the one just replaced
    waitUntil("the page shows scheduled", () -> "scheduled".equals(waitFor(By.id("setting-preempt-preempt_stage"))
        .getAttribute("value")));
    waitUntil("running selected", () -> {
      new org.openqa.selenium.support.ui.Select(waitFor(By.id("setting-preempt-preempt_stage"))).selectByValue("running");
      return true;
    });
    waitUntil("running stored", () -> "running".equals(plugin("preempt").getJsonObject("extra")
        .getString("preempt_stage")));
    // the save just redrew the table: read the control the redraw left, not one it replaced
    waitUntil("frag's pressure_cards control with its schema's max 10",
        () -> "10".equals(waitFor(By.id("setting-frag-pressure_cards")).getAttribute("max")));
  }

  @Test
  void aWeightChangedInThePageIsPersisted() {
    openView("plugins");
    WebElement weight = waitFor(By.id("weight-topology"));
    weight.clear();
    weight.sendKeys("7");
    browser.driver.findElement(By.cssSelector("button[aria-label='Save weight of topology']")).click();
    waitUntil("weight 7 stored", () -> plugin("topology").getInteger("weight") == 7);
    waitUntil("the page shows 7", () -> "7".equals(waitFor(By.id("weight-topology")).getAttribute("value")));
    cp.get("/api/v1/scheduler/plugins");
  }

  @Test
  void theClusterGridShowsATaskJustPlaced() throws Exception {
    String id = cp.submit("{\"name\":\"long\",\"command\":[\"sleep\",\"60\"],\"gpu_required\":2,\"gpu_type\":\"nvidia\"}");
    JsonObject task = cp.awaitStatus(id, "running");
    openView("cluster");
    for (Object card : task.getJsonArray("gpus")) {
      String selector = "article[data-node='web-nv-1'] .card[data-index='" + card + "']";
      waitUntil("card " + card + " shown as whole-card",
          () -> "whole-card".equals(waitFor(By.cssSelector(selector)).getAttribute("data-state")));
    }
    assertEquals("free", browser.driver.findElement(By.cssSelector("article[data-node='web-asc-1'] .card[data-index='0']"))
        .getAttribute("data-state"));
    cp.json("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null, 202);
  }

  @Test
  void theQueueMarksATaskBeingPreemptedAndItsPreemptorsNomination() throws Exception {
    // the victim ignores SIGTERM, so it stays preempting for its 8 s grace while the page is read
    String victim = cp.submit("{\"name\":\"stubborn\",\"command\":[\"sh\",\"-c\",\"trap '' TERM; sleep 60\"],"
        + "\"gpu_required\":8,\"gpu_type\":\"ascend\",\"priority\":10,\"preemptible\":true,"
        + "\"termination_grace_seconds\":8}");
    cp.awaitStatus(victim, "running");
    String preemptor = cp.submit("{\"name\":\"urgent\",\"command\":[\"sleep\",\"1\"],\"gpu_required\":8,"
        + "\"gpu_type\":\"ascend\",\"priority\":90}");
    cp.awaitReason(preemptor, "PreemptionPending");
    openView("queue");
    waitUntil("the preemptor's nomination shown", () -> "web-asc-1".equals(waitFor(By.cssSelector(
        "tr[data-task='" + preemptor + "']")).getAttribute("data-nominated")));
    WebElement preempting = waitFor(By.cssSelector("table[aria-label='Preempting tasks'] tr[data-task='" + victim + "']"));
    assertEquals("preempting", preempting.getAttribute("data-state"));
    assertTrue(preempting.getText().contains("web-asc-1"), preempting.getText());
    cp.awaitStatus(preemptor, "succeeded");
    cp.json("POST", "/api/v1/tasks/" + victim + "/stop", ADMIN, null, 202);
    ControlPlaneHarness.eventually(Duration.ofSeconds(30), "the victim stopped for good",
        () -> "stopped".equals(cp.get("/api/v1/tasks/" + victim).getString("status")));
  }

  @Test
  void theQueueViewShowsQueuesAgainstTheirQuotaAndAGroupThatCannotBeCompleted() throws Exception {
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"web-team\",\"guaranteed\":2,\"max\":4}", 201);
    String group = cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"too-big\",\"members\":{\"template\":"
        + "{\"command\":[\"true\"],\"gpu_required\":8,\"gpu_type\":\"nvidia\"},\"count\":3}}", 201).getString("id");
    ControlPlaneHarness.eventually(Duration.ofSeconds(30), "the group waits with GangIncomplete",
        () -> cp.get("/api/v1/groups/" + group).getJsonObject("reason") != null);
    openView("queue");
    waitUntil("the queue's row", () -> waitFor(By.cssSelector("tr[data-queue='web-team']")).getText()
        .contains("root/web-team 0.0 2.0 4.0 0.0 0.0 0.0"));  // used, guaranteed, max, above it, borrowed, lent
    waitUntil("the waiting group's row", () -> waitFor(By.cssSelector("tr[data-group='" + group + "']")).getText()
        .contains("GangIncomplete: the group of 3 cannot be completed"));
    cp.json("POST", "/api/v1/groups/" + group + "/stop", ADMIN, null, 202);
    cp.json("DELETE", "/api/v1/queues/web-team", ADMIN, null, 200);
  }

  @Test
  void aPendingTaskShowsWhenItIsExpectedToStartOrWhyThatCannotBeKnown() throws Exception {
    // no node has 16 cards: the reservation plan says the start cannot be known, and why
    String id = cp.submit("{\"name\":\"no-room\",\"command\":[\"true\"],\"gpu_required\":16}");
    ControlPlaneHarness.eventually(Duration.ofSeconds(30), "the task's estimate note",
        () -> cp.get("/api/v1/tasks/" + id).getString("estimate_note") != null);
    openView("queue");
    waitUntil("the pending task's expected start", () -> {
      WebElement row = waitFor(By.cssSelector("table[aria-label='Pending tasks'] tr[data-task='" + id + "']"));
      return "note".equals(row.getAttribute("data-eta")) && row.getText().contains("cannot be known: the nodes that"
          + " could take it are too few");
    });
    cp.json("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null, 202);
  }

  @Test
  void theServicesViewShowsAServiceItsReplicasAndItsWindow() throws Exception {
    // a window open now (all days, from the last hour to two hours on, UTC): the service keeps its replica
    int hour = java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC).getHour();
    String from = String.format("%02d:00", (hour + 23) % 24);
    String to = String.format("%02d:00", (hour + 2) % 24);
    String id = cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"web-llm\",\"type\":\"inference\",\"replicas\":1,"
        + "\"template\":{\"command\":[\"sleep\",\"600\"],\"gpu_required\":0},\"windows\":{\"timezone\":\"UTC\","
        + "\"open\":[{\"days\":[\"mon\",\"tue\",\"wed\",\"thu\",\"fri\",\"sat\",\"sun\"],\"from\":\"" + from
        + "\",\"to\":\"" + to + "\"}],\"action\":\"pause\"}}", 201).getString("id");
    try {
      ControlPlaneHarness.eventually(Duration.ofSeconds(30), "the replica running", () -> cp.get("/api/v1/groups/" + id)
          .getJsonObject("replicas").getInteger("running") == 1);
      openView("services");
      waitUntil("the service's row", () -> {
        WebElement row = waitFor(By.cssSelector("table[aria-label='Services'] tr[data-service='" + id + "']"));
        String text = row.getText();
        return text.contains("web-llm") && text.contains("Running") && text.contains("1 / 1")
            && "open".equals(row.getAttribute("data-window")) && text.contains("open") && text.contains("next edge");
      });
      assertEquals("Running", browser.driver.findElement(By.cssSelector("tr[data-service='" + id + "']"))
          .getAttribute("data-status"));
      // the admin's service is the default tenant's
      ControlPlaneHarness.eventually(Duration.ofSeconds(20), "the service gauge", () -> {
        try {
          String metrics = cp.call("GET", "/metrics", null, null).body();
          return value(metrics, "heteroflow_service_replicas{service=\"web-llm\",state=\"desired\",tenant=\"default\"}") == 1
              && value(metrics, "heteroflow_service_replicas{service=\"web-llm\",state=\"running\",tenant=\"default\"}") == 1;
        } catch (Exception e) {
          return false;
        }
      });
    } finally {
      cp.json("POST", "/api/v1/groups/" + id + "/stop", ADMIN, null, 202);
    }
  }

  private static void useToken(String token) {
    browser.driver.get(base);
    WebElement field = waitFor(By.id("token"));
    field.sendKeys(token);
    browser.driver.findElement(By.cssSelector("#token-form button")).click();
  }

  private static int count(String selector) {
    return browser.driver.findElements(By.cssSelector(selector)).size();
  }

  @Test
  void aTenantTokenSeesNoAdminFormsAndTheAdminDoes() throws Exception {
    String tenant = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"viewer\"}", 201).getString("token");
    try {
      useToken(tenant);
      waitUntil("the page knows the tenant", () -> "tenant viewer".equals(waitFor(By.id("token-state")).getText()));
      openView("cluster");
      waitFor(By.cssSelector("article[data-node='web-nv-1'] .cards"));
      assertEquals(0, count(".location-form"), "no location form for a tenant");
      assertEquals(0, count(".node-actions button"), "no cordon / drain buttons for a tenant");
      waitUntil("the heartbeat as a relative time", () -> waitFor(By.cssSelector("article[data-node='web-nv-1'] time"))
          .getText().matches("\\d+ s ago"));
      waitUntil("the card models", () -> waitFor(By.cssSelector("article[data-node='web-asc-1'] .models")).getText()
          .contains("8 × 910B"));
      openView("plugins");
      waitFor(By.cssSelector("tr[data-plugin='binpack']"));
      assertEquals(0, count("#plugins button") + count("#plugins input") + count("#plugins select"),
          "no plugin switches, weights or settings for a tenant");
    } finally {
      useToken(ADMIN);
    }
    waitUntil("the page knows the admin", () -> "admin".equals(waitFor(By.id("token-state")).getText()));
    openView("cluster");
    waitFor(By.cssSelector("article[data-node='web-nv-1'] .location-form"));
    assertEquals(2, count(".location-form"));
    assertEquals(2, count(".node-actions button[data-action='cordon']"));
    openView("plugins");
    waitFor(By.cssSelector("tr[data-plugin='binpack'] button"));
  }

  @Test
  void aNodeCordonedInThePageIsCordonedForTheSchedulerAndMarked() throws Exception {
    openView("cluster");
    waitFor(By.cssSelector("button[aria-label='Cordon web-asc-1']")).click();
    waitUntil("the API says cordoned", () -> cp.get("/api/v1/nodes/web-asc-1").getBoolean("cordoned"));
    waitUntil("the page marks it", () -> "true".equals(
        waitFor(By.cssSelector("article[data-node='web-asc-1']")).getAttribute("data-cordoned")));
    waitUntil("the badge", () -> "cordoned".equals(
        waitFor(By.cssSelector("article[data-node='web-asc-1'] .badge.cordoned")).getText()));
    waitUntil("the other node unmarked", () -> "false".equals(
        waitFor(By.cssSelector("article[data-node='web-nv-1']")).getAttribute("data-cordoned")));
    waitFor(By.cssSelector("button[aria-label='Uncordon web-asc-1']")).click();
    waitUntil("uncordoned", () -> !cp.get("/api/v1/nodes/web-asc-1").getBoolean("cordoned"));
    waitUntil("the mark gone", () -> count("article[data-node='web-asc-1'] .badge.cordoned") == 0);
  }

  @Test
  void metricsCarryTheSchedulerSeriesAfterASmallWorkload() throws Exception {
    double bindsBefore = value(cp.call("GET", "/metrics", null, null).body(), "heteroflow_binds_total");
    for (int i = 0; i < 3; i++) {
      cp.run("{\"name\":\"m" + i + "\",\"command\":[\"true\"],\"gpu_required\":1,\"gpu_type\":\"ascend\"}");
    }
    String stuck = cp.submit("{\"name\":\"big\",\"command\":[\"true\"],\"gpu_required\":64,\"priority\":90}");
    cp.awaitReason(stuck, "InsufficientResources");
    ControlPlaneHarness.eventually(Duration.ofSeconds(20), "gauges refreshed", () -> {
      try {
        String metrics = cp.call("GET", "/metrics", null, null).body();
        return value(metrics, "heteroflow_tasks_pending{priority_band=\"high\",reason=\"InsufficientResources\"}") == 1
            && value(metrics, "heteroflow_cards{model=\"910B\",state=\"total\",vendor=\"ascend\"}") == 8;
      } catch (Exception e) {
        return false;
      }
    });
    String metrics = cp.call("GET", "/metrics", null, null).body();
    assertEquals(bindsBefore + 3, value(metrics, "heteroflow_binds_total"));
    assertTrue(value(metrics, "heteroflow_create_to_scheduled_seconds_count") >= 3);
    assertTrue(value(metrics, "heteroflow_scheduling_attempts_total{reason=\"InsufficientResources\",result=\"unschedulable\"}") >= 1);
    assertEquals(8, value(metrics, "heteroflow_fragmentation_largest_placeable_cards"), 4.0);
    assertTrue(metrics.contains("heteroflow_heartbeat_age_seconds{node=\"web-asc-1\"}"));
    assertTrue(value(metrics, "heteroflow_leader_term") >= 1);
    assertTrue(metrics.contains("vertx_eventbus_") && metrics.contains("address=\"heteroflow.node.heartbeat\""),
        "event-bus metrics with address labels");
    assertTrue(metrics.contains("vertx_http_server_requests_total{code=\"201\",method=\"POST\",route=\"/api/v1/>/tasks\"}"),
        "HTTP metrics with route labels (Vert.x writes a sub-router's routes as /api/v1/>/…)");
    cp.json("POST", "/api/v1/tasks/" + stuck + "/stop", ADMIN, null, 202);
  }

  private static double value(String metrics, String series) {
    Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(metrics);
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : Double.NaN;
  }
}
