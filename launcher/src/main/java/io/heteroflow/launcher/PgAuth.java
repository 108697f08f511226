package io.heteroflow.launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * Password authentication of the embedded PostgreSQL: the superuser's password in {@code DATA/pg-password}
 * (0600, made at the first start, reused after), and a {@code pg_hba.conf} that asks everyone for it
 * (scram-sha-256, trusting no one).
 */
final class PgAuth {
  /** The password file's name in the data directory (beside {@code pg/}). */
  static final String PASSWORD_FILE = "pg-password";
  static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
  static final String METHOD = "scram-sha-256";
  /** What initdb writes with {@code --auth=scram-sha-256}: local socket and loopback, each by password. */
  static final List<String> HBA_RULES = List.of(
      "local   all             all                                     " + METHOD,
      "host    all             all             127.0.0.1/32            " + METHOD,
      "host    all             all             ::1/128                 " + METHOD,
      "local   replication     all                                     " + METHOD,
      "host    replication     all             127.0.0.1/32            " + METHOD,
      "host    replication     all             ::1/128                 " + METHOD);

  private PgAuth() {}

  /**
   * The password kept in {@code file}, or null when there is none yet. A file others may read (or write) is a
   * {@link Cli.Refusal} naming it: the password may have been seen.
   */
  static String read(Path file) throws IOException {
    if (!Files.exists(file)) {
      return null;
    }
    Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
    if (!OWNER_ONLY.equals(permissions)) {
      throw new Cli.Refusal(file + " must be readable by its owner only (0600), is "
          + PosixFilePermissions.toString(permissions) + ": 'chmod 600 " + file + "' (and if others could read it,"
          + " change the password: ALTER ROLE postgres PASSWORD '...', then write the new one there)");
    }
    String password = Files.readString(file, StandardCharsets.UTF_8).strip();
    if (password.isEmpty()) {
      throw new Cli.Refusal(file + " is empty: remove it only together with the data directory beside it");
    }
    return password;
  }

  /** A new random password (128 bits, hex: safe in a URL and in SQL). */
  static String generate() {
    byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** Writes {@code password} to {@code file}, 0600 from its creation on, replacing it at once (never half written). */
  static void write(Path file, String password) throws IOException {
    Path partial = Files.createTempFile(file.getParent(), PASSWORD_FILE + "-", ".partial",
        PosixFilePermissions.asFileAttribute(OWNER_ONLY));
    try {
      Files.writeString(partial, password + "\n", StandardCharsets.UTF_8);
      Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(partial);
    }
  }

  /**
   * Makes {@code pg_hba.conf} in {@code dataDir} ask everyone for a password: kept when every rule already says
   * scram-sha-256 (or reject), else replaced by {@link #HBA_RULES}. Returns whether it was replaced.
   */
  static boolean requirePasswords(Path dataDir) throws IOException {
    Path hba = dataDir.resolve("pg_hba.conf");
    if (Files.exists(hba) && passwordsOnly(Files.readAllLines(hba, StandardCharsets.UTF_8))) {
      return false;
    }
    String header = "# Written by HeteroFlow: every connection gives the password in ../" + PASSWORD_FILE + "\n"
        + "# TYPE  DATABASE        USER            ADDRESS                 METHOD\n";
    Files.writeString(hba, header + String.join("\n", HBA_RULES) + "\n", StandardCharsets.UTF_8);
    return true;
  }

  /** Whether every rule (not a comment, not blank) ends with scram-sha-256 or reject, and there is one at least. */
  static boolean passwordsOnly(List<String> lines) {
    boolean any = false;
    for (String line : lines) {
      String rule = line.replaceFirst("#.*", "").strip();
      if (rule.isEmpty()) {
        continue;
      }
      String[] fields = rule.split("\\s+");
      String method = rule.startsWith("local") ? field(fields, 3) : field(fields, 4);
      if (!METHOD.equals(method) && !"reject".equals(method)) {
        return false;
      }
      any = true;
    }
    return any;
  }

  private static String field(String[] fields, int index) {
    return index < fields.length ? fields[index] : "";
  }
}
