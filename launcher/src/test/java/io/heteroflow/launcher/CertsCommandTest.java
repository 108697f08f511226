package io.heteroflow.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.launcher.CommandLineTest.Run;
import io.heteroflow.protocol.tls.MutualTls;
import io.heteroflow.protocol.tls.PeerIdentity;
import io.heteroflow.protocol.tls.PemFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code heteroflow certs init | issue} as typed: the files, their modes and contents, and errors naming the flag. */
class CertsCommandTest {
  @Test
  void initThenIssueWritesACaAndALeafItSignsWithNameRoleAndHostsAndPrivateKeys(@TempDir Path parent) throws Exception {
    Path dir = parent.resolve("certs");
    Run init = Run.of("certs", "init", "--dir", dir.toString());
    assertEquals(0, init.status(), init.err());
    Run issue = Run.of("certs", "issue", "--dir", dir.toString(), "--name", "gpu-07", "--role", "agent",
        "--san", "10.0.0.7,gpu-07.lan", "--days", "30");
    assertEquals(0, issue.status(), issue.err());

    assertEquals("rwx------", mode(dir));
    assertEquals("rw-------", mode(dir.resolve("ca-key.pem")));
    assertEquals("rw-------", mode(dir.resolve("gpu-07-key.pem")));
    X509Certificate ca = certificate(dir.resolve("ca.pem"));
    X509Certificate leaf = certificate(dir.resolve("gpu-07.pem"));
    leaf.verify(ca.getPublicKey());
    leaf.checkValidity();
    assertEquals(new PeerIdentity("gpu-07", PeerIdentity.AGENT), PeerIdentity.of(List.of(leaf)).orElseThrow());
    assertEquals(List.of("10.0.0.7", "gpu-07.lan"),
        leaf.getSubjectAlternativeNames().stream().map(san -> String.valueOf(san.get(1))).toList());
    long days = (leaf.getNotAfter().getTime() - leaf.getNotBefore().getTime()) / 86_400_000L;
    assertTrue(days == 30, "--days 30, was " + days);
    MutualTls.fromDirectory(dir, "gpu-07"); // what --certs-dir reads
  }

  @Test
  void aMemberCertificateNamesItsRole(@TempDir Path dir) throws Exception {
    assertEquals(0, Run.of("certs", "init", "--dir", dir.toString()).status());
    Run issue = Run.of("certs", "issue", "--dir", dir.toString(), "--name", "cp-1", "--role", "member");
    assertEquals(0, issue.status(), issue.err());
    assertEquals(new PeerIdentity("cp-1", PeerIdentity.MEMBER),
        PeerIdentity.of(List.of(certificate(dir.resolve("cp-1.pem")))).orElseThrow());
  }

  @Test
  void issuingWithoutACaNamesDirAndTellsHowToCreateOne(@TempDir Path dir) {
    Run run = Run.of("certs", "issue", "--dir", dir.toString(), "--name", "cp-1", "--role", "member");
    assertEquals(Cli.FAILED, run.status());
    assertTrue(run.err().contains("--dir: no CA in") && run.err().contains("certs init"), run.err());
    assertFalse(Files.exists(dir.resolve("cp-1.pem")), "nothing written");
  }

  @Test
  void badValuesAreUsageErrorsNamingTheFlagAndWriteNothing(@TempDir Path dir) throws Exception {
    assertEquals(0, Run.of("certs", "init", "--dir", dir.toString()).status());
    List<List<String>> cases = List.of(
        List.of("--role", "--name x --role admin"),
        List.of("--name", "--name ../evil --role member"),
        List.of("--name", "--name ca --role member"),
        List.of("--san", "--name x --role member --san 10.0.0.1,bad/host"),
        List.of("--days", "--name x --role member --days 0"),
        List.of("--role", "--name x"));
    for (List<String> c : cases) {
      List<String> args = new java.util.ArrayList<>(List.of("certs", "issue", "--dir", dir.toString()));
      args.addAll(List.of(c.get(1).split(" ")));
      Run run = Run.of(args.toArray(String[]::new));
      assertEquals(Cli.USAGE, run.status(), c + ": " + run.err());
      assertTrue(run.err().contains(c.get(0)), c + " names " + c.get(0) + ": " + run.err());
    }
    try (var files = Files.list(dir)) {
      assertEquals(List.of("ca-key.pem", "ca.pem"), files.map(f -> f.getFileName().toString()).sorted().toList());
    }
  }

  @Test
  void nothingExistingIsReplacedWithoutForce(@TempDir Path dir) throws Exception {
    assertEquals(0, Run.of("certs", "init", "--dir", dir.toString()).status());
    assertEquals(0, Run.of("certs", "issue", "--dir", dir.toString(), "--name", "cp-1", "--role", "member").status());
    String ca = Files.readString(dir.resolve("ca.pem"));
    String leaf = Files.readString(dir.resolve("cp-1.pem"));

    Run again = Run.of("certs", "init", "--dir", dir.toString());
    assertEquals(Cli.FAILED, again.status());
    assertTrue(again.err().contains("already holds a CA") && again.err().contains("--force"), again.err());
    Run reissue = Run.of("certs", "issue", "--dir", dir.toString(), "--name", "cp-1", "--role", "member");
    assertEquals(Cli.FAILED, reissue.status());
    assertTrue(reissue.err().contains("already exists") && reissue.err().contains("--force"), reissue.err());
    assertEquals(ca, Files.readString(dir.resolve("ca.pem")));
    assertEquals(leaf, Files.readString(dir.resolve("cp-1.pem")));

    assertEquals(0, Run.of("certs", "issue", "--dir", dir.toString(), "--name", "cp-1", "--role", "member",
        "--force").status());
    assertFalse(leaf.equals(Files.readString(dir.resolve("cp-1.pem"))), "--force replaces it");
  }

  @Test
  void devMakesItsCertificatesOnceAndKeepsThem(@TempDir Path dir) throws Exception {
    Path certs = CertsCommand.ensureDev(dir.resolve("certs"));
    MutualTls.fromDirectory(certs, CertsCommand.DEV_MEMBER);
    MutualTls.fromDirectory(certs, CertsCommand.DEV_AGENT);
    String member = Files.readString(certs.resolve(CertsCommand.DEV_MEMBER + ".pem"));
    CertsCommand.ensureDev(certs);
    assertEquals(member, Files.readString(certs.resolve(CertsCommand.DEV_MEMBER + ".pem")), "kept across starts");
  }

  private static String mode(Path path) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
  }

  private static X509Certificate certificate(Path pem) throws Exception {
    return PemFiles.certificates(Files.readString(pem)).get(0);
  }
}
