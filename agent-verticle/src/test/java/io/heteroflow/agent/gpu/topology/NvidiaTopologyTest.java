package io.heteroflow.agent.gpu.topology;

import static io.heteroflow.agent.gpu.RecordedHost.sample;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.RecordedHost;
import io.heteroflow.agent.gpu.ToolOutputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Real {@code nvidia-smi topo -m} matrices (samples/nvidia-topo, see ORIGIN.md) and the labels they give. */
class NvidiaTopologyTest {
  private static final String DIR = "nvidia-topo/";

  static Stream<Arguments> machines() {
    return Stream.of(
        // PCIe only: 8x RTX 4090, two sockets, NIC columns and rows, GPU NUMA ID (tabs)
        Arguments.of("go-gpuallocator-17_8x-rtx4090_pcie.txt", 8, "nvlink=;numa=0,0,0,0,1,1,1,1"),
        // PCIe only: 2x RTX 5090 behind one host bridge, legend (tabs)
        Arguments.of("club-3090-1229_2x-rtx5090_phb.txt", 2, "nvlink=;numa=0,0"),
        // PCIe only: 4 GPUs + 9 NICs, NIC rows with empty affinity cells, 2 NUMA nodes (tabs)
        Arguments.of("sglang-7783_4x_pcie.txt", 4, "nvlink=;numa=0,0,0,1"),
        // PCIe only: 8x A10G VM, old layout without GPU NUMA ID, NUMA Affinity is the range 0-1 (spaces)
        Arguments.of("nccl-1298_8x-a10g_phb.txt", 8, "nvlink=;numa=-,-,-,-,-,-,-,-"),
        // NVLink bridges: 4x RTX 3090 in pairs GPU0-GPU2 and GPU1-GPU3 (NV4), legend (spaces)
        Arguments.of("open-gpu-kernel-modules-pr18_4x-rtx3090_nv4-pairs.txt", 4, "nvlink=0-2,1-3;numa=0,0,0,0"),
        // NVSwitch: 8x H100 NV18, NIC columns, GPU NUMA ID (tabs)
        Arguments.of("nccl-1453_8x-h100_nv18.txt", 8, "nvlink=0-1-2-3-4-5-6-7;numa=0,0,0,0,1,1,1,1"),
        // NVSwitch: 8x H100 NV18, 10 NICs, NIC rows padded with empty cells (tabs)
        Arguments.of("nccl-1264_8x-h100_nv18.txt", 8, "nvlink=0-1-2-3-4-5-6-7;numa=0,0,0,0,1,1,1,1"),
        // NVLink full mesh: 4x H100 NV6, one NUMA node per GPU, CPU affinity as a list (spaces)
        Arguments.of("nccl-1617_4x-h100_nv6.txt", 4, "nvlink=0-1-2-3;numa=3,1,7,5"),
        // NVLink pair: 2 GPUs NV12 with empty CPU and NUMA affinity (spaces)
        Arguments.of("vllm-19607_2x-nv12_no-affinity.txt", 2, "nvlink=0-1;numa=-,-"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("machines")
  void readsRealMatrices(String file, int gpus, String expected) throws ToolOutputException {
    String label = NvidiaTopology.label(sample(DIR + file), gpus);
    assertEquals(expected, label);
    assertControlPlaneReads(label, gpus);
  }

  @ParameterizedTest(name = "{0} with tabs expanded to spaces")
  @MethodSource("machines")
  void readsTheSameMatrixWhenTabsBecameSpaces(String file, int gpus, String expected) throws ToolOutputException {
    assertEquals(expected, NvidiaTopology.label(expandTabs(sample(DIR + file)), gpus));
  }

  @Test
  void stripsAnsiEscapes() throws ToolOutputException {
    String plain = sample(DIR + "nccl-1453_8x-h100_nv18.txt");
    String colored = "\u001B[1m" + plain.replace("NV18", "\u001B[32mNV18\u001B[0m")
        .replace("GPU0", "\u001B[1;4mGPU0\u001B[0m").replace("SYS", "\u001B[31mSYS\u001B[m") + "\u001B[0m";
    assertEquals(NvidiaTopology.label(plain, 8), NvidiaTopology.label(colored, 8));
  }

  static Stream<Arguments> unreadable() {
    String h100 = sample(DIR + "nccl-1453_8x-h100_nv18.txt");
    String[] lines = h100.split("\n");
    return Stream.of(
        Arguments.of("empty output", "", 8),
        Arguments.of("driver error", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
            + " Make sure that the latest NVIDIA driver is installed and running.\n", 8),
        Arguments.of("header only", lines[0] + "\n", 8),
        Arguments.of("GPU7 row missing", String.join("\n", Arrays.copyOf(lines, 8)), 8),
        Arguments.of("row cut short", h100.replace("\tPIX\t0-79\t0\t\tN/A", ""), 8),
        Arguments.of("unknown cell token", h100.replaceFirst("NV18", "NVX"), 8),
        Arguments.of("self cell not X", h100.replaceFirst("\t X \t", "\tNV18\t"), 8),
        Arguments.of("fewer GPUs detected than listed", h100, 4),
        Arguments.of("real paste cut in the GPU7 row (nccl#933)", sample(DIR + "nccl-933_8x-a800-nv8_truncated.txt"), 8),
        Arguments.of("real paste with lost tabs (vllm#13855)", sample(DIR + "vllm-13855_8x-h100_damaged-paste.txt"), 8),
        Arguments.of("merged NUMA columns", expandTabs(h100).replaceAll(" 0 +N/A", " 0N/A"), 8),
        Arguments.of("huge GPU index", h100.replace("GPU7\tNV18", "GPU99999999999\tNV18"), 8));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadable")
  void rejectsUnreadableOutput(String what, String output, int gpus) {
    ToolOutputException e = assertThrows(ToolOutputException.class, () -> NvidiaTopology.label(output, gpus));
    assertTrue(e.getMessage().startsWith("nvidia-smi topo -m: "), e.getMessage());
  }

  @Test
  void detectRunsTheToolAndIsEmptyWithoutIt() throws ToolOutputException {
    RecordedHost host = new RecordedHost()
        .command("nvidia-smi topo -m", sample(DIR + "open-gpu-kernel-modules-pr18_4x-rtx3090_nv4-pairs.txt"));
    assertEquals(Optional.of("nvlink=0-2,1-3;numa=0,0,0,0"), NvidiaTopology.detect(host, 4));
    assertEquals(List.of("nvidia-smi topo -m"), host.ran());
    assertEquals(Optional.empty(), NvidiaTopology.detect(new RecordedHost(), 4));
  }

  /**
   * The label as the control plane documents it: {@code nvlink=} dash-joined groups (unioned into domains),
   * {@code numa=} one entry per card ({@code -} unknown). Also checks the agent emits the canonical form.
   */
  private static void assertControlPlaneReads(String label, int cards) {
    assertTrue(label.matches("nvlink=(\\d+(-\\d+)+(,\\d+(-\\d+)+)*)?;numa=(\\d+|-)(,(\\d+|-))*"), label);
    String[] parts = label.split(";");
    String groups = parts[0].substring("nvlink=".length());
    String[] numa = parts[1].substring("numa=".length()).split(",");
    assertEquals(cards, numa.length, label);
    List<TreeSet<Integer>> domains = new ArrayList<>();
    for (String group : groups.isEmpty() ? new String[0] : groups.split(",")) {
      TreeSet<Integer> domain = new TreeSet<>();
      for (String card : group.split("-")) {
        int c = Integer.parseInt(card);
        assertTrue(c >= 0 && c < cards, label);
        domain.add(c);
      }
      assertEquals(group.split("-").length, domain.size(), "no repeated card in " + group);
      for (TreeSet<Integer> other : domains) {
        assertTrue(other.stream().noneMatch(domain::contains), "groups are disjoint components: " + label);
        assertTrue(other.first() < domain.first(), "groups ordered by first card: " + label);
      }
      domains.add(domain);
    }
  }

  /** What a terminal or a web page does to the tool's tabs: columns padded to the next multiple of 8. */
  private static String expandTabs(String text) {
    StringBuilder out = new StringBuilder();
    int column = 0;
    for (char c : text.toCharArray()) {
      if (c == '\t') {
        do {
          out.append(' ');
          column++;
        } while (column % 8 != 0);
      } else {
        out.append(c);
        column = c == '\n' ? 0 : column + 1;
      }
    }
    return out.toString();
  }
}
