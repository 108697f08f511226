package io.heteroflow.launcher.browser;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Real headless Chromium driven by Selenium, with the driver path given explicitly and Selenium Manager kept
 * offline (NOTES-toolchain.md). In CI (env CI set) a missing browser is a failure; on a developer machine
 * without Chromium the browser tests are skipped with that reason.
 */
final class Browser implements AutoCloseable {
  static final String CHROMIUM = "/usr/bin/chromium";
  static final String DRIVER = "/usr/bin/chromedriver";
  final ChromeDriver driver;
  private final Path profile;

  private Browser(ChromeDriver driver, Path profile) {
    this.driver = driver;
    this.profile = profile;
  }

  static boolean available() {
    return new File(CHROMIUM).canExecute() && new File(DRIVER).canExecute();
  }

  static boolean requiredHere() {
    return System.getenv("CI") != null;
  }

  static Browser start() throws IOException {
    System.setProperty("SE_OFFLINE", "true");
    System.setProperty("SE_AVOID_STATS", "true");
    Path profile = Files.createTempDirectory("heteroflow-chromium-");
    ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM).addArguments("--headless=new", "--no-sandbox",
        "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--window-size=1280,800", "--user-data-dir=" + profile);
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(DRIVER))
        .usingAnyFreePort().build();
    ChromeDriver driver = new ChromeDriver(service, options);
    driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(10));
    return new Browser(driver, profile);
  }

  @Override
  public void close() throws IOException {
    driver.quit();
    try (Stream<Path> files = Files.walk(profile)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }
}
