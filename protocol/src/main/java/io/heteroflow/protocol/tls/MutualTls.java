package io.heteroflow.protocol.tls;

import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.TCPSSLOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;

/**
 * Mutual TLS with the certificates of one process, read from a certificates directory: {@code DIR/ca.pem} (the
 * cluster CA, the only one trusted), {@code DIR/NAME.pem} (this process's certificate) and {@code DIR/NAME-key.pem}
 * (its PKCS#8 key), as {@code heteroflow certs} writes them. Both sides present a certificate and each must be signed
 * by the CA ({@link ClientAuth#REQUIRED}); a peer without one, or with one of another CA, fails the handshake.
 * Host names are not checked (Vert.x's clustered bus does not): a peer is who the CA says, not where it is.
 */
public final class MutualTls {
  /** The cluster CA's certificate in a certificates directory. */
  public static final String CA_FILE = "ca.pem";
  /** The cluster CA's key: only where certificates are issued ({@code certs init}), never needed to run. */
  public static final String CA_KEY_FILE = "ca-key.pem";

  private final Path ca;
  private final Path certificate;
  private final Path key;

  private MutualTls(Path ca, Path certificate, Path key) {
    this.ca = ca;
    this.certificate = certificate;
    this.key = key;
  }

  /**
   * The TLS of {@code name} from {@code dir}, checked now: every file present and readable PEM, the certificate
   * signed by the CA. The message of an {@link IllegalArgumentException} names the missing or bad file.
   */
  public static MutualTls fromDirectory(Path dir, String name) {
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException("no such directory " + dir.toAbsolutePath().normalize());
    }
    Path ca = dir.resolve(CA_FILE);
    Path certificate = dir.resolve(name + ".pem");
    Path key = dir.resolve(name + "-key.pem");
    for (Path file : new Path[] {ca, certificate, key}) {
      if (!Files.isReadable(file)) {
        throw new IllegalArgumentException("no readable " + file.toAbsolutePath().normalize()
            + " (heteroflow certs init / issue write it)");
      }
    }
    try {
      var authority = PemFiles.certificates(Files.readString(ca)).get(0);
      var leaf = PemFiles.certificates(Files.readString(certificate)).get(0);
      leaf.verify(authority.getPublicKey());
      leaf.checkValidity();
      if (!Files.readString(key).contains("PRIVATE KEY-----")) {
        throw new IllegalArgumentException(key.toAbsolutePath().normalize() + " holds no PEM private key");
      }
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(certificate.toAbsolutePath().normalize() + " is not a valid certificate of "
          + ca.toAbsolutePath().normalize() + ": " + e.getMessage(), e);
    }
    return new MutualTls(ca, certificate, key);
  }

  /** The clustered event bus's TCP connections (server and client side both) under mutual TLS. */
  public EventBusOptions onEventBus(EventBusOptions options) {
    apply(options);
    return options.setClientAuth(ClientAuth.REQUIRED);
  }

  /** A TLS server that admits only clients with a certificate of the CA (e.g. an agent bridge). */
  public NetServerOptions onServer(NetServerOptions options) {
    apply(options);
    return options.setClientAuth(ClientAuth.REQUIRED);
  }

  /**
   * A TLS client presenting this certificate and trusting only servers with one of the CA. Host names are not checked,
   * as on the bus: the caller checks the server's role ({@link PeerIdentity}) once connected.
   */
  public NetClientOptions onClient(NetClientOptions options) {
    apply(options);
    return options.setHostnameVerificationAlgorithm("");
  }

  public Path certificateFile() {
    return certificate;
  }

  private void apply(TCPSSLOptions options) {
    options.setSsl(true)
        .setKeyCertOptions(new PemKeyCertOptions().setCertPath(certificate.toString()).setKeyPath(key.toString()))
        .setTrustOptions(new PemTrustOptions().addCertPath(ca.toString()));
  }
}
