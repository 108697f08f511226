package io.heteroflow.protocol.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SignatureException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertAuthorityTest {
  @Test
  void aLeafIsSignedByItsCaNamesItsHolderAndRoleAndCarriesItsHosts(@TempDir Path dir) throws Exception {
    CertAuthority agents = CertAuthority.create("agents", Duration.ofDays(3650));
    agents.save(dir, "agents-ca");
    CertAuthority loaded = CertAuthority.load(dir, "agents-ca");
    CertAuthority.Issued issued = loaded.issue("gpu-node-17", PeerIdentity.AGENT, List.of("10.0.0.17", "gpu17.lan"),
        Duration.ofDays(365));
    issued.save(dir, "gpu-node-17");

    X509Certificate leaf = PemFiles.certificates(Files.readString(dir.resolve("gpu-node-17.pem"))).get(0);
    leaf.verify(agents.certificate().getPublicKey());
    leaf.checkValidity();
    assertEquals(new PeerIdentity("gpu-node-17", "agent"), PeerIdentity.of(List.of(leaf)).orElseThrow());
    assertTrue(leaf.getSubjectAlternativeNames().stream().anyMatch(san -> san.get(1).equals("10.0.0.17")));
    assertTrue(leaf.getSubjectAlternativeNames().stream().anyMatch(san -> san.get(1).equals("gpu17.lan")));
    assertEquals(-1, leaf.getBasicConstraints(), "a leaf is no CA");
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("gpu-node-17-key.pem"))));
    assertTrue(Files.readString(dir.resolve("gpu-node-17-key.pem")).startsWith("-----BEGIN PRIVATE KEY-----"));
    assertTrue(agents.certificate().getBasicConstraints() >= 0, "the CA may sign");
  }

  @Test
  void anotherCasLeafDoesNotVerify() throws Exception {
    CertAuthority members = CertAuthority.create("members", Duration.ofDays(1));
    CertAuthority agents = CertAuthority.create("agents", Duration.ofDays(1));
    X509Certificate leaf = PemFiles.certificates(agents.issue("n1", PeerIdentity.AGENT, List.of(), Duration.ofDays(1))
        .certificatePem()).get(0);
    assertThrows(SignatureException.class, () -> leaf.verify(members.certificate().getPublicKey()));
  }

  @Test
  void aLeafNeverOutlivesItsCa() throws Exception {
    CertAuthority ca = CertAuthority.create("members", Duration.ofDays(2));
    X509Certificate leaf = PemFiles.certificates(ca.issue("cp-1", PeerIdentity.MEMBER, List.of("127.0.0.1"),
        Duration.ofDays(365)).certificatePem()).get(0);
    assertTrue(!leaf.getNotAfter().after(ca.certificate().getNotAfter()));
  }
}
