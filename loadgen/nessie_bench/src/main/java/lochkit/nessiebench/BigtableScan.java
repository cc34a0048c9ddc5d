package lochkit.nessiebench;

import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.cloud.bigtable.data.v2.stub.metrics.NoopMetricsProvider;
import com.google.protobuf.ByteString;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.projectnessie.versioned.storage.common.persist.Obj;
import org.projectnessie.versioned.storage.common.persist.ObjId;
import org.projectnessie.versioned.storage.common.persist.Reference;
import org.projectnessie.versioned.storage.serialize.ProtoSerialization;

/**
 * The full scan's reader for Nessie's Bigtable store, on Google's Bigtable emulator. Nessie
 * publishes no Bigtable module, so its rows are read with Google's client: in the objects table,
 * family {@code o}, the ObjProto in qualifier {@code o}, the type's name in {@code t}, the version
 * token in {@code V} and the referenced time (decimal µs) in {@code z}; in the references
 * table, family {@code r}, the whole ReferenceProto in qualifier {@code r}. Row keys are the
 * repository id, {@code ':'} and the raw object id or the reference name.
 *
 * <p>The address is lochkit's URL of the emulator, {@code
 * bigtable://HOST:PORT?project=P&instance=I&table_prefix=X}: the tables are {@code X_objs} and
 * {@code X_refs}, or {@code objs} and {@code refs} without a prefix, as Nessie names them.
 */
final class BigtableScan {
  private static final String OBJS_FAMILY = "o";
  private static final String REFS_FAMILY = "r";

  private BigtableScan() {}

  static void scan(FullScan scan, String address, String repository) throws IOException {
    URI uri = URI.create(address);
    if (uri.getHost() == null || uri.getPort() < 0) {
      throw new IllegalArgumentException(
          "the full scan reads Bigtable on an emulator only: bigtable://HOST:PORT?..., not "
              + address);
    }
    Map<String, String> options = UrlOptions.parse(uri.getRawQuery());
    String prefix = options.getOrDefault("table_prefix", "");
    BigtableDataSettings settings =
        BigtableDataSettings.newBuilderForEmulator(uri.getHost(), uri.getPort())
            .setProjectId(options.getOrDefault("project", "lochkit"))
            .setInstanceId(options.getOrDefault("instance", "lochkit"))
            // No metrics export: there is no Cloud Monitoring to send them to.
            .setMetricsProvider(NoopMetricsProvider.INSTANCE)
            .build();
    ByteString keyPrefix = ByteString.copyFromUtf8(repository + ":");
    try (BigtableDataClient client = BigtableDataClient.create(settings)) {
      Query objects = Query.create(TableId.of(table(prefix, "objs"))).prefix(keyPrefix);
      for (Row row : client.readRows(objects)) {
        ObjId id = ObjId.objIdFromByteArray(row.getKey().substring(keyPrefix.size()).toByteArray());
        String referenced = text(row, OBJS_FAMILY, "z");
        Obj obj =
            ProtoSerialization.deserializeObj(
                id,
                referenced == null ? 0L : Long.parseLong(referenced),
                required(row, OBJS_FAMILY, "o").toByteArray(),
                text(row, OBJS_FAMILY, "V"));
        // Nessie writes the type's name here (COMMIT), not the short name FullScan compares; a
        // custom type this program does not know is written under its short name by lochkit.
        String storedType = text(row, OBJS_FAMILY, "t");
        if (storedType != null
            && !storedType.equals(obj.type().name())
            && !storedType.equals(obj.type().shortName())) {
          throw new IllegalStateException(
              "object " + id + " is stored as type " + storedType + " but its bytes say "
                  + obj.type().name());
        }
        scan.counted(obj, null);
      }
      Query references = Query.create(TableId.of(table(prefix, "refs"))).prefix(keyPrefix);
      for (Row row : client.readRows(references)) {
        String name = row.getKey().substring(keyPrefix.size()).toStringUtf8();
        Reference ref =
            ProtoSerialization.deserializeReference(required(row, REFS_FAMILY, "r").toByteArray());
        // Nessie looks a reference up by its row key, so the name inside must be the same.
        if (!name.equals(ref.name())) {
          throw new IllegalStateException(
              "reference row " + name + " holds a reference named " + ref.name());
        }
        scan.reference(ref);
      }
    }
  }

  private static String table(String prefix, String name) {
    return prefix.isEmpty() ? name : prefix + "_" + name;
  }

  private static ByteString required(Row row, String family, String qualifier) {
    List<RowCell> cells = row.getCells(family, qualifier);
    if (cells.isEmpty()) {
      throw new IllegalStateException(
          "row " + row.getKey().toStringUtf8() + " has no cell " + family + ":" + qualifier);
    }
    return cells.get(0).getValue();
  }

  private static String text(Row row, String family, String qualifier) {
    List<RowCell> cells = row.getCells(family, qualifier);
    return cells.isEmpty() ? null : cells.get(0).getValue().toStringUtf8();
  }
}
