package lochkit.vectors;

import static lochkit.vectors.Util.obj;
import static org.projectnessie.versioned.storage.common.logic.Logics.repositoryLogic;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.projectnessie.model.CommitMeta;
import org.projectnessie.model.Content;
import org.projectnessie.model.ContentKey;
import org.projectnessie.model.IcebergTable;
import org.projectnessie.model.ImmutableCommitMeta;
import org.projectnessie.model.ImmutableDeltaLakeTable;
import org.projectnessie.model.ImmutableIcebergView;
import org.projectnessie.model.ImmutableNamespace;
import org.projectnessie.model.ImmutableUDF;
import org.projectnessie.model.Operation;
import org.projectnessie.versioned.BranchName;
import org.projectnessie.versioned.Hash;
import org.projectnessie.versioned.MetadataRewriter;
import org.projectnessie.versioned.VersionStore;
import org.projectnessie.versioned.storage.common.config.StoreConfig;
import org.projectnessie.versioned.storage.common.persist.Persist;
import org.projectnessie.versioned.storage.inmemory.InmemoryBackendConfig;
import org.projectnessie.versioned.storage.inmemory.InmemoryBackendFactory;
import org.projectnessie.versioned.storage.versionstore.VersionStoreImpl;

/**
 * Version-store vectors: the same operations a lochkit user would send (namespaces, every content
 * type, an update, a delete, commit metadata with authors, sign-offs and properties, a branch, and
 * a merge), run through Nessie's {@code VersionStoreImpl} on an in-memory repository initialised by
 * {@code RepositoryLogic}, with a fixed clock; the commit id of every step. Commit times are the
 * clock's, set in the commit metadata as Nessie's REST layer sets them. New content ids come from
 * {@code UUID.randomUUID()}, made reproducible by {@link SeededRandomUuids}, and are recorded.
 *
 * <p>Also: random header-name sequences with the order Nessie's {@code CommitHeaders} iterates them.
 */
final class VersionStoreVectors {
  private VersionStoreVectors() {}

  static final Instant NOW = Instant.parse("2024-03-04T05:06:07.123456Z");
  private static final long SEED = 281280518L;

  private record Spec(Content content, Map<String, Object> json) {}

  private final List<Object> steps = new ArrayList<>();
  private final Map<List<String>, String> ids = new HashMap<>();
  private VersionStore store;

  static Map<String, Object> generate() throws Exception {
    VersionStoreVectors v = new VersionStoreVectors();
    v.run();
    return obj(
        "format", "lochkit nessie version-store vectors v1",
        "nessie_version", Util.NESSIE_VERSION,
        "clock", NOW.toString(),
        "default_branch", "main",
        "steps", v.steps,
        "header_orders", headerOrders());
  }

  private void run() throws Exception {
    StoreConfig config = StoreConfig.Adjustable.empty().withClock(Clock.fixed(NOW, ZoneOffset.UTC));
    var backend = new InmemoryBackendFactory().buildBackend(InmemoryBackendConfig.builder().build());
    backend.setupSchema();
    Persist persist = backend.createFactory().newPersist(config);
    repositoryLogic(persist).initialize("main");
    store = new VersionStoreImpl(persist);

    commit(
        "create-namespaces",
        "main",
        meta("create namespaces").addAllAuthors("alice"),
        put(namespace(List.of("db"), "owner", "alice", "location", "s3://warehouse/db", "a", "1")),
        put(namespace(List.of("db", "sub"))));
    commit(
        "every-content-type",
        "main",
        meta("add tables\n\nwith a body: ünïcode")
            .addAllAuthors("alice", "bob")
            .addAllSignedOffBy("carol")
            .putAllProperties("app-id", List.of("spark-1"))
            .putAllProperties("job", List.of("nightly", "retry"))
            .putAllProperties("Zz-Custom", List.of("v")),
        put(table(List.of("db", "t1"), "s3://w/db/t1/m1.json", 1L)),
        put(view(List.of("db", "v1"), "s3://w/db/v1/m1.json", "select * from t1", "spark")),
        put(delta(List.of("db", "d1"))),
        put(udf(List.of("db", "f1"))),
        put(table(List.of("db", "sub", "t2"), "s3://w/db/sub/t2/m1.json", -1L)));
    commit(
        "update-and-delete",
        "main",
        meta("update t1, drop d1"),
        delete(List.of("db", "d1")),
        put(table(List.of("db", "t1"), "s3://w/db/t1/m2.json", 2L)));
    Hash mainHead = head("main");
    Hash branchHead = store.create(BranchName.of("dev"), Optional.of(mainHead)).getHash();
    steps.add(
        obj(
            "name", "create-dev",
            "op", "create_branch",
            "branch", "dev",
            "from_hash", mainHead.asString(),
            "hash", branchHead.asString()));
    commit(
        "work-on-dev",
        "dev",
        meta("dev work").addAllAuthors("dave"),
        put(table(List.of("db", "t3"), "s3://w/db/t3/m1.json", 7L)),
        put(view(List.of("db", "v1"), "s3://w/db/v1/m2.json", "select 2", null)));
    commit(
        "meanwhile-on-main",
        "main",
        // An author time in whole milliseconds: Java writes the fraction with three digits.
        meta("another udf").authorTime(Instant.parse("2024-03-04T05:06:07.120Z")),
        put(udf(List.of("db", "f2"))));
    merge("merge-dev", "dev", "main", "merge dev into main");
  }

