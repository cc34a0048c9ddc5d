package lochkit.nessiebench;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.projectnessie.versioned.storage.common.config.StoreConfig;
import org.projectnessie.versioned.storage.common.logic.Logics;
import org.projectnessie.versioned.storage.common.logic.PagedResult;
import org.projectnessie.versioned.storage.common.logic.ReferencesQuery;
import org.projectnessie.versioned.storage.common.persist.Backend;
import org.projectnessie.versioned.storage.common.persist.CloseableIterator;
import org.projectnessie.versioned.storage.common.persist.Obj;
import org.projectnessie.versioned.storage.common.persist.ObjId;
import org.projectnessie.versioned.storage.common.persist.ObjTypes;
import org.projectnessie.versioned.storage.common.persist.Persist;
import org.projectnessie.versioned.storage.common.persist.Reference;
import org.projectnessie.versioned.storage.mongodb2.MongoDB2BackendConfig;
import org.projectnessie.versioned.storage.mongodb2.MongoDB2BackendFactory;
import org.projectnessie.versioned.storage.rocksdb.RocksDBBackendConfig;
import org.projectnessie.versioned.storage.rocksdb.RocksDBBackendFactory;
import org.projectnessie.versioned.storage.serialize.ProtoSerialization;

/**
 * A read-only full scan of one repository in a database Nessie's storage layout holds: every
 * stored object is deserialised by Nessie's own {@code ProtoSerialization}, and every reference is
 * read, so data another implementation (lochkit's {@code layout=nessie}) wrote is proven readable
 * by Nessie's code. It prints one JSON line (objects per type, references, live/deleted) and exits
 * 1 on the first object or reference Nessie cannot read, or on a reference pointing at an object
 * that is not there.
 *
 * <p>Usage: {@code FullScan --backend postgres|mariadb|rocksdb|mongodb|cassandra|dynamodb|bigtable
 * [--repository ID]}, with the database address in {@code NESSIE_BENCH_URL} (a JDBC URL, a RocksDB
 * directory, a MongoDB connection string, or lochkit's URL of a Cassandra keyspace, a DynamoDB
 * endpoint or a Bigtable emulator). RocksDB and MongoDB are opened through Nessie's published
 * storage modules (their {@code scanAllObjects}). Nessie publishes no module for the others, so
 * their rows are read with each database's own client (JDBC here for PostgreSQL's and MariaDB's
 * {@code objs2} and {@code refs2}; {@link CassandraScan}, {@link DynamoScan}, {@link BigtableScan})
 * and each blob and history is handed to {@code ProtoSerialization} as Nessie's own store for that
 * database hands it. Nothing is written, and no schema or repository is created.
 */
public final class FullScan {
  /** The backends the scan has a reader for. */
  private static final List<String> READERS =
      List.of("postgres", "mariadb", "rocksdb", "mongodb", "cassandra", "dynamodb", "bigtable");

  private final Map<String, Integer> objectsPerType = new TreeMap<>();
  private final Set<ObjId> objectIds = new HashSet<>();
  private final List<Reference> references = new ArrayList<>();

  private FullScan() {}

