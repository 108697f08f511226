package io.heteroflow.launcher;

import io.heteroflow.protocol.tls.CertAuthority;
import io.heteroflow.protocol.tls.MutualTls;
import io.heteroflow.protocol.tls.PeerIdentity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code heteroflow certs init | issue}: the cluster CA ({@code DIR/ca.pem}, {@code DIR/ca-key.pem}) and the leaf
 * certificates it signs ({@code DIR/NAME.pem}, {@code DIR/NAME-key.pem}; keys 0600), the layout {@code --certs-dir}
 * of server and agent reads. Nothing is overwritten without {@code --force}.
 */
@Command(name = "certs", sortOptions = false, synopsisSubcommandLabel = "init|issue",
    subcommands = {CertsCommand.Init.class, CertsCommand.Issue.class},
    description = "The cluster CA and the certificates of members and agents (mutual TLS on the event bus).",
    footer = {"", "Examples:",
        "  java -jar heteroflow.jar certs init --dir /etc/heteroflow/certs",
        "  java -jar heteroflow.jar certs issue --dir /etc/heteroflow/certs --name cp-1 --role member --san 10.0.0.5",
        "  java -jar heteroflow.jar certs issue --dir /etc/heteroflow/certs --name gpu-07 --role agent"})
final class CertsCommand implements Runnable {
  /** The CA's lifetime: long, since replacing it means re-issuing every certificate. */
  static final Duration CA_VALIDITY = Duration.ofDays(3650);
  static final String DEFAULT_LEAF_DAYS = "365";
  /** The certificates {@code dev} makes for itself: a member's and an agent's, on loopback. */
  static final String DEV_MEMBER = "dev";
  static final String DEV_AGENT = "dev-agent";

  @Mixin
  Cli.Help help;
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  @Command(name = "init", sortOptions = false, description = "Create the cluster CA in DIR (ca.pem, ca-key.pem 0600).",
      footer = {"", "Examples:", "  java -jar heteroflow.jar certs init --dir /etc/heteroflow/certs"})
  static final class Init implements Callable<Integer> {
    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "The certificates directory.")
    Path dir;
    @Option(names = "--force", description = "Replace an existing CA (every certificate it issued stops being trusted).")
    boolean force;
    @Mixin
    Cli.Help help;

