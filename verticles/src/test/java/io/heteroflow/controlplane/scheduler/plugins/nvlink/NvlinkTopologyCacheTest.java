package io.heteroflow.controlplane.scheduler.plugins.nvlink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The parsed-topology cache stays at 4,096 entries however many distinct labels arrive, dropping the least used. */
class NvlinkTopologyCacheTest {
  @Test
  void theCacheKeepsAtMost4096LabelsAndDropsTheLeastRecentlyUsed() {
    String kept = "nvlink=0-1;numa=0,0";
    NvlinkTopology.parse(kept, 2);
    for (int i = 0; i < NvlinkTopology.CACHE_CAPACITY + 500; i++) {
      NvlinkTopology.parse("nvlink=0-1;numa=0,0;x=" + i, 2);
      NvlinkTopology.parse(kept, 2); // used again each time: the most recent
    }
    assertEquals(NvlinkTopology.CACHE_CAPACITY, NvlinkTopology.CACHE.size());
    assertTrue(NvlinkTopology.CACHE.contains(kept + "#2"), "the label in use stays cached");
    assertFalse(NvlinkTopology.CACHE.contains("nvlink=0-1;numa=0,0;x=0#2"), "the oldest unused label is dropped");
    assertEquals(1, NvlinkTopology.parse(kept, 2).domains().size(), "a cached label still parses the same");
  }
}
