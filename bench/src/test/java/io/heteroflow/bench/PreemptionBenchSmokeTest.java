package io.heteroflow.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code bench --scenario preempt} on 20 full nodes and 10 preemptors against the test PostgreSQL: correctness,
 * not timing. Every preemptor is bound, every plan has exactly the minimal set (a node full of one-card jobs: as
 * many victims as cards asked for), and no invariant breaks, the allocation history's included.
 */
class PreemptionBenchSmokeTest {
  @Test
  @Timeout(120)
  void aTinyBurstOnAFullFleetBindsEveryPreemptorWithMinimalPlans() throws Exception {
    BenchRunner.Options options = new BenchRunner.Options(0.3, 60, 12, 10, 42, false, null, 0, 0, 0);
    JsonObject result = new PreemptionBench(20, 10, options, System.err).run(TestPostgres.freshDatabase());
    assertTrue(result.getJsonArray("violations").isEmpty(), result.encodePrettily());
    assertEquals(0L, result.getLong("plans_over_minimal"), result.encodePrettily());
    assertEquals(0L, result.getLong("plans_under_minimal"), result.encodePrettily());
    assertEquals(10L, result.getLong("preemptors_that_planned"), result.encodePrettily());
    assertEquals(result.getLong("victims"), result.getLong("preempting_transitions"));
    assertEquals(result.getLong("victims"), result.getLong("victims_back_in_queue"), "every victim back in the queue");
    assertTrue(result.getDouble("all_preemptors_bound_seconds") > 0);
  }
}
