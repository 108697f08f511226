package io.heteroflow.protocol.message;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.GpuVendor;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A Run's {@code distributed} part: its wire form, absent for a single task, and every field checked. */
class RunDistributedTest {
  private static final UUID TASK = UUID.randomUUID();
  private static final UUID GROUP = UUID.randomUUID();

  private static JsonObject distributed() {
    return new JsonObject().put("group_id", GROUP.toString()).put("world_size", 4).put("rank", 3)
        .put("master_addr", "10.0.1.5").put("master_port", 29500).put("backend", "hccl");
  }

  @Test
  void aGroupMembersRunRoundTrips() {
    Run run = new Run(TASK, 2, 0, "w3", null, List.of("python3", "train.py"), Map.of(), List.of(0, 1), null, null,
        29501, 600, 10, null, new Run.Distributed(GROUP, 4, 3, "10.0.1.5", 29500, "hccl"));
    JsonObject json = run.toJson();
    assertEquals(distributed(), json.getJsonObject("distributed"));
    assertEquals(run, Run.fromJson(json));
  }

  @Test
  void aSingleTaskHasNone() {
    assertNull(Run.fromJson(new JsonObject().put("task_id", TASK.toString())).distributed(), "absent");
    assertNull(Run.fromJson(new JsonObject().put("task_id", TASK.toString()).putNull("distributed")).distributed());
    Run single = Run.fromJson(new JsonObject().put("task_id", TASK.toString()));
    assertTrue(single.toJson().containsKey("distributed"));
    assertNull(single.toJson().getValue("distributed"));
  }

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource(delimiter = '|', value = {
      "group_id    | \"not-a-group\" | distributed.group_id: not an id",
      "world_size  | 0               | distributed.world_size: 1 or more",
      "world_size  | 1.5             | distributed.world_size: an integer is required",
      "rank        | 4               | distributed.rank: between 0 and world_size - 1 (3)",
      "rank        | -1              | distributed.rank: between 0 and world_size - 1",
      "master_addr | \"\"            | distributed.master_addr: an address without blanks",
      "master_addr | \" 10.0.1.5\"   | distributed.master_addr: an address without blanks",
      "master_addr | 7               | distributed.master_addr: a string is required",
      "master_port | 0               | distributed.master_port: a port between 1 and 65535",
      "master_port | 65536           | distributed.master_port: a port between 1 and 65535",
      "backend     | \"  \"          | distributed.backend: a backend name",
      "backend     | null            | distributed.backend: required"})
  void aBadFieldIsABadRequestNamingIt(String field, String value, String expected) {
    JsonObject bad = distributed();
    bad.put(field, new JsonObject("{\"x\":" + value + "}").getValue("x"));
    JsonObject json = new JsonObject().put("task_id", TASK.toString()).put("distributed", bad);
    ReplyException refused = assertThrows(ReplyException.class, () -> Run.fromJson(json));
    assertEquals(FailureCode.BAD_REQUEST, FailureCode.of(refused));
    assertTrue(refused.getMessage().startsWith(expected), refused.getMessage());
  }

  @Test
  void theRecordRefusesWhatTheWireRefuses() {
    assertThrows(IllegalArgumentException.class, () -> new Run.Distributed(GROUP, 2, 2, "10.0.1.5", 29500, "nccl"));
    assertThrows(IllegalArgumentException.class, () -> new Run.Distributed(GROUP, 2, 0, "10.0.1.5", 0, "nccl"));
    assertThrows(IllegalArgumentException.class, () -> new Run.Distributed(GROUP, 2, 0, " ", 29500, "nccl"));
    assertThrows(IllegalArgumentException.class, () -> new Run.Distributed(GROUP, 2, 0, "10.0.1.5", 29500, ""));
    assertThrows(NullPointerException.class, () -> new Run.Distributed(null, 2, 0, "10.0.1.5", 29500, "nccl"));
  }

  @Test
  void everyVendorNamesItsCollectiveBackend() {
    Map<GpuVendor, String> expected = Map.of(GpuVendor.NVIDIA, "nccl", GpuVendor.HYGON, "nccl",
        GpuVendor.ASCEND, "hccl", GpuVendor.CAMBRICON, "cncl", GpuVendor.MUSA, "mccl", GpuVendor.ENFLAME, "eccl",
        GpuVendor.ILUVATAR, "nccl", GpuVendor.BIREN, "bccl", GpuVendor.KUNLUN, "nccl", GpuVendor.METAX, "nccl");
    assertEquals(GpuVendor.values().length, expected.size());
    expected.forEach((vendor, backend) -> assertEquals(backend, vendor.collectiveBackend(), vendor.name()));
    assertEquals("gloo", GpuVendor.CROSS_DOMAIN_BACKEND);
  }
}
