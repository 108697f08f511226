package io.heteroflow.agent.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.GpuVendor;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The docker command line per vendor (docker itself does not run here). */
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
  void aCpuOnlyTaskGetsNoDevicesAndAnImageIsRequired() {
    RunSpec cpu = new RunSpec("t-2", "busybox", List.of("true"), Map.of(), 60, GpuVendor.NVIDIA, List.of());
    assertEquals(List.of("docker", "run", "--rm", "--name", "heteroflow-t-2", "--stop-timeout", "10", "--network",
        "host", "busybox", "true"), docker.runCommand(cpu));
    RunSpec noImage = new RunSpec("t-3", null, List.of("true"), Map.of(), 60, GpuVendor.NVIDIA, List.of(0));
    assertThrows(IllegalArgumentException.class, () -> docker.runCommand(noImage));
  }
}
