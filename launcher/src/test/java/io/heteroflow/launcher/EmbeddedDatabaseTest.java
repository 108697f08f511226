package io.heteroflow.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded PostgreSQL of {@code dev} and {@code postgres} (a real one): the superuser logs in with the
 * password in {@code DATA/pg-password} (0600) only, the file is reused by the next start on the same data
 * directory, and pg_hba.conf trusts no one.
 */
class EmbeddedDatabaseTest {
  @Test
  void onlyThePasswordInTheOwnerOnlyFileLetsTheSuperuserInAndARestartReusesIt(@TempDir Path root) throws Exception {
    Path file = root.resolve("pg-password");
    String password;
    try (EmbeddedDatabase db = EmbeddedDatabase.start(root)) {
      assertEquals(file, db.passwordFile());
      assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
      password = Files.readString(file).strip();
      assertEquals(32, password.length(), "128 random bits in hex: " + password);
      assertEquals(password, db.database().options().getPassword(), "dev connects with it");
      assertRefusedWithout(db, password);
      try (Connection connection = connect(db, password)) {
        connection.createStatement().execute("CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)");
      }
      assertTrue(PgAuth.passwordsOnly(Files.readAllLines(root.resolve("pg/pg_hba.conf"))), hba(root));
      assertFalse(hba(root).lines().anyMatch(line -> !line.startsWith("#") && line.contains("trust")), hba(root));
      assertFalse(hba(root).contains("Written by HeteroFlow"), "initdb itself wrote scram-sha-256: " + hba(root));
      assertEquals("postgresql://postgres@localhost:" + db.database().options().getPort() + "/postgres", db.url());
    }

    try (EmbeddedDatabase again = EmbeddedDatabase.start(root)) {
      assertEquals(password, Files.readString(file).strip(), "the same data dir keeps its password");
      assertEquals(password, again.database().options().getPassword());
      assertRefusedWithout(again, password);
      try (Connection connection = connect(again, password);
           ResultSet rows = connection.createStatement().executeQuery("SELECT x FROM kept")) {
        assertTrue(rows.next());
        assertEquals(7, rows.getInt(1), "the data survived the restart");
      }
    }
  }

  @Test
  void aNewDataDirectoryGetsItsOwnPassword(@TempDir Path parent) throws Exception {
    String first;
    try (EmbeddedDatabase db = EmbeddedDatabase.start(parent.resolve("a"))) {
      first = db.database().options().getPassword();
    }
    try (EmbeddedDatabase db = EmbeddedDatabase.start(parent.resolve("b"))) {
      assertNotEquals(first, db.database().options().getPassword());
    }
  }

  @Test
  void aDataDirectoryFromBeforePasswordsIsGivenOneAndStopsTrusting(@TempDir Path root) throws Exception {
    try (EmbeddedPostgres trusting = EmbeddedPostgres.builder().setDataDirectory(root.resolve("pg"))
        .setCleanDataDirectory(false).start();
         Connection connection = trusting.getPostgresDatabase().getConnection()) {
      connection.createStatement().execute("CREATE TABLE kept (x int)"); // no password: trust, as before
    }
    assertTrue(hba(root).contains("trust"), "zonky's own initdb trusts: " + hba(root));

    try (EmbeddedDatabase db = EmbeddedDatabase.start(root)) {
      Path file = root.resolve("pg-password");
      assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
      String password = Files.readString(file).strip();
      assertRefusedWithout(db, password);
      try (Connection connection = connect(db, password)) {
        connection.createStatement().executeQuery("SELECT count(*) FROM kept").close();
      }
      assertTrue(PgAuth.passwordsOnly(Files.readAllLines(root.resolve("pg/pg_hba.conf"))), hba(root));
      assertTrue(hba(root).contains("Written by HeteroFlow"), "the trusting pg_hba.conf replaced: " + hba(root));
    }
  }

  @Test
  void aPasswordFileOthersCanReadIsRefusedNamingIt(@TempDir Path root) throws Exception {
    try (EmbeddedDatabase db = EmbeddedDatabase.start(root)) {
      assertTrue(Files.exists(db.passwordFile()));
    }
    Path file = root.resolve("pg-password");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    Cli.Refusal refused = assertThrows(Cli.Refusal.class, () -> EmbeddedDatabase.start(root).close());
    assertTrue(refused.getMessage().contains(file.toString()) && refused.getMessage().contains("chmod 600"),
        refused.getMessage());
  }

  @Test
  void hbaRulesOtherThanScramAreNotPasswordsOnly() {
    assertTrue(PgAuth.passwordsOnly(PgAuth.HBA_RULES));
    assertTrue(PgAuth.passwordsOnly(List.of("# local all all trust", "host all all 10.0.0.0/8 scram-sha-256",
        "host all all 0.0.0.0/0 reject")));
    assertFalse(PgAuth.passwordsOnly(List.of("local all all trust")));
    assertFalse(PgAuth.passwordsOnly(List.of("local all all scram-sha-256", "host all all 127.0.0.1/32 trust")));
    assertFalse(PgAuth.passwordsOnly(List.of("host all all 127.0.0.1/32 md5")), "md5: not scram");
    assertFalse(PgAuth.passwordsOnly(List.of("local all all peer")), "peer: no password");
    assertFalse(PgAuth.passwordsOnly(List.of("# only comments")), "no rule at all");
  }

  /** No password, and a wrong one: both refused by the server's scram-sha-256 rule. */
  private static void assertRefusedWithout(EmbeddedDatabase db, String password) {
    SQLException none = assertThrows(SQLException.class, () -> connect(db, "").close());
    assertTrue(String.valueOf(none.getMessage()).contains("password"), none.getMessage());
    SQLException wrong = assertThrows(SQLException.class, () -> connect(db, password + "x").close());
    assertTrue(wrong.getMessage().contains("password authentication failed"), wrong.getMessage());
  }

  private static Connection connect(EmbeddedDatabase db, String password) throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://localhost:" + db.database().options().getPort()
        + "/postgres", "postgres", password);
  }

  private static String hba(Path root) throws Exception {
    return Files.readString(root.resolve("pg/pg_hba.conf"));
  }
}
