package io.heteroflow.agent.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.GpuVendor;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The docker command line per vendor (docker itself does not run here); the environment the container and the
 * CLI get; and, with a stand-in {@code docker} script run as a real process, that a timeout stops the
 * container ({@code docker stop}) and the CLI never holds the agent's secrets.
 */
class DockerExecutorTest {
  private static Vertx vertx;
  private static DockerExecutor docker;

  @BeforeAll
  static void start() throws Exception {
    vertx = Vertx.vertx();
    docker = new DockerExecutor(new ProcessExecutor(vertx, Files.createTempDirectory("docker-test"), 2,
        Duration.ofSeconds(1)), "docker", 10);
  }

  @AfterAll
  static void stop() {
    docker.close();
    vertx.close();
  }

  static Stream<Arguments> devices() {
    return Stream.of(
        Arguments.of(GpuVendor.NVIDIA, "--gpus \"device=2,3\"", "CUDA_VISIBLE_DEVICES=0,1"),
        Arguments.of(GpuVendor.ASCEND, "--device /dev/davinci2 --device /dev/davinci3 --device /dev/davinci_manager"
            + " --device /dev/devmm_svm --device /dev/hisi_hdc", "ASCEND_RT_VISIBLE_DEVICES=2,3"),
        Arguments.of(GpuVendor.MUSA, "--env MTHREADS_VISIBLE_DEVICES=2,3 --device /dev/dri", "MUSA_VISIBLE_DEVICES=2,3"),
        Arguments.of(GpuVendor.HYGON, "--device /dev/kfd --device /dev/dri --volume /opt/hyhal:/opt/hyhal:ro",
            "HIP_VISIBLE_DEVICES=2,3"),
        Arguments.of(GpuVendor.CAMBRICON, "--device /dev/cambricon_dev2 --device /dev/cambricon_ipcm2"
            + " --device /dev/cambricon_dev3 --device /dev/cambricon_ipcm3 --device /dev/cambricon_ctl --device /dev/commu",
            "MLU_VISIBLE_DEVICES=2,3"),
        Arguments.of(GpuVendor.BIREN, "--device /dev/biren/card_2 --device /dev/biren/card_3", "SUPA_VISIBLE_DEVICES=2,3"),
        Arguments.of(GpuVendor.KUNLUN, "--device /dev/xpu2 --device /dev/xpu3 --device /dev/xpuctrl",
            "XPU_VISIBLE_DEVICES=2,3"),
        Arguments.of(GpuVendor.ILUVATAR, "--device /dev/iluvatar2 --device /dev/iluvatar3 --device /dev/itrctl",
            "CUDA_VISIBLE_DEVICES=2,3"),
        Arguments.of(GpuVendor.METAX, "--device /dev/dri --device /dev/mxcd", "CUDA_VISIBLE_DEVICES=2,3"),
        Arguments.of(GpuVendor.ENFLAME, "--device /dev/gcu2 --device /dev/gcu3 --device /dev/gcuctl",
            "TOPS_VISIBLE_DEVICES=2,3"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("devices")
  void eachVendorGetsItsDeviceFlagsAndVisibility(GpuVendor vendor, String flags, String visible) {
    RunSpec spec = new RunSpec("t-1", "registry.local/train:1", List.of("python", "train.py"),
        Map.of(vendor.visibilityVariable(), "2,3", "RANK", "0"), 60, vendor, List.of(2, 3));
    String command = String.join(" ", docker.runCommand(spec));
    assertTrue(command.startsWith("docker run --rm --name heteroflow-t-1 --stop-timeout 10 --network host "),
        command);
    assertTrue(command.contains(" " + flags + " "), command);
    assertTrue(command.contains(" --env " + visible + " "), command);
    assertTrue(command.contains(" --env RANK=0 "), command);
    assertTrue(command.endsWith(" registry.local/train:1 python train.py"), command);
  }

  @Test
  void theContainerGetsExactlyTheExplicitVariablesAndNoHostOne() {
    Map<String, String> env = Map.of("CUDA_VISIBLE_DEVICES", "2,3", "RANK", "0", "GREETING", "hi there");
    List<String> command = docker.runCommand(new RunSpec("t-4", "busybox", List.of("env"), env, 60, GpuVendor.NVIDIA,
        List.of(2, 3)));
    Map<String, String> passed = new java.util.TreeMap<>();
    for (int i = 0; i < command.size(); i++) {
      if (command.get(i).equals("--env") || command.get(i).equals("-e") || command.get(i).startsWith("--env-file")) {
        String pair = command.get(++i);
        assertTrue(pair.contains("="), "--env " + pair + " would copy the host's variable into the container");
        passed.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
      }
    }
    assertEquals(Map.of("CUDA_VISIBLE_DEVICES", "0,1", "RANK", "0", "GREETING", "hi there"), passed);
    for (String secret : List.of("HETEROFLOW_ADMIN_TOKEN", "HETEROFLOW_PG_URL")) {
      assertTrue(command.stream().noneMatch(arg -> arg.contains(secret) || arg.contains(System.getenv(secret))));
    }
  }

  @Test
  void theCliGetsTheAllowListHomeAndDockerSettingsOnly() {
    Map<String, String> host = Map.of("PATH", "/usr/bin", "LANG", "C.UTF-8", "HOME", "/home/agent",
        "DOCKER_HOST", "unix:///run/docker.sock", "DOCKER_CONFIG", "/etc/agent/docker",
        "HETEROFLOW_ADMIN_TOKEN", "secret", "HETEROFLOW_PG_URL", "postgresql://u:p@db/hf", "AWS_SECRET_ACCESS_KEY", "x");
    assertEquals(Map.of("PATH", "/usr/bin", "LANG", "C.UTF-8", "HOME", "/home/agent",
        "DOCKER_HOST", "unix:///run/docker.sock", "DOCKER_CONFIG", "/etc/agent/docker"),
        DockerExecutor.clientEnvironment(host));
  }

  /**
   * A stand-in for the docker CLI: {@code run} prints its environment and then, like a container that ignores
   * SIGTERM, keeps running; {@code stop} records its arguments.
   */
  private static Path fakeDocker(Path dir) throws Exception {
    Path script = dir.resolve("docker");
    Files.writeString(script, "#!/bin/sh\n"
        + "if [ \"$1\" = stop ]; then echo \"$@\" >> " + dir.resolve("stops") + "; exit 0; fi\n"
        + "env; echo ready; trap '' TERM; while true; do sleep 0.1; done\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    return script;
  }

  @Test
  void aTimeoutStopsTheContainerAndTheCliNeverSeesTheAgentsSecrets() throws Exception {
    Path dir = Files.createTempDirectory("fake-docker");
    DockerExecutor fake = new DockerExecutor(new ProcessExecutor(vertx, dir.resolve("logs"), 2,
        Duration.ofSeconds(1)), fakeDocker(dir).toString(), 7);
    try {
      ExitReport report = fake.start(new RunSpec("t-late", "busybox", List.of("sleep", "300"), Map.of("RANK", "0"),
          1, GpuVendor.NVIDIA, List.of())).await(30, TimeUnit.SECONDS);
      assertEquals("TimedOut", report.reasonCode());
      assertEquals("stop --time 7 heteroflow-t-late\n", Files.readString(dir.resolve("stops")),
          "the timeout stopped the container, not only the CLI");
      Map<String, String> cli = new java.util.TreeMap<>();
      report.logTail().lines().filter(line -> line.contains("="))
          .forEach(line -> cli.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1)));
      cli.remove("PWD"); // the stand-in's sh sets it itself
      assertEquals(DockerExecutor.clientEnvironment(System.getenv()), cli);
      for (String secret : List.of("HETEROFLOW_ADMIN_TOKEN", "HETEROFLOW_PG_URL")) {
        assertTrue(System.getenv(secret) != null, secret + " is set for this JVM (surefire)");
        assertFalse(report.logTail().contains(System.getenv(secret)), secret + " reached the docker CLI");
      }
    } finally {
      fake.close();
    }
  }

  @Test
  void aCpuOnlyTaskGetsNoDevicesAndAnImageIsRequired() {
    RunSpec cpu = new RunSpec("t-2", "busybox", List.of("true"), Map.of(), 60, GpuVendor.NVIDIA, List.of());
    assertEquals(List.of("docker", "run", "--rm", "--name", "heteroflow-t-2", "--stop-timeout", "10", "--network",
        "host", "busybox", "true"), docker.runCommand(cpu));
    RunSpec noImage = new RunSpec("t-3", null, List.of("true"), Map.of(), 60, GpuVendor.NVIDIA, List.of(0));
    assertThrows(IllegalArgumentException.class, () -> docker.runCommand(noImage));
  }
}
