package io.heteroflow.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.controlplane.store.Database;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL the tests rest on commits like production: a commit is acknowledged once its WAL is written,
 * so a killed server loses no acknowledged row (zonky's embedded default is synchronous_commit off).
 */
class TestPostgresTest {
  @Test
  void commitsAreSynchronousLikeProduction() throws Exception {
    Database db = TestPostgres.freshDatabase();
    try (Connection connection = DriverManager.getConnection(db.jdbcUrl(), db.options().getUser(),
        db.options().getPassword()); ResultSet rows = connection.createStatement().executeQuery(
            "SHOW synchronous_commit")) {
      rows.next();
      assertEquals("on", rows.getString(1), "synchronous_commit of the " + TestPostgres.source() + " test server");
    }
  }
}