  public static void main(String[] args) {
    String backend = null;
    String repository = "";
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--backend" -> backend = args[i + 1];
        case "--repository" -> repository = args[i + 1];
        default -> fail("unknown option " + args[i]);
      }
    }
    if (args.length % 2 != 0 || backend == null) {
      fail("usage: FullScan --backend " + String.join("|", READERS) + " [--repository ID]");
    }
    String url = System.getenv("NESSIE_BENCH_URL");
    if (url == null || url.isEmpty()) {
      fail("the database address is missing: set NESSIE_BENCH_URL");
    }
    FullScan scan = new FullScan();
    try {
      switch (backend) {
        case "postgres", "mariadb" -> scan.jdbc(url, repository);
        case "cassandra" -> CassandraScan.scan(scan, url, repository);
        case "dynamodb" -> DynamoScan.scan(scan, url, repository);
        case "bigtable" -> BigtableScan.scan(scan, url, repository);
        case "rocksdb" ->
            scan.published(
                new RocksDBBackendFactory()
                    .buildBackend(
                        RocksDBBackendConfig.builder().databasePath(Path.of(url)).build()),
                repository);
        case "mongodb" -> {
          ConnectionString connection = new ConnectionString(url);
          String database = connection.getDatabase() != null ? connection.getDatabase() : "nessie";
          try (MongoClient client = MongoClients.create(connection)) {
            scan.published(
                new MongoDB2BackendFactory()
                    .buildBackend(
                        MongoDB2BackendConfig.builder()
                            .client(client)
                            .databaseName(database)
                            .build()),
                repository);
          }
        }
        default ->
            fail(
                "no full scan for backend "
                    + backend
                    + ": it reads "
                    + String.join(", ", READERS));
      }
      scan.checkPointers();
    } catch (Exception e) {
      System.err.println("full scan: " + e);
      e.printStackTrace(System.err);
      System.exit(1);
    }
    System.out.println(scan.json());
  }

  private static void fail(String message) {
    System.err.println("full scan: " + message);
    System.exit(2);
  }

  /** One object Nessie deserialised; {@code storedType}: the short type name stored beside it. */
  void counted(Obj obj, String storedType) {
    String type = obj.type().shortName();
    if (storedType != null && !storedType.equals(type)) {
      throw new IllegalStateException(
          "object " + obj.id() + " is stored as type " + storedType + " but its bytes say " + type);
    }
    objectsPerType.merge(obj.type().name(), 1, Integer::sum);
    objectIds.add(obj.id());
  }

  /** One reference Nessie deserialised. */
  void reference(Reference ref) {
    references.add(ref);
  }

  /**
   * A reference stored as columns (JDBC2, Cassandra2, DynamoDB2): its history, when there is one,
   * goes through Nessie's own deserialisation of previous pointers.
   */
  static Reference columnsReference(
      String name, byte[] pointer, boolean deleted, long createdAt, byte[] extInfo, byte[] history) {
    return Reference.reference(
        name,
        ObjId.objIdFromByteArray(pointer),
        deleted,
        createdAt,
        extInfo == null ? null : ObjId.objIdFromByteArray(extInfo),
        history == null ? List.of() : ProtoSerialization.deserializePreviousPointers(history));
  }

  /** Objects and references through a published backend module, as Nessie's server reads them. */
  private void published(Backend backend, String repository) throws Exception {
    try (backend) {
      Persist persist =
          backend.createFactory().newPersist(StoreConfig.Adjustable.empty().withRepositoryId(repository));
      try (CloseableIterator<Obj> objects = persist.scanAllObjects(ObjTypes.allObjTypes())) {
        while (objects.hasNext()) {
          counted(objects.next(), null);
        }
      }
      for (String internal : new String[] {"int/refs", "int/repo"}) {
        Reference ref = persist.fetchReference(internal);
        if (ref != null) {
          references.add(ref);
        }
      }
      PagedResult<Reference, String> named =
          Logics.referenceLogic(persist).queryReferences(ReferencesQuery.referencesQuery());
      while (named.hasNext()) {
        references.add(named.next());
      }
    }
  }

  /**
   * JDBC2's objs2/refs2 rows, each value deserialised by ProtoSerialization. The column types
   * differ per database (PostgreSQL's BYTEA and BOOLEAN, MariaDB's TINYBLOB, LONGBLOB and BIT(1)),
   * but both drivers read them as bytes and booleans, and a NULL created_at as 0, which is what
   * Nessie's jdbc2 module makes of it too.
   */
  private void jdbc(String url, String repository) throws SQLException {
    try (Connection conn = connect(url)) {
      conn.setReadOnly(true);
      try (PreparedStatement ps =
          conn.prepareStatement(
              "SELECT obj_id, obj_type, obj_vers, obj_value, obj_ref FROM objs2 WHERE repo = ?")) {
        ps.setString(1, repository);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            ObjId id = ObjId.objIdFromByteArray(rs.getBytes(1));
            long referenced = rs.getLong(5);
            counted(
                ProtoSerialization.deserializeObj(id, referenced, rs.getBytes(4), rs.getString(3)),
                rs.getString(2));
          }
        }
      }
      try (PreparedStatement ps =
          conn.prepareStatement(
              "SELECT ref_name, pointer, deleted, created_at, ext_info, prev_ptr FROM refs2"
                  + " WHERE repo = ?")) {
        ps.setString(1, repository);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            references.add(
                columnsReference(
                    rs.getString(1),
                    rs.getBytes(2),
                    rs.getBoolean(3),
                    rs.getLong(4),
                    rs.getBytes(5),
                    rs.getBytes(6)));
          }
        }
      }
    }
  }

  /**
   * A JDBC connection with the URL's options given as connection properties, percent-decoded:
   * MariaDB's driver takes URL options verbatim, so a password holding {@code &} or {@code %}
   * would not survive in the URL itself.
   */
  private static Connection connect(String url) throws SQLException {
    int query = url.indexOf('?');
    if (query < 0) {
      return DriverManager.getConnection(url);
    }
    Properties properties = new Properties();
    properties.putAll(UrlOptions.parse(url.substring(query + 1)));
    return DriverManager.getConnection(url.substring(0, query), properties);
  }

  /** Every live reference points at a stored object (or at the empty commit). */
  private void checkPointers() {
    for (Reference ref : references) {
      ObjId pointer = ref.pointer();
      if (!ref.deleted() && !pointer.equals(ObjId.EMPTY_OBJ_ID) && !objectIds.contains(pointer)) {
        throw new IllegalStateException(
            "reference " + ref.name() + " points at " + pointer + ", which is not stored");
      }
    }
  }

  private String json() {
    StringBuilder sb = new StringBuilder("{\"objects\":{");
    String sep = "";
    for (Map.Entry<String, Integer> e : objectsPerType.entrySet()) {
      sb.append(sep).append(Json.quote(e.getKey())).append(':').append(e.getValue());
      sep = ",";
    }
    long deleted = references.stream().filter(Reference::deleted).count();
    sb.append("},\"objects_total\":").append(objectIds.size());
    sb.append(",\"references\":[");
    sep = "";
    for (Reference ref : references) {
      sb.append(sep).append(Json.quote(ref.name()));
      sep = ",";
    }
    sb.append("],\"references_deleted\":").append(deleted);
    sb.append(",\"history_entries\":")
        .append(references.stream().mapToInt(r -> r.previousPointers().size()).sum());
    return sb.append('}').toString();
  }
}