  // --- operations ---------------------------------------------------------------------------------

  private ImmutableCommitMeta.Builder meta(String message) {
    return CommitMeta.builder().message(message).commitTime(NOW).authorTime(NOW);
  }

  private Hash head(String branch) throws Exception {
    return store.getNamedRef(branch, org.projectnessie.versioned.GetNamedRefsParams.DEFAULT).getHash();
  }

  private void commit(String name, String branch, ImmutableCommitMeta.Builder meta, Object... ops)
      throws Exception {
    CommitMeta commitMeta = meta.build();
    List<Operation> operations = new ArrayList<>();
    List<Object> json = new ArrayList<>();
    for (Object op : ops) {
      @SuppressWarnings("unchecked")
      Map.Entry<Operation, Map<String, Object>> e = (Map.Entry<Operation, Map<String, Object>>) op;
      operations.add(e.getKey());
      json.add(e.getValue());
    }
    List<Object> newIds = new ArrayList<>();
    Hash hash =
        store
            .commit(
                BranchName.of(branch),
                Optional.empty(),
                commitMeta,
                operations,
                x -> {},
                (key, id) -> {
                  ids.put(key.getElements(), id);
                  newIds.add(List.of(key.getElements(), id));
                })
            .getCommitHash();
    Map<String, Object> step =
        obj("name", name, "op", "commit", "branch", branch, "message", commitMeta.getMessage());
    step.put("author_time", commitMeta.getAuthorTime().toString());
    step.put("authors", commitMeta.getAllAuthors());
    step.put("signed_off_by", commitMeta.getAllSignedOffBy());
    List<Object> properties = new ArrayList<>();
    commitMeta.getAllProperties().forEach((k, vs) -> properties.add(List.of(k, vs)));
    step.put("properties", properties);
    step.put("operations", json);
    step.put("new_content_ids", newIds);
    step.put("hash", hash.asString());
    steps.add(step);
  }

  private void merge(String name, String from, String into, String message) throws Exception {
    Hash fromHash = head(from);
    Hash expected = head(into);
    CommitMeta mergeMeta = meta(message).build();
    MetadataRewriter<CommitMeta> rewriter =
        new MetadataRewriter<>() {
          @Override
          public CommitMeta rewriteSingle(CommitMeta metadata) {
            return metadata;
          }

          @Override
          public CommitMeta squash(List<CommitMeta> metadata, int numCommits) {
            return mergeMeta;
          }
        };
    Hash hash =
        store
            .merge(
                VersionStore.MergeOp.builder()
                    .fromRef(BranchName.of(from))
                    .fromHash(fromHash)
                    .toBranch(BranchName.of(into))
                    .expectedHash(Optional.of(expected))
                    .updateCommitMetadata(rewriter)
                    .build())
            .getResultantTargetHash();
    steps.add(
        obj(
            "name", name,
            "op", "merge",
            "from", from,
            "from_hash", fromHash.asString(),
            "into", into,
            "expected_hash", expected.asString(),
            "message", message,
            "hash", hash.asString()));
  }

  private Map.Entry<Operation, Map<String, Object>> put(Map.Entry<List<String>, Spec> keyed) {
    List<String> key = keyed.getKey();
    Spec spec = keyed.getValue();
    Content content = spec.content();
    Map<String, Object> json = new LinkedHashMap<>(spec.json());
    String existing = ids.get(key);
    if (existing != null) {
      content = content.withId(existing);
      json.put("id", existing);
    }
    return Map.entry(
        Operation.Put.of(ContentKey.of(key), content),
        obj("op", "put", "key", key, "content", json));
  }

