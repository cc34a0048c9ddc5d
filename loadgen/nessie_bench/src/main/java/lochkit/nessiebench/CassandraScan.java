package lochkit.nessiebench;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.projectnessie.versioned.storage.common.persist.ObjId;
import org.projectnessie.versioned.storage.serialize.ProtoSerialization;

/**
 * The full scan's reader for Nessie's Cassandra store (cassandra2): the {@code objs2} and {@code
 * refs2} tables of one keyspace, read with the Apache Cassandra Java driver, each blob and history
 * handed to ProtoSerialization as Nessie's cassandra2 module hands them. Nessie publishes no
 * Cassandra module. The rows of one repository are found as Nessie finds them, by filtering on the
 * {@code repo} column (it is only part of the partition key).
 *
 * <p>The address is lochkit's URL, {@code
 * cassandra://[USER:PASSWORD@]HOST[:PORT][,HOST...]/KEYSPACE[?local_dc=DC]} (keyspace {@code
 * nessie} and data center {@code datacenter1} when not given).
 */
final class CassandraScan {
  private CassandraScan() {}

  static void scan(FullScan scan, String address, String repository) {
    URI uri = URI.create(address);
    String authority = uri.getRawAuthority();
    if (authority == null) {
      throw new IllegalArgumentException("no Cassandra host in " + uri.getScheme() + "://...");
    }
    int at = authority.lastIndexOf('@');
    String keyspace = uri.getPath() == null ? "" : uri.getPath().replaceAll("^/+|/+$", "");
    CqlSessionBuilder builder =
        CqlSession.builder()
            .withLocalDatacenter(
                UrlOptions.parse(uri.getRawQuery()).getOrDefault("local_dc", "datacenter1"))
            // Filtering scans of a whole table on a small, busy node: more than the 2 s default.
            .withConfigLoader(
                DriverConfigLoader.programmaticBuilder()
                    .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(60))
                    .build());
    for (String host : authority.substring(at + 1).split(",")) {
      int colon = host.lastIndexOf(':');
      builder.addContactPoint(
          colon < 0
              ? new InetSocketAddress(host, 9042)
              : new InetSocketAddress(
                  host.substring(0, colon), Integer.parseInt(host.substring(colon + 1))));
    }
    if (at >= 0) {
      String credentials = authority.substring(0, at);
      int colon = credentials.indexOf(':');
      builder.withAuthCredentials(
          UrlOptions.decode(colon < 0 ? credentials : credentials.substring(0, colon)),
          colon < 0 ? "" : UrlOptions.decode(credentials.substring(colon + 1)));
    }
    String ks = CqlIdentifier.fromInternal(keyspace.isEmpty() ? "nessie" : keyspace).asCql(true);
    try (CqlSession session = builder.build()) {
      for (Row row :
          session.execute(
              SimpleStatement.newInstance(
                  "SELECT obj_id, obj_type, obj_vers, obj_value, obj_ref FROM "
                      + ks
                      + ".objs2 WHERE repo = ? ALLOW FILTERING",
                  repository))) {
        ObjId id = ObjId.objIdFromByteArray(bytes(row.getByteBuffer(0)));
        scan.counted(
            ProtoSerialization.deserializeObj(
                id, row.getLong(4), bytes(row.getByteBuffer(3)), row.getString(2)),
            row.getString(1));
      }
      for (Row row :
          session.execute(
              SimpleStatement.newInstance(
                  "SELECT ref_name, pointer, deleted, created_at, ext_info, prev_ptr FROM "
                      + ks
                      + ".refs2 WHERE repo = ? ALLOW FILTERING",
                  repository))) {
        scan.reference(
            FullScan.columnsReference(
                row.getString(0),
                bytes(row.getByteBuffer(1)),
                row.getBoolean(2),
                row.getLong(3),
                bytes(row.getByteBuffer(4)),
                bytes(row.getByteBuffer(5))));
      }
    }
  }

  /** A blob's bytes, or null for a NULL column. */
  private static byte[] bytes(ByteBuffer buffer) {
    if (buffer == null) {
      return null;
    }
    byte[] bytes = new byte[buffer.remaining()];
    buffer.duplicate().get(bytes);
    return bytes;
  }
}
