package io.heteroflow.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code heteroflow postgres --data-dir DIR} from the real jar: it prints the URL without the password and where
 * the password is; that password (in a 0600 file) logs in, none or a wrong one is refused, and a second start on
 * the same DIR keeps it.
 */
class PostgresCommandIT {
  private JarProcess process;

  @AfterEach
  void stop() {
    if (process != null) {
      process.close();
    }
  }

  @Test
  void printsTheUrlLessThePasswordWhichTheFileHoldsAcrossRestarts(@TempDir Path dir) throws Exception {
    int port = JarProcess.freePort();
    Path file = dir.resolve("pg-password");
    String password = startAndCheck(dir, port, file);
    process.process.destroy(); // SIGTERM: the shutdown hook stops PostgreSQL
    assertTrue(process.process.waitFor(60, TimeUnit.SECONDS), process.output());

    assertEquals(password, startAndCheck(dir, port, file), "the same --data-dir keeps its password");
  }

  private String startAndCheck(Path dir, int port, Path file) throws Exception {
    process = JarProcess.start(Map.of(), "postgres", "--port", String.valueOf(port), "--data-dir", dir.toString());
    process.eventually(Duration.ofSeconds(90), "PostgreSQL to be up", () -> process.output().contains("is up"));
    String output = process.output();
    assertTrue(output.contains("PostgreSQL is up: postgresql://postgres@localhost:" + port + "/postgres (password in "
        + file + ", 0600; data in " + dir + ")"), output);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    String password = Files.readString(file).strip();
    assertFalse(output.contains(password), "the password is never printed: " + output);

    try (Connection connection = connect(port, password)) {
      assertTrue(connection.createStatement().execute("SELECT 1"));
    }
    SQLException none = assertThrows(SQLException.class, () -> connect(port, "").close());
    assertTrue(String.valueOf(none.getMessage()).contains("password"), none.getMessage());
    SQLException wrong = assertThrows(SQLException.class, () -> connect(port, "postgres").close());
    assertTrue(wrong.getMessage().contains("password authentication failed"), wrong.getMessage());
    return password;
  }

  private static Connection connect(int port, String password) throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://localhost:" + port + "/postgres", "postgres", password);
  }
}
