package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.HexFormat;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/** V17 on a database that holds an old-style tenant (tenants.token_sha256): its token keeps logging in. */
class TokenMigrationTest {
  @Test
  void aTenantOfBeforeV17KeepsItsTokenAndItIsListedWithoutASecret() throws Exception {
    Database database = TestPostgres.freshDatabase();
    Flyway.configure(Database.class.getClassLoader()).dataSource(database.jdbcUrl(), database.options().getUser(),
        database.options().getPassword()).locations("classpath:db/migration").target("16").load().migrate();
    String token = "hft_old-style-token-of-alice";
    String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
        .digest(token.getBytes(StandardCharsets.UTF_8)));
    try (Connection connection = DriverManager.getConnection(database.jdbcUrl(), database.options().getUser(),
        database.options().getPassword()); Statement statement = connection.createStatement()) {
      statement.execute("INSERT INTO tenants (name, token_sha256) VALUES ('alice', '" + digest + "')");
    }

    database.migrateBlocking();

    Vertx vertx = Vertx.vertx();
    Pool pool = database.open(vertx, 2);
    try {
      TenantStore tenants = new TenantStore(pool);
      assertEquals("alice", await(tenants.tenantOfToken(digest)).orElseThrow().name(), "the old token logs in");
      var listed = await(new TokenStore(pool).list("alice")).orElseThrow();
      assertEquals(1, listed.size());
      assertEquals("migration V17", listed.get(0).createdBy());
      Row row = await(pool.query("SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'tenants'"
          + " AND column_name = 'token_sha256'").execute()).iterator().next();
      assertEquals(0L, row.getLong("n"), "tenants no longer holds token digests");
      assertEquals(0L, await(pool.query("SELECT count(*) AS n FROM tenant_tokens WHERE tenant = 'default'").execute())
          .iterator().next().getLong("n"), "the admin's built-in tenant has no token");
    } finally {
      await(pool.close());
      await(vertx.close());
    }
  }
}
