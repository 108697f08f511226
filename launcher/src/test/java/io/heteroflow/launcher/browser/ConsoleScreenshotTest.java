package io.heteroflow.launcher.browser;

import static io.heteroflow.testsupport.ControlPlaneHarness.ADMIN;
import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.simulated.FleetFile;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.testsupport.ControlPlaneHarness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Writes README's screenshot of the cluster view (docs/console-cluster.png) from what {@code dev} runs: the
 * fleet of conf/fleet-dev.yaml, a few tasks placed, one node cordoned, one draining, one whose agent stopped
 * (offline). Runs only when asked:
 * {@code ./mvnw -B -q -pl launcher -am test -Dtest=ConsoleScreenshotTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dheteroflow.screenshot=$PWD/docs/console-cluster.png}.
 */
class ConsoleScreenshotTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  void writeTheClusterScreenshot() throws Exception {
    String target = System.getProperty("heteroflow.screenshot");
    assumeTrue(target != null, "writes docs/console-cluster.png only when -Dheteroflow.screenshot=FILE is given");
    assumeTrue(Browser.available(), "no Chromium on this machine");
    List<SimulatedNode> fleet = FleetFile.read(Path.of("../conf/fleet-dev.yaml"));
    SimulatedNode stopping = fleet.get(fleet.size() - 1);
    try (ControlPlaneHarness cp = new ControlPlaneHarness().agents(fleet.subList(0, fleet.size() - 1)).start();
         Browser browser = Browser.start()) {
      String agent = await(cp.vertx.deployVerticle(new AgentVerticle(stopping,
          new ProcessExecutor(cp.vertx, Files.createTempDirectory("heteroflow-shot-"), 4, Duration.ofSeconds(2)), 300)));
      eventually(WAIT, "the whole fleet", () -> cp.get("/api/v1/nodes").getInteger("count") == fleet.size());
      cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"research\"}", 201);
      await(cp.vertx.undeploy(agent)); // its heartbeats stop: offline after the grace period
      cp.awaitStatus(cp.submit("{\"name\":\"train-llm\",\"command\":[\"sleep\",\"600\"],\"gpu_required\":4,"
          + "\"gpu_model\":[\"H100-SXM5-80GB\"]}"), "running");
      cp.awaitStatus(cp.submit("{\"name\":\"notebook\",\"command\":[\"sleep\",\"600\"],\"gpu_memory_mb\":8000,"
          + "\"gpu_type\":\"nvidia\",\"gpu_model\":[\"A100-SXM4-40GB\"]}"), "running");
      cp.awaitStatus(cp.submit("{\"name\":\"npu-job\",\"command\":[\"sleep\",\"600\"],\"gpu_required\":2,"
          + "\"gpu_type\":\"ascend\"}"), "running");
      cp.awaitStatus(cp.submit("{\"name\":\"render\",\"command\":[\"sleep\",\"600\"],\"gpu_required\":1,"
          + "\"gpu_model\":[\"L40S\"]}"), "running");
      cp.json("POST", "/api/v1/nodes/nv-l40s-01/drain?wait=true", ADMIN, null, 200);
      cp.json("POST", "/api/v1/nodes/nv-h100-02/cordon", ADMIN, null, 200);
      eventually(WAIT, stopping.id() + " offline",
          () -> "offline".equals(cp.get("/api/v1/nodes/" + stopping.id()).getString("status")));

      String base = "http://127.0.0.1:" + cp.running.httpPort() + "/";
      browser.driver.get(base);
      browser.driver.findElement(By.id("token")).sendKeys(ADMIN);
      browser.driver.findElement(By.cssSelector("#token-form button")).click();
      browser.driver.get(base + "#cluster");
      browser.driver.navigate().refresh();
      new WebDriverWait(browser.driver, Duration.ofSeconds(15))
          .until(driver -> !driver.findElements(By.cssSelector("article[data-node='nv-l40s-01'][data-draining='true']")).isEmpty());
      browser.driver.manage().window().setSize(new Dimension(1440, 900));
      long height = (Long) browser.driver.executeScript("return document.querySelector('main').scrollHeight");
      browser.driver.manage().window().setSize(new Dimension(1440, (int) height + 160));
      Thread.sleep(500); // one layout after the resize
      Files.write(Path.of(target), browser.driver.getScreenshotAs(OutputType.BYTES));
    }
  }
}
