package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.message.Heartbeat;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.Fragmentation;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * PostgreSQL's card counts (the gauges' and the fragmentation view's source) agree with the scheduler's own
 * reading of the same nodes: whole-card and shard use, a card too full to take a whole-card task, an offline
 * node, a node without cards, two models on one node.
 */
class CardCountsTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(4);

  private static void node(String id, String vendor, List<String> models, long fullCardMemoryUsedMb) throws Exception {
    JsonArray cards = new JsonArray();
    for (int i = 0; i < models.size(); i++) {
      cards.add(new JsonObject().put("index", i).put("model", models.get(i)).put("memory_total_mb", 65536)
          .put("memory_used_mb", i == 0 ? fullCardMemoryUsedMb : 0).put("utilization_percent", 0)
          .put("temperature_c", 40));
    }
    await(store.nodes.applyHeartbeat(Heartbeat.fromJson(new JsonObject().put("node_id", id).put("boot_id", "b1").put("seq", 1)
        .put("gpu_vendor", vendor).put("cpu_cores", 64).put("cpu_percent", 5.0).put("memory_total_gb", 512.0)
        .put("memory_used_mb", 1024).put("cards", cards))));
  }

  @Test
  void countsAgreeWithTheSchedulersViewOfTheSameNodes() throws Exception {
    node("cc-mixed", "nvidia", List.of("A100", "A100", "H100", "H100"), 63000); // card 0 at 96 %: not free
    node("cc-asc", "ascend", List.of("910B", "910B"), 0);
    node("cc-off", "nvidia", List.of("A100", "A100"), 0);
    node("cc-empty", "nvidia", List.of(), 0);
    store.query("UPDATE nodes SET status = 'offline' WHERE id = 'cc-off'");
    TaskRecord whole = store.task(1);
    TaskRecord shardA = store.task(0);
    TaskRecord shardB = store.task(0);
    BatchBindStore.Result bound = await(store.batchBinds.bind(List.of(
        new BindStore.Request(whole.id(), "cc-mixed", List.of(2), null),
        new BindStore.Request(shardA.id(), "cc-asc", List.of(), new ShardAssignment(1, 8000, 10, "mps")),
        new BindStore.Request(shardB.id(), "cc-asc", List.of(), new ShardAssignment(1, 4000, 10, "mps"))), null));
    assertTrue(bound.outcomes().stream().allMatch(BindStore.Outcome::bound));

    List<CardCounts> counts = await(store.nodes.cardCounts());
    List<NodeInfo> nodes = await(store.nodes.snapshotNodes());
    assertEquals(Fragmentation.of(nodes.stream().map(node -> new Fragmentation.NodeCards(
        Fragmentation.schedulable(node.status()), node.gpuTotal(), node.freeCardCount(List.of()))).toList()),
        CardCounts.fragmentation(counts), "the scheduler's own free-card count, node by node");

    Map<String, int[]> expected = new HashMap<>();
    Map<String, int[]> actual = new HashMap<>();
    long expectedShardMemory = 0;
    for (NodeInfo node : nodes) {
      for (CardInfo card : node.cards()) {
        int[] totalUsedFree = expected.computeIfAbsent(node.id() + "/" + card.model(), key -> new int[3]);
        totalUsedFree[0]++;
        totalUsedFree[1] += node.use(card.index()).isEmpty() ? 0 : 1;
        totalUsedFree[2] += node.cardIsFree(card) ? 1 : 0;
        expectedShardMemory += node.use(card.index()).shardMemoryMb();
      }
    }
    long shardMemory = 0;
    for (CardCounts row : counts) {
      if (row.total() > 0) {
        actual.put(row.nodeId() + "/" + row.model(), new int[] {row.total(), row.used(), row.free()});
      }
      shardMemory += row.shardMemoryMb();
    }
    assertEquals(expected.keySet(), actual.keySet());
    expected.forEach((key, values) -> assertEquals(List.of(values[0], values[1], values[2]),
        List.of(actual.get(key)[0], actual.get(key)[1], actual.get(key)[2]), key));
    assertEquals(12000, expectedShardMemory);
    assertEquals(expectedShardMemory, shardMemory);
    assertEquals(List.of(1, 0, 1), List.of(actual.get("cc-mixed/A100")[0] - 1, actual.get("cc-mixed/A100")[1],
        actual.get("cc-mixed/A100")[2]), "the 96 % card is neither used nor free");
    assertTrue(counts.stream().anyMatch(row -> row.nodeId().equals("cc-empty") && row.total() == 0));

    List<CardCounts> paged = new java.util.ArrayList<>();
    String after = "";
    for (List<CardCounts> page = await(store.nodes.cardCounts(after, 1)); !page.isEmpty();
         page = await(store.nodes.cardCounts(after, 1))) {
      assertEquals(1, page.stream().map(CardCounts::nodeId).distinct().count(), "one node per page of one");
      paged.addAll(page);
      after = page.get(page.size() - 1).nodeId();
    }
    assertEquals(new java.util.HashSet<>(counts), new java.util.HashSet<>(paged), "pages add up to the whole");
    assertEquals(counts.size(), paged.size());
  }
}
