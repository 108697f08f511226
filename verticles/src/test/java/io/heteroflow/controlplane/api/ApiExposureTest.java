package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.heteroflow.protocol.tls.CertAuthority;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the API listens and how long it waits for a slow client: bound to 127.0.0.1 it is not reachable on the
 * machine's other addresses (bound to 0.0.0.0 it is); a connection that sends half a request is closed after the
 * header-read timeout, while a complete request is answered; given a certificate it speaks HTTPS only.
 */
class ApiExposureTest {
  private static final ApiVerticle.Timeouts ONE_SECOND_HEADERS = new ApiVerticle.Timeouts(60_000, 1_000);
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  @Test
  void anApiBoundToLoopbackIsNotReachableOnAnotherLocalAddressButOneBoundToAllIs() throws Exception {
    InetAddress other = nonLoopbackAddress();
    assumeTrue(other != null, "this machine has no non-loopback IPv4 address");
    int loopbackOnly = started("127.0.0.1");
    assertTrue(answers(InetAddress.getLoopbackAddress(), loopbackOnly));
    assertThrows(ConnectException.class, () -> answers(other, loopbackOnly), "bound to 127.0.0.1 only");
    int everywhere = started("0.0.0.0");
    assertTrue(answers(other, everywhere), "bound to 0.0.0.0 answers on " + other);
  }

  @Test
  void aConnectionSendingHalfARequestIsClosedAfterTheHeaderTimeoutWhileAFullRequestIsAnswered() throws Exception {
    int port = started("127.0.0.1");
    try (Socket slow = new Socket(InetAddress.getLoopbackAddress(), port)) {
      slow.setSoTimeout(8_000);
      slow.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
      slow.getOutputStream().flush();
      long start = System.nanoTime();
      int read;
      try {
        read = slow.getInputStream().read();
      } catch (SocketTimeoutException e) {
        throw new AssertionError("the half request was not cut off within 8 s", e);
      } catch (IOException reset) {
        read = -1; // a reset is a close too
      }
      long waitedMs = (System.nanoTime() - start) / 1_000_000;
      assertEquals(-1, read, "the server closes the connection without answering");
      assertTrue(waitedMs >= 800 && waitedMs < 5_000, "closed after about 1 s, was " + waitedMs + " ms");
    }
    assertTrue(answers(InetAddress.getLoopbackAddress(), port), "a complete request is still answered");
  }

  @Test
  void withACertificateTheApiAnswersHttpsToAClientTrustingTheClusterCaAndRefusesPlainHttp(@TempDir Path dir)
      throws Exception {
    CertAuthority ca = CertAuthority.create("api", Duration.ofDays(1));
    ca.issue("control-plane", "member", List.of("127.0.0.1", "localhost"), Duration.ofDays(1)).save(dir, "api");
    ApiVerticle api = new ApiVerticle("127.0.0.1", 0, ONE_SECOND_HEADERS,
        new ApiVerticle.Tls(dir.resolve("api.pem").toString(), dir.resolve("api-key.pem").toString()));
    vertx.deployVerticle(api).await(10, TimeUnit.SECONDS);

    KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
    trusted.load(null, null);
    trusted.setCertificateEntry("cluster-ca", ca.certificate());
    TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(trusted);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, trust.getTrustManagers(), null);
    HttpClient https = HttpClient.newBuilder().sslContext(context).build();
    HttpResponse<String> live = https.send(HttpRequest.newBuilder(
        URI.create("https://127.0.0.1:" + api.actualPort() + "/health/live")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, live.statusCode(), live.body());
    assertThrows(IOException.class, () -> HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("https://127.0.0.1:" + api.actualPort() + "/health/live")).build(),
        HttpResponse.BodyHandlers.ofString()), "a client not trusting the cluster CA is refused");
    assertFalse(answers(InetAddress.getLoopbackAddress(), api.actualPort()), "no plain HTTP on the HTTPS port");
  }

  @Test
  void aRequestLineOver16KiBIsAnswered414WithAJsonError() throws Exception {
    int port = started("127.0.0.1");
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
      socket.setSoTimeout(5_000);
      socket.getOutputStream().write(("GET /api/v1/tasks/" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: x\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      assertTrue(response.matches("(?s)HTTP/1\\.[01] 414 .*"), response);
      assertTrue(response.endsWith("\"message\":\"the request line is longer than 16384 bytes\"}"), response);
    }
  }

  private int started(String host) throws Exception {
    ApiVerticle api = new ApiVerticle(host, 0, ONE_SECOND_HEADERS);
    vertx.deployVerticle(api).await(10, TimeUnit.SECONDS);
    return api.actualPort();
  }

  /** True when a full GET /health/live on address:port gets an HTTP 200. */
  private static boolean answers(InetAddress address, int port) throws IOException {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(address, port), 2_000);
      socket.setSoTimeout(5_000);
      socket.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
          .getBytes(StandardCharsets.US_ASCII));
      InputStream in = socket.getInputStream();
      try {
        return new String(in.readNBytes(12), StandardCharsets.US_ASCII).equals("HTTP/1.1 200");
      } catch (java.net.SocketException reset) {
        return false;
      }
    }
  }

  private static InetAddress nonLoopbackAddress() throws IOException {
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (!nic.isUp() || nic.isLoopback()) {
        continue;
      }
      for (InetAddress address : Collections.list(nic.getInetAddresses())) {
        if (address instanceof Inet4Address && !address.isLoopbackAddress()) {
          return address;
        }
      }
    }
    return null;
  }
}
