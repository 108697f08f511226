package io.heteroflow.controlplane.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The master port range of conf/config.yaml: its defaults, and the ranges refused by name. */
class MasterPortRangeConfigTest {
  private static SchedulerConfig parse(Map<String, Object> scheduler) {
    return SchedulerConfig.parse(Map.of("scheduler", scheduler), "test.yaml");
  }

  @Test
  void thePackagedDefaultsAnd29500To29999WithoutTheKeys() {
    SchedulerConfig packaged = SchedulerConfig.defaults();
    assertEquals(29500, packaged.masterPortRangeStart());
    assertEquals(29999, packaged.masterPortRangeEnd());
    SchedulerConfig bare = parse(Map.of());
    assertEquals(29500, bare.masterPortRangeStart());
    assertEquals(29999, bare.masterPortRangeEnd());
    SchedulerConfig set = parse(Map.of("master_port_range_start", 40000, "master_port_range_end", 40009));
    assertEquals(40000, set.masterPortRangeStart());
    assertEquals(40009, set.masterPortRangeEnd());
  }

  @Test
  void badRangesAreRefusedByName() {
    for (Map<String, Object> bad : java.util.List.<Map<String, Object>>of(
        Map.of("master_port_range_start", 0), Map.of("master_port_range_end", 70000),
        Map.of("master_port_range_start", 30000, "master_port_range_end", 29999))) {
      IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> parse(bad));
      assertTrue(refused.getMessage().contains("master_port_range_start..master_port_range_end"), refused.getMessage());
    }
    IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class,
        () -> parse(Map.of("master_port_range_start", 8500, "master_port_range_end", 9500)));
    assertTrue(overlap.getMessage().contains("must not overlap port_range_start..port_range_end"), overlap.getMessage());
    IllegalArgumentException text = assertThrows(IllegalArgumentException.class,
        () -> parse(Map.of("master_port_range_start", "29500")));
    assertEquals("test.yaml: master_port_range_start must be a number", text.getMessage());
  }
}
