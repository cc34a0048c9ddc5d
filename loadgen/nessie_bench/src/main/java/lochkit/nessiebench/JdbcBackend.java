package lochkit.nessiebench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.Set;
import org.projectnessie.versioned.storage.common.persist.Backend;
import org.projectnessie.versioned.storage.common.persist.PersistFactory;

/**
 * PostgreSQL through a pooled JDBC data source, for {@link JdbcPersist}. Nessie publishes no JDBC
 * storage module, so this stands in for its jdbc2 module: the same two tables and the same kind
 * of statements (see JdbcPersist), but its own table names, so it never touches lochkit's tables.
 */
final class JdbcBackend implements Backend {
  static final String REFS = "nessie_bench_refs";
  static final String OBJS = "nessie_bench_objs";

  private final HikariDataSource dataSource;

  JdbcBackend(String jdbcUrl) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    // As Nessie's jdbc2 module: every call runs in its own transaction, committed explicitly.
    config.setAutoCommit(false);
    config.setMaximumPoolSize(8);
    config.setMinimumIdle(2);
    config.setPoolName("nessie-bench");
    this.dataSource = new HikariDataSource(config);
  }

  Connection connection() throws SQLException {
    return dataSource.getConnection();
  }

  @Override
  public Optional<String> setupSchema() {
    try (Connection conn = connection();
        Statement st = conn.createStatement()) {
      // Columns as Nessie's jdbc2 tables, larger ones first; "C" collation keeps byte order.
      st.execute(
          "CREATE TABLE IF NOT EXISTS "
              + REFS
              + " (repo VARCHAR COLLATE \"C\" NOT NULL, ref_name VARCHAR COLLATE \"C\" NOT NULL,"
              + " pointer BYTEA, ext_info BYTEA, prev_ptr BYTEA, created_at BIGINT DEFAULT 0,"
              + " deleted BOOLEAN, PRIMARY KEY (repo, ref_name))");
      st.execute(
          "CREATE TABLE IF NOT EXISTS "
              + OBJS
              + " (repo VARCHAR COLLATE \"C\" NOT NULL, obj_id BYTEA NOT NULL,"
              + " obj_type VARCHAR COLLATE \"C\", obj_vers VARCHAR, obj_value BYTEA, obj_ref BIGINT,"
              + " PRIMARY KEY (repo, obj_id))");
      conn.commit();
    } catch (SQLException e) {
      throw new RuntimeException("creating the tables " + REFS + ", " + OBJS + ": " + e, e);
    }
    return Optional.of("PostgreSQL tables " + REFS + ", " + OBJS);
  }

  @Override
  public PersistFactory createFactory() {
    return config -> new JdbcPersist(this, config);
  }

  @Override
  public void eraseRepositories(Set<String> repositoryIds) {
    try (Connection conn = connection()) {
      for (String table : new String[] {REFS, OBJS}) {
        try (PreparedStatement ps =
            conn.prepareStatement("DELETE FROM " + table + " WHERE repo = ANY(?)")) {
          ps.setArray(1, conn.createArrayOf("varchar", repositoryIds.toArray()));
          ps.executeUpdate();
        }
      }
      conn.commit();
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  @Override
  public void close() {
    dataSource.close();
  }
}
