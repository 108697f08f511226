package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import org.flywaydb.core.Flyway;

/**
 * Where the control plane's PostgreSQL is: a {@code postgresql://user:pass@host:port/db} URL (a
 * {@code jdbc:postgresql://…?user=…&password=…} URL is accepted too). Migrates the schema with Flyway (on a
 * worker thread) and opens the reactive pool the verticles share.
 */
public record Database(PgConnectOptions options) {

  public static Database fromUrl(String url) {
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException("a PostgreSQL URL is required (--pg-url or HETEROFLOW_PG_URL)");
    }
    String uri = url.startsWith("jdbc:") ? url.substring(5) : url;
    try {
      return new Database(PgConnectOptions.fromUri(uri));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("not a PostgreSQL URL: " + url + " (" + e.getMessage() + ")", e);
    }
  }

  public static Database of(String host, int port, String database, String user, String password) {
    return new Database(new PgConnectOptions().setHost(host).setPort(port).setDatabase(database).setUser(user)
        .setPassword(password));
  }

  public String jdbcUrl() {
    return "jdbc:postgresql://" + options.getHost() + ":" + options.getPort() + "/" + options.getDatabase();
  }

  /** Applies the versioned migrations under {@code db/migration}; blocking, so run it on a worker. */
  public void migrateBlocking() {
    Flyway.configure(Database.class.getClassLoader())
        .dataSource(jdbcUrl(), options.getUser(), options.getPassword())
        .locations("classpath:db/migration")
        .load()
        .migrate();
  }

  public Future<Pool> migrateAndOpen(Vertx vertx, int poolSize) {
    return vertx.executeBlocking(() -> {
      migrateBlocking();
      return null;
    }).map(ignored -> open(vertx, poolSize));
  }

  /** A round trip to PostgreSQL (for /health/ready). */
  public static Future<Void> ping(Pool pool) {
    return pool.query(Sql.HEALTH).execute().mapEmpty();
  }

  public Pool open(Vertx vertx, int poolSize) {
    PgConnectOptions connect = new PgConnectOptions(options).setPipeliningLimit(16).setCachePreparedStatements(true);
    return PgBuilder.pool()
        .with(new PoolOptions().setMaxSize(poolSize).setShared(false).setMaxWaitQueueSize(4096))
        .connectingTo(connect)
        .using(vertx)
        .build();
  }
}
