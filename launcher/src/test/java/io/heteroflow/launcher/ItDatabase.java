package io.heteroflow.launcher;

import io.heteroflow.controlplane.store.Database;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;

/** The ITs' direct reads of the database their processes share (JDBC, from the test thread). */
final class ItDatabase {
  private final Database db;

  ItDatabase(Database db) {
    this.db = db;
  }

  /** The URL the control-plane processes are given. */
  String url() {
    return "postgresql://" + db.options().getUser() + ":" + db.options().getPassword() + "@" + db.options().getHost()
        + ":" + db.options().getPort() + "/" + db.options().getDatabase();
  }

  long count(String sql) {
    try (Connection connection = connect(); ResultSet rows = connection.createStatement().executeQuery(sql)) {
      rows.next();
      return rows.getLong(1);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Pairs of bookings of one card whose [allocated, released) intervals overlap: must be none. */
  long overlappingBookings() {
    return count("SELECT count(*) FROM allocations a JOIN allocations b ON a.node_id = b.node_id"
        + " AND a.gpu_index = b.gpu_index AND a.id < b.id AND a.kind = 'whole' AND b.kind = 'whole'"
        + " AND a.allocated_at < coalesce(b.released_at, 'infinity') AND b.allocated_at < coalesce(a.released_at, 'infinity')");
  }

  Connection connect() throws Exception {
    return DriverManager.getConnection(db.jdbcUrl(), db.options().getUser(), db.options().getPassword());
  }
}
