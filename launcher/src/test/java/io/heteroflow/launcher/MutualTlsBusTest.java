package io.heteroflow.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.hazelcast.core.HazelcastInstance;
import io.heteroflow.protocol.tls.PeerIdentity;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real clustered Vert.x instances (Hazelcast, conf/cluster.xml, a cluster name of this run's own) joined by
 * {@link Cluster#join} as server and agent join: members with certificates of the cluster CA exchange bus messages;
 * one with a certificate of another CA, or with none, shares the Hazelcast cluster view but cannot exchange a single
 * bus message in either direction, and the consumer it was meant for never sees it.
 */
class MutualTlsBusTest {
  /** A request that must fail waits this long; one that must succeed up to {@link #ANSWER_TIMEOUT_MS}. */
  static final long REFUSED_TIMEOUT_MS = 1_500;
  static final long ANSWER_TIMEOUT_MS = 10_000;
  private final String cluster = "heteroflow-tls-" + UUID.randomUUID();
  private final List<Vertx> members = new ArrayList<>();

  @BeforeAll
  static void quiet() {
    Main.quietHazelcast();
  }

  @AfterEach
  void close() throws Exception {
    Collections.reverse(members);
    for (Vertx member : members) {
      member.close().await(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void membersOfTheClusterCaTalkAndAMemberOfAnotherCaCannotSendOrReceive(@TempDir Path ours, @TempDir Path theirs)
      throws Exception {
    CertsCommand.init(ours, false);
    CertsCommand.issue(ours, "cp-1", PeerIdentity.MEMBER, List.of("127.0.0.1"), Duration.ofDays(1), false);
    CertsCommand.issue(ours, "gpu-1", PeerIdentity.AGENT, List.of("127.0.0.1"), Duration.ofDays(1), false);
    CertsCommand.init(theirs, false);
    CertsCommand.issue(theirs, "intruder", PeerIdentity.MEMBER, List.of("127.0.0.1"), Duration.ofDays(1), false);

    Vertx controlPlane = join(ours, "cp-1", false);
    Vertx agent = join(ours, "gpu-1", true);
    Vertx intruder = join(theirs, "intruder", false);
    assertEquals(3, hazelcast(controlPlane).getCluster().getMembers().size(), "the intruder is in Hazelcast's view");
    List<String> atControlPlane = consumer(controlPlane, "test.control-plane");
    List<String> atAgent = consumer(agent, "test.agent");
    List<String> atIntruder = consumer(intruder, "test.intruder");

    assertEquals("ok", request(agent, "test.control-plane", "from agent"));
    assertEquals("ok", request(controlPlane, "test.agent", "from control plane"));

    assertRefused(intruder, "test.control-plane", "from intruder");
    assertRefused(intruder, "test.agent", "from intruder");
    assertRefused(controlPlane, "test.intruder", "to intruder");
    assertRefused(agent, "test.intruder", "to intruder");
    Thread.sleep(1_000); // nothing arrives late either
    assertEquals(List.of("from agent"), atControlPlane);
    assertEquals(List.of("from control plane"), atAgent);
    assertEquals(List.of(), atIntruder);
  }

  @Test
  void aMemberWithoutCertificatesCannotSendOrReceiveAndAMemberListensOnTheClusterHostOnly(@TempDir Path ours)
      throws Exception {
    CertsCommand.init(ours, false);
    CertsCommand.issue(ours, "cp-1", PeerIdentity.MEMBER, List.of(), Duration.ofDays(1), false);
    Vertx controlPlane = join(ours, "cp-1", false);
    Vertx plain = join(null, null, false);
    List<String> atControlPlane = consumer(controlPlane, "test.control-plane");
    List<String> atPlain = consumer(plain, "test.plain");

    assertRefused(plain, "test.control-plane", "from plain");
    assertRefused(controlPlane, "test.plain", "to plain");
    Thread.sleep(1_000);
    assertEquals(List.of(), atControlPlane);
    assertEquals(List.of(), atPlain);

    // Hazelcast and the bus answer on 127.0.0.1 (--cluster-host) and on no other address of this host
    Optional<InetAddress> other = otherAddress();
    assumeTrue(other.isPresent(), "this host has no non-loopback address");
    int hazelcastPort = hazelcast(controlPlane).getCluster().getLocalMember().getAddress().getPort();
    int busPort = ((VertxInternal) controlPlane).clusterManager().getNodeInfo().port();
    for (int port : new int[] {hazelcastPort, busPort}) {
      assertTrue(connects(InetAddress.getLoopbackAddress(), port), "listens on loopback: " + port);
      assertFalse(connects(other.get(), port), "does not listen on " + other.get() + ":" + port);
    }
  }

  private Vertx join(Path certsDir, String name, boolean lite) throws Exception {
    Cluster.Options options = new Cluster.Options();
    options.host = "127.0.0.1";
    options.name = cluster;
    options.certsDir = certsDir == null ? null : certsDir.toString();
    options.memberName = name;
    Vertx vertx = Cluster.join(options, lite, null);
    members.add(vertx);
    return vertx;
  }

  /** The bodies {@code address} received on {@code vertx}, once its registration is known cluster-wide. */
  private static List<String> consumer(Vertx vertx, String address) throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    vertx.eventBus().<String>consumer(address, message -> {
      seen.add(message.body());
      message.reply("ok");
    }).completion().await(10, TimeUnit.SECONDS);
    return seen;
  }

  private static String request(Vertx from, String address, String body) throws Exception {
    return request(from, address, body, ANSWER_TIMEOUT_MS);
  }

  /** A request that must fail: no answer (or a failure) within {@link #REFUSED_TIMEOUT_MS}. */
  private static void assertRefused(Vertx from, String address, String body) {
    assertThrows(Exception.class, () -> request(from, address, body, REFUSED_TIMEOUT_MS), body + " → " + address);
  }

  private static String request(Vertx from, String address, String body, long timeoutMs) throws Exception {
    return from.eventBus().<String>request(address, body, new DeliveryOptions().setSendTimeout(timeoutMs))
        .await(timeoutMs + 5_000, TimeUnit.MILLISECONDS).body();
  }

  private static HazelcastInstance hazelcast(Vertx vertx) {
    return ((HazelcastClusterManager) ((VertxInternal) vertx).clusterManager()).getHazelcastInstance();
  }

  private static Optional<InetAddress> otherAddress() throws IOException {
    return NetworkInterface.networkInterfaces().filter(nic -> {
      try {
        return nic.isUp() && !nic.isLoopback();
      } catch (IOException e) {
        return false;
      }
    }).flatMap(NetworkInterface::inetAddresses).filter(Inet4Address.class::isInstance).findFirst();
  }

  private static boolean connects(InetAddress address, int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(address, port), 1_000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