  private Map.Entry<Operation, Map<String, Object>> delete(List<String> key) {
    return Map.entry(Operation.Delete.of(ContentKey.of(key)), obj("op", "delete", "key", key));
  }

  // --- content ------------------------------------------------------------------------------------

  private static Map.Entry<List<String>, Spec> namespace(List<String> key, String... properties) {
    Map<String, String> props = new LinkedHashMap<>();
    for (int i = 0; i < properties.length; i += 2) {
      props.put(properties[i], properties[i + 1]);
    }
    Content c = ImmutableNamespace.builder().elements(key).properties(props).build();
    return Map.entry(
        key, new Spec(c, obj("type", "NAMESPACE", "elements", key, "properties", props)));
  }

  private static Map.Entry<List<String>, Spec> table(List<String> key, String location, long snap) {
    Content c = IcebergTable.of(location, snap, 1, 0, 0);
    return Map.entry(
        key,
        new Spec(
            c,
            obj(
                "type", "ICEBERG_TABLE",
                "metadataLocation", location,
                "snapshotId", snap,
                "schemaId", 1,
                "specId", 0,
                "sortOrderId", 0)));
  }

  private static Map.Entry<List<String>, Spec> view(
      List<String> key, String location, String sql, String dialect) {
    Content c =
        ImmutableIcebergView.builder()
            .metadataLocation(location)
            .versionId(1)
            .schemaId(0)
            .sqlText(sql)
            .dialect(dialect)
            .build();
    Map<String, Object> json =
        obj("type", "ICEBERG_VIEW", "metadataLocation", location, "versionId", 1L, "schemaId", 0);
    json.put("sqlText", sql);
    if (dialect != null) {
      json.put("dialect", dialect);
    }
    return Map.entry(key, new Spec(c, json));
  }

  private static Map.Entry<List<String>, Spec> delta(List<String> key) {
    Content c =
        ImmutableDeltaLakeTable.builder()
            .addMetadataLocationHistory("s3://w/d/_delta_log/1.json", "s3://w/d/_delta_log/0.json")
            .addCheckpointLocationHistory("s3://w/d/_delta_log/0.checkpoint.parquet")
            .lastCheckpoint("s3://w/d/_delta_log/_last_checkpoint")
            .build();
    return Map.entry(
        key,
        new Spec(
            c,
            obj(
                "type", "DELTA_LAKE_TABLE",
                "metadataLocationHistory",
                    List.of("s3://w/d/_delta_log/1.json", "s3://w/d/_delta_log/0.json"),
                "checkpointLocationHistory", List.of("s3://w/d/_delta_log/0.checkpoint.parquet"),
                "lastCheckpoint", "s3://w/d/_delta_log/_last_checkpoint")));
  }

  private static Map.Entry<List<String>, Spec> udf(List<String> key) {
    String location = "s3://w/" + String.join("/", key) + ".json";
    Content c =
        ImmutableUDF.builder().metadataLocation(location).versionId("1").signatureId("s1").build();
    return Map.entry(
        key,
        new Spec(
            c,
            obj(
                "type", "UDF",
                "metadataLocation", location,
                "versionId", "1",
                "signatureId", "s1")));
  }

  // --- header orders ------------------------------------------------------------------------------

  /** Random name sequences (repeats included) and the order Nessie's CommitHeaders iterates them. */
  private static List<Object> headerOrders() {
    Random random = new Random(SEED);
    int[] alphabet = "abcdefghijklmnopqrstuvwxyz-_0123456789éσ😀".codePoints().toArray();
    List<Object> out = new ArrayList<>();
    for (int t = 0; t < 300; t++) {
      int n = 1 + random.nextInt(t % 10 == 0 ? 100 : 20);
      List<String> names = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        if (!names.isEmpty() && random.nextInt(5) == 0) {
          names.add(names.get(random.nextInt(names.size())));
          continue;
        }
        StringBuilder sb = new StringBuilder();
        int len = 1 + random.nextInt(10);
        for (int j = 0; j < len; j++) {
          sb.appendCodePoint(alphabet[random.nextInt(alphabet.length)]);
        }
        names.add(sb.toString());
      }
      var builder = org.projectnessie.versioned.storage.common.objtypes.CommitHeaders.newCommitHeaders();
      names.forEach(name -> builder.add(name, "v"));
      out.add(obj("names", names, "java_order", new ArrayList<>(builder.build().keySet())));
    }
    return out;
  }
}
