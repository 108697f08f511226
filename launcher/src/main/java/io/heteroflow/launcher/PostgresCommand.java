package io.heteroflow.launcher;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code heteroflow postgres}: only the embedded PostgreSQL, for trying server and agent. */
@Command(name = "postgres", sortOptions = false,
    description = "Only the embedded PostgreSQL, to try server and agent without installing one.",
    footer = {"", "The superuser postgres logs in with a password (scram-sha-256; no one is trusted): a random one made",
        "at the first start in DIR/pg-password (0600), and kept there for the next start on the same --data-dir.",
        "", "Examples:",
        "  java -jar heteroflow.jar postgres",
        "  java -jar heteroflow.jar postgres --port 5433 --data-dir /tmp/hf-pg",
        "  java -jar heteroflow.jar server \\",
        "      --pg-url postgresql://postgres:$(cat /tmp/hf-pg/pg-password)@localhost:5433/postgres"})
final class PostgresCommand implements Callable<Integer> {
  @Option(names = "--port", paramLabel = "PORT", defaultValue = "5432",
      description = "PostgreSQL's port (default ${DEFAULT-VALUE}).")
  String port;
  @Option(names = "--data-dir", paramLabel = "DIR",
      description = "Keep the data and pg-password in DIR (default: a temporary directory, removed at exit).")
  String dataDir;
  @Mixin
  Cli.Help help;

  @Override
  public Integer call() throws Exception {
    int pgPort = Cli.port("--port", port);
    if (pgPort > 0 && !portFree(pgPort)) {
      throw new Cli.Refusal("port " + pgPort + " is already in use (another PostgreSQL?): choose another with --port");
    }
    EmbeddedDatabase postgres = EmbeddedDatabase.start(dataDir == null ? null : Path.of(dataDir), pgPort);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        postgres.close();
      } catch (IOException e) {
        System.err.println("stopping PostgreSQL: " + e);
      }
    }, "heteroflow-shutdown"));
    System.out.println("PostgreSQL is up: " + postgres.url() + " (password in " + postgres.passwordFile()
        + ", 0600; data in " + postgres.root() + ")");
    new CountDownLatch(1).await();
    return 0;
  }

  /** Whether nothing listens on {@code port} (any address). */
  static boolean portFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