    @Override
    public Integer call() throws Exception {
      init(dir, force);
      System.out.println("Cluster CA created: " + dir.resolve(MutualTls.CA_FILE) + " (keep "
          + MutualTls.CA_KEY_FILE + " off the cluster's hosts once the certificates are issued)");
      return 0;
    }
  }

  @Command(name = "issue", sortOptions = false,
      description = "Issue NAME's certificate signed by the CA in DIR (NAME.pem, NAME-key.pem 0600).",
      footer = {"", "Examples:",
          "  java -jar heteroflow.jar certs issue --dir certs --name cp-1 --role member --san 10.0.0.5,cp-1.lan",
          "  java -jar heteroflow.jar certs issue --dir certs --name gpu-07 --role agent --days 90"})
  static final class Issue implements Callable<Integer> {
    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "The certificates directory (holds the CA).")
    Path dir;
    @Option(names = "--name", required = true, paramLabel = "NAME",
        description = "The holder (certificate CN, and the file name): a member name or an agent's node id.")
    String name;
    @Option(names = "--role", required = true, paramLabel = "member|agent", description = "The holder's role (OU).")
    String role;
    @Option(names = "--san", paramLabel = "HOST,IP", split = ",",
        description = "Host names or IP addresses to list in the certificate (subject alternative names).")
    List<String> hosts = List.of();
    @Option(names = "--days", paramLabel = "N", defaultValue = DEFAULT_LEAF_DAYS,
        description = "Validity in days (default ${DEFAULT-VALUE}; never beyond the CA's).")
    String days;
    @Option(names = "--force", description = "Replace an existing certificate of NAME.")
    boolean force;
    @Mixin
    Cli.Help help;

    @Override
    public Integer call() throws Exception {
      issue(dir, name, role, hosts, Duration.ofDays(positiveDays(days)), force);
      System.out.println("Certificate of " + name + " (" + role + ") issued: " + dir.resolve(name + ".pem")
          + ", key " + dir.resolve(name + "-key.pem"));
      return 0;
    }
  }

  /** Creates the CA in {@code dir} (made 0700 when new); an existing one is kept unless {@code force}. */
  static void init(Path dir, boolean force) throws IOException, GeneralSecurityException {
    if (!force && (Files.exists(dir.resolve(MutualTls.CA_FILE)) || Files.exists(dir.resolve(MutualTls.CA_KEY_FILE)))) {
      throw new Cli.Refusal("--dir: " + dir + " already holds a CA (" + MutualTls.CA_FILE
          + "); --force replaces it, and every certificate it issued stops being trusted");
    }
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    }
    CertAuthority.create("cluster", CA_VALIDITY).save(dir, baseName(MutualTls.CA_FILE));
  }

  /** Issues {@code name}'s certificate from the CA in {@code dir}; an existing one is kept unless {@code force}. */
  static void issue(Path dir, String name, String role, List<String> hosts, Duration validity, boolean force)
      throws IOException, GeneralSecurityException {
    if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,127}") || name.equals(baseName(MutualTls.CA_FILE))) {
      throw new IllegalArgumentException("--name must be 1-128 letters, digits, '.', '_' or '-' (not 'ca'), was '"
          + name + "'");
    }
    if (!PeerIdentity.MEMBER.equals(role) && !PeerIdentity.AGENT.equals(role)) {
      throw new IllegalArgumentException("--role must be member or agent, was '" + role + "'");
    }
    for (String host : hosts) {
      if (!host.matches("[A-Za-z0-9.:*-]{1,253}")) {
        throw new IllegalArgumentException("--san: '" + host + "' is not a host name or an IP address");
      }
    }
    if (!Files.isRegularFile(dir.resolve(MutualTls.CA_FILE)) || !Files.isRegularFile(dir.resolve(MutualTls.CA_KEY_FILE))) {
      throw new Cli.Refusal("--dir: no CA in " + dir.toAbsolutePath().normalize() + " (" + MutualTls.CA_FILE + " and "
          + MutualTls.CA_KEY_FILE + "): run 'heteroflow certs init --dir " + dir + "' first");
    }
    if (!force && Files.exists(dir.resolve(name + ".pem"))) {
      throw new Cli.Refusal("--name: " + dir.resolve(name + ".pem") + " already exists; --force replaces it");
    }
    CertAuthority ca = CertAuthority.load(dir, baseName(MutualTls.CA_FILE));
    ca.issue(name, role, hosts, validity).save(dir, name);
  }

  /**
   * {@code dev}'s certificates in {@code dir}: on first start a CA and the certificates of {@link #DEV_MEMBER} and
   * {@link #DEV_AGENT} (loopback SANs); on later starts (a kept --data-dir) the same files, untouched.
   */
  static Path ensureDev(Path dir) throws IOException, GeneralSecurityException {
    boolean freshCa = !Files.isRegularFile(dir.resolve(MutualTls.CA_FILE))
        || !Files.isRegularFile(dir.resolve(MutualTls.CA_KEY_FILE));
    if (freshCa) {
      init(dir, true);
    }
    for (String[] leaf : new String[][] {{DEV_MEMBER, PeerIdentity.MEMBER}, {DEV_AGENT, PeerIdentity.AGENT}}) {
      if (freshCa || !valid(dir, leaf[0])) {
        issue(dir, leaf[0], leaf[1], List.of("127.0.0.1", "localhost"), Duration.ofDays(365), true);
      }
    }
    return dir;
  }

  private static boolean valid(Path dir, String name) {
    try {
      MutualTls.fromDirectory(dir, name);
      return true;
    } catch (IllegalArgumentException e) {
      return false; // missing, expired or of another CA: issued again
    }
  }

  private static long positiveDays(String days) {
    try {
      long value = Long.parseLong(days.trim());
      if (value >= 1 && value <= 36_500) {
        return value;
      }
    } catch (NumberFormatException e) {
      // the message below
    }
    throw new IllegalArgumentException("--days must be a whole number of days (1-36500), was '" + days + "'");
  }

  private static String baseName(String pemFile) {
    return pemFile.substring(0, pemFile.length() - ".pem".length());
  }
}
