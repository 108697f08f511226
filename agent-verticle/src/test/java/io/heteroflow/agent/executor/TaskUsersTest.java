package io.heteroflow.agent.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The tenant → uid mapping: stable across agent restarts (kept in the data dir), distinct per tenant even when
 * names hash alike, refused when the range is full or malformed; containers run as the tenant's uid and gid.
 */
class TaskUsersTest {
  @Test
  void eachTenantGetsItsOwnUidFromTheRangeKeptAcrossRestartsUntilTheRangeIsFull() throws Exception {
    Path data = Files.createTempDirectory("task-users");
    TaskUsers users = TaskUsers.of("30000-30001", data);
    int alice = users.mappedUid("alice");
    int bob = users.mappedUid("bob");
    assertNotEquals(alice, bob, "a collision in a range of two moves to the free uid");
    assertEquals(List.of(30000, 30001), List.of(Math.min(alice, bob), Math.max(alice, bob)));
    assertEquals(alice, users.mappedUid("alice"));
    IOException full = assertThrows(IOException.class, () -> users.mappedUid("carol"));
    assertTrue(full.getMessage().contains("no free task uid"), full.getMessage());

    TaskUsers restarted = TaskUsers.of("30000-30001", data);
    assertEquals(alice, restarted.mappedUid("alice"));
    assertEquals(bob, restarted.mappedUid("bob"));
    TaskUsers wide = TaskUsers.of("30000-30999", Files.createTempDirectory("task-users"));
    assertEquals(wide.mappedUid(TaskUsers.DEFAULT_TENANT), wide.mappedUid(null), "no tenant is the default tenant");
  }

  @Test
  void aMalformedRangeIsRefusedNamingTheOption() {
    for (String range : List.of("20000", "abc-def", "29999-20000", "0-99")) {
      IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
          () -> TaskUsers.of(range, Path.of("/nonexistent")));
      assertTrue(refused.getMessage().startsWith("--task-uids"), refused.getMessage());
    }
  }

  @Test
  void aContainerRunsAsItsTenantsUidAndGidNeverRoot() throws Exception {
    Vertx vertx = Vertx.vertx();
    Path data = Files.createTempDirectory("task-users-docker");
    TaskUsers users = TaskUsers.of("40000-40999", data);
    try (AutoCloseable closing = vertx::close) {
      DockerExecutor docker = new DockerExecutor(new ProcessExecutor(vertx, data, 1, Duration.ofSeconds(1), users,
          ProcessExecutor.DEFAULT_LOG_CAP_BYTES), "docker", 10);
      List<String> line = docker.runCommand(new RunSpec("t-1", "busybox", List.of("id"), Map.of(), 60, null,
          List.of(), null, null, "alice"));
      int at = line.indexOf("--user");
      assertTrue(at > 0 && at < line.indexOf("busybox"), line.toString());
      int uid = users.mappedUid("alice");
      assertEquals(uid + ":" + uid, line.get(at + 1));
      assertEquals(1, Collections.frequency(line, "--user"));
      List<String> plain = new DockerExecutor(new ProcessExecutor(vertx, data, 1, Duration.ofSeconds(1)), "docker", 10)
          .runCommand(new RunSpec("t-2", "busybox", List.of("id"), Map.of(), 60, null, List.of()));
      assertEquals(-1, plain.indexOf("--user"), "without a uid range the image's own user");
      assertNull(TaskUsers.none().mappedUid("alice"));
    }
  }
}
