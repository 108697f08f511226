package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.nvlink.NvlinkPlugin;
import io.heteroflow.controlplane.scheduler.plugins.nvlink.NvlinkTopology;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** nvlink (SPEC §4.2) on GPU-topology fixtures: PCIe-only, NVLink pairs, NVSwitch, NUMA. */
class NvlinkPluginTest {
  private static final NvlinkPlugin NVLINK = new NvlinkPlugin();
  static final String PCIE_4 = "nvlink=;numa=0,0,1,1";
  static final String PAIRS_4 = "nvlink=0-1,2-3;numa=0,0,1,1";
  static final String NVSWITCH_8 = "nvlink=0-1-2-3-4-5-6-7;numa=0,0,0,0,1,1,1,1";
  /** Two domains of different size: {0,1} and {2..7}, NUMA split 0-3 / 4-7. */
  static final String MIXED_8 = "nvlink=0-1,2-3,3-4,4-5,5-6,6-7;numa=0,0,0,0,1,1,1,1";

  static Stream<Arguments> scores() {
    return Stream.of(
        // name, node, cards wanted, expected score, expected cards
        Arguments.of("no data is neutral", node("n").cards(4, "A100").build(), 2, 50, List.of(0, 1)),
        Arguments.of("PCIe only is neutral", node("n").cards(4, "A100").topology(PCIE_4).build(), 2, 50,
            List.of(0, 1)),
        Arguments.of("a pair exactly, all free, same NUMA: 50+30+40+15 clamps to 100",
            node("n").cards(4, "A100").topology(PAIRS_4).build(), 2, 100, List.of(0, 1)),
        Arguments.of("one card of a free pair: 50+40+15 clamps to 100",
            node("n").cards(4, "A100").topology(PAIRS_4).build(), 1, 100, List.of(0)),
        Arguments.of("forced across pairs: -20, across NUMA -10, clamps to 0",
            node("n").cards(4, "A100").topology(PAIRS_4).busyCards(1, 3).build(), 2, 0, List.of(0, 2)),
        Arguments.of("4 of a free NVSwitch domain, same NUMA: 50+40+15",
            node("n").topology(NVSWITCH_8).build(), 4, 100, List.of(0, 1, 2, 3)),
        Arguments.of("4 of a busy NVSwitch domain: 50+15",
            node("n").topology(NVSWITCH_8).busyCards(0).build(), 4, 65, List.of(4, 5, 6, 7)),
        Arguments.of("6 cards span NUMA: 50+40-10",
            node("n").topology(NVSWITCH_8).build(), 6, 80, List.of(0, 1, 2, 3, 4, 5)),
        Arguments.of("the smallest sufficient domain is taken, big one kept whole",
            node("n").topology(MIXED_8).build(), 2, 100, List.of(0, 1)),
        Arguments.of("three cards only fit the big domain, from its NUMA node with room: 50+40+15",
            node("n").topology(MIXED_8).build(), 3, 100, List.of(4, 5, 6)),
        Arguments.of("three cards of a busy big domain: 50+15",
            node("n").topology(MIXED_8).busyCards(7).build(), 3, 65, List.of(4, 5, 6)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scores")
  void scoresTheBestGroupAndPicksIt(String name, NodeInfo node, int cards, int score, List<Integer> picked) {
    TaskRequest task = task().gpus(cards).build();
    assertEquals(score, NVLINK.score(task, node, new CycleState()), name);
    assertEquals(picked, NVLINK.pickCards(task, node, new CycleState()), name);
  }

  @Test
  void sameNumaCardsFirstInsideTheDomain() {
    NodeInfo node = node("n").topology(NVSWITCH_8).busyCards(0, 1).build();
    assertEquals(List.of(4, 5, 6, 7), NVLINK.pickCards(task().gpus(4).build(), node, new CycleState()),
        "NUMA 1 has four free cards, NUMA 0 only two");
    assertEquals(List.of(2, 3), NVLINK.pickCards(task().gpus(2).build(), node, new CycleState()), "the tighter NUMA group");
  }

  @Test
  void requiredNvlinkFiltersPcieOnlyButNotMissingData() {
    TaskRequest required = task().gpus(2).label("nvlink", "required").build();
    Snapshot snapshot = new Snapshot(List.of());
    Status pcie = NVLINK.filter(required, node("pcie").cards(4, "L40S").topology(PCIE_4).build(), snapshot, new CycleState());
    assertEquals("NVLinkDomainUnavailable", pcie.code().name());
    assertTrue(NVLINK.filter(required, node("unknown").cards(4, "A100").build(), snapshot, new CycleState()).isOk(),
        "no data passes: the bind-time checks are the safety net");
    assertTrue(NVLINK.filter(required, node("pairs").cards(4, "A100").topology(PAIRS_4).build(), snapshot, new CycleState()).isOk());
    Status brokenPairs = NVLINK.filter(required, node("pairs").cards(4, "A100").topology(PAIRS_4).busyCards(0, 2)
        .build(), snapshot, new CycleState());
    assertEquals("NVLinkDomainUnavailable", brokenPairs.code().name());
    assertTrue(NVLINK.filter(task().gpus(2).build(), node("pcie").cards(4, "L40S").topology(PCIE_4).build(), snapshot, new CycleState())
        .isOk(), "without the label nothing is filtered");
  }

  @Test
  void unionFindJoinsChainsOfPairsIntoOneDomain() {
    NvlinkTopology topology = NvlinkTopology.parse("nvlink=0-1,1-2,4-5;numa=0,0,0,1,1,1", 6);
    assertEquals(List.of(List.of(0, 1, 2), List.of(3), List.of(4, 5)),
        topology.domains().stream().map(List::copyOf).toList());
    assertEquals(1, topology.numa().get(4));
    assertEquals(null, NvlinkTopology.parse("nvlink=0-9", 4), "an out-of-range card makes the label unreadable");
  }
}
