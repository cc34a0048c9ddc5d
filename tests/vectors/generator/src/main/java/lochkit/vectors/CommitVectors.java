package lochkit.vectors;

import static lochkit.vectors.Util.element;
import static lochkit.vectors.Util.elements;
import static lochkit.vectors.Util.hex;
import static lochkit.vectors.Util.hexList;
import static lochkit.vectors.Util.obj;
import static lochkit.vectors.Util.randomBytes;
import static lochkit.vectors.Util.randomObjId;
import static lochkit.vectors.Util.randomUuid;
import static lochkit.vectors.Util.uuid;
import static org.projectnessie.versioned.storage.common.indexes.StoreIndexes.deserializeStoreIndex;
import static org.projectnessie.versioned.storage.common.indexes.StoreKey.key;
import static org.projectnessie.versioned.storage.common.logic.CommitLogic.ValueReplacement.NO_VALUE_REPLACEMENT;
import static org.projectnessie.versioned.storage.common.logic.CreateCommit.Add.commitAdd;
import static org.projectnessie.versioned.storage.common.logic.CreateCommit.Remove.commitRemove;
import static org.projectnessie.versioned.storage.common.logic.CreateCommit.Unchanged.commitUnchanged;
import static org.projectnessie.versioned.storage.common.logic.CreateCommit.newCommitBuilder;
import static org.projectnessie.versioned.storage.common.logic.Logics.commitLogic;
import static org.projectnessie.versioned.storage.common.objtypes.CommitOp.COMMIT_OP_SERIALIZER;
import static org.projectnessie.versioned.storage.common.persist.ObjId.EMPTY_OBJ_ID;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.function.UnaryOperator;
import lochkit.vectors.Util.HeaderPairs;
import org.projectnessie.nessie.relocated.protobuf.ByteString;
import org.projectnessie.versioned.storage.common.config.StoreConfig;
import org.projectnessie.versioned.storage.common.exceptions.CommitConflictException;
import org.projectnessie.versioned.storage.common.indexes.StoreKey;
import org.projectnessie.versioned.storage.common.logic.CommitLogic;
import org.projectnessie.versioned.storage.common.logic.ConflictHandler.ConflictResolution;
import org.projectnessie.versioned.storage.common.logic.CreateCommit;
import org.projectnessie.versioned.storage.common.objtypes.CommitHeaders;
import org.projectnessie.versioned.storage.common.objtypes.CommitObj;
import org.projectnessie.versioned.storage.common.objtypes.CommitType;
import org.projectnessie.versioned.storage.common.objtypes.ContentValueObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexSegmentsObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexStripe;
import org.projectnessie.versioned.storage.common.objtypes.StandardObjType;
import org.projectnessie.versioned.storage.common.persist.Obj;
import org.projectnessie.versioned.storage.common.persist.ObjId;
import org.projectnessie.versioned.storage.common.persist.Persist;
import org.projectnessie.versioned.storage.inmemory.InmemoryBackendConfig;
import org.projectnessie.versioned.storage.inmemory.InmemoryBackendFactory;

/**
 * Commit vectors: chains of commits built by Nessie's CommitLogic on Nessie's in-memory Persist,
 * one fresh repository per chain, with a fixed clock.
 */
final class CommitVectors {
  static final long SEED = 0x10c4_0003L;
  static final Instant NOW = Instant.parse("2024-01-02T03:04:05.678901Z");

  private final Random random = new Random(SEED);

  // --- requests ------------------------------------------------------------------------------

  /** One operation of a commit request; {@code value} is null except for adds. */
  record Op(String type, StoreKey key, int payload, ObjId value, ObjId expected, UUID contentId) {
    Map<String, Object> json() {
      return obj(
          "type", type,
          "key", elements(key),
          "payload", payload,
          "value", hex(value),
          "expected_value", hex(expected),
          "content_id", uuid(contentId));
    }
  }

  /** A commit request: everything CreateCommit takes, plus the conflict handler to use. */
  static final class Request {
    ObjId parent;
    String message;
    HeaderPairs headers = HeaderPairs.of();
    List<ObjId> secondaryParents = new ArrayList<>();
    CommitType commitType = CommitType.NORMAL;
    ConflictResolution onConflict = ConflictResolution.CONFLICT;
    final List<Op> ops = new ArrayList<>();

    Request(ObjId parent, String message) {
      this.parent = parent;
      this.message = message;
    }

    Request headers(String... namesAndValues) {
      headers = HeaderPairs.of(namesAndValues);
      return this;
    }

    Request op(Op op) {
      ops.add(op);
      return this;
    }

    Request copy() {
      Request c = new Request(parent, message);
      c.headers = headers;
      c.secondaryParents = new ArrayList<>(secondaryParents);
      c.commitType = commitType;
      c.onConflict = onConflict;
      c.ops.addAll(ops);
      return c;
    }

    CreateCommit toCreateCommit() {
      CreateCommit.Builder b =
          newCommitBuilder()
              .parentCommitId(parent)
              .message(message)
              .headers(headers.build())
              .commitType(commitType);
      secondaryParents.forEach(b::addSecondaryParents);
      for (Op op : ops) {
        switch (op.type()) {
          case "add" ->
              b.addAdds(commitAdd(op.key(), op.payload(), op.value(), op.expected(), op.contentId()));
          case "remove" ->
              b.addRemoves(commitRemove(op.key(), op.payload(), op.expected(), op.contentId()));
          case "unchanged" ->
              b.addUnchanged(commitUnchanged(op.key(), op.payload(), op.expected(), op.contentId()));
          default -> throw new IllegalArgumentException(op.type());
        }
      }
      return b.build();
    }

    Map<String, Object> json() {
      CommitHeaders built = headers.build();
      Map<String, Object> json = obj("parent", hex(parent), "secondary_parents", hexList(secondaryParents),
          "message", message);
      Util.putHeaders(json, headers, built);
      json.put("commit_type", commitType.name());
      json.put("conflict_handler", onConflict.name());
      json.put("ops", ops.stream().map(o -> (Object) o.json()).toList());
      return json;
    }
  }

  // --- one chain = one in-memory repository --------------------------------------------------

  record Live(ObjId value, int payload, UUID contentId) {}

  final class Chain {
    final String name;
    final String description;
    final StoreConfig config;
    final Persist persist;
    final CommitLogic logic;
    final Map<String, CommitObj> commits = new HashMap<>();
    final Map<StoreKey, Live> live = new LinkedHashMap<>();
    final List<Object> json = new ArrayList<>();
    final List<Obj> pendingValues = new ArrayList<>();
    ObjId head = EMPTY_OBJ_ID;

    Chain(String name, String description, UnaryOperator<StoreConfig.Adjustable> adjust) {
      this.name = name;
      this.description = description;
      StoreConfig.Adjustable base =
          StoreConfig.Adjustable.empty().withClock(Clock.fixed(NOW, ZoneOffset.UTC));
      this.config = adjust.apply(base);
      var backend = new InmemoryBackendFactory().buildBackend(InmemoryBackendConfig.builder().build());
      backend.setupSchema();
      this.persist = backend.createFactory().newPersist(config);
      this.logic = commitLogic(persist);
    }

    /** A new ContentValueObj (stored with the next commit); returns its id. */
    ObjId newValue(UUID contentId, int payload) {
      String cid = contentId != null ? contentId.toString() : "no-content-id";
      ByteString data = ByteString.copyFrom(randomBytes(random, 40));
      ContentValueObj v = ContentValueObj.contentValue(cid, payload, data);
      pendingValues.add(v);
      return v.id();
    }

    Op addNew(StoreKey key, int payload, UUID contentId) {
      return new Op("add", key, payload, newValue(contentId, payload), null, contentId);
    }

    Op update(StoreKey key) {
      Live l = live.get(key);
      return new Op("add", key, l.payload(), newValue(l.contentId(), l.payload()), l.value(), l.contentId());
    }

    Op remove(StoreKey key) {
      Live l = live.get(key);
      return new Op("remove", key, l.payload(), null, l.value(), l.contentId());
    }

    Op unchanged(StoreKey key) {
      Live l = live.get(key);
      return new Op("unchanged", key, l.payload(), null, l.value(), l.contentId());
    }

    Request request(String message) {
      return new Request(head, message);
    }

    /** Builds and stores a commit (buildCommitObj + storeCommit, i.e. what doCommit does). */
    CommitObj commit(String commitName, Request request) throws Exception {
      // Stored commits become parents; keep them replayable by implementations that sort names.
      IndexVectors.check(
          new ArrayList<>(request.headers.build().keySet()).equals(
              request.headers.build().keySet().stream().sorted(Util::compareCodePoints).toList()),
          commitName + ": headers of a stored commit must iterate in sorted order");
      CommitObj built = logic.buildCommitObj(request.toCreateCommit(), c -> request.onConflict,
          (k, v) -> {}, NO_VALUE_REPLACEMENT, NO_VALUE_REPLACEMENT);
      CommitObj stored = logic.storeCommit(built, new ArrayList<>(pendingValues)).obj().orElseThrow();
      pendingValues.clear();
      IndexVectors.check(stored.id().equals(built.id()), "storing changed the commit id");
      commits.put(commitName, stored);
      head = stored.id();
      for (Op op : request.ops) {
        switch (op.type()) {
          case "remove" -> live.remove(op.key());
          case "add" -> live.put(op.key(), new Live(op.value(), op.payload(), op.contentId()));
          default -> {}
        }
      }
      json.add(commitJson(commitName, request, built, stored, null));
      return stored;
    }

    /** Builds a commit without storing it, to compare its id with a stored one. */
    void buildOnly(String commitName, String note, Request request, String sameIdAs, String differentFrom)
        throws Exception {
      CommitObj built = logic.buildCommitObj(request.toCreateCommit(), c -> request.onConflict,
          (k, v) -> {}, NO_VALUE_REPLACEMENT, NO_VALUE_REPLACEMENT);
      pendingValues.clear();
      if (sameIdAs != null) {
        IndexVectors.check(built.id().equals(commits.get(sameIdAs).id()), commitName + " id differs");
      }
      if (differentFrom != null) {
        IndexVectors.check(!built.id().equals(commits.get(differentFrom).id()), commitName + " id equal");
      }
      // Every variant changes only what the id does or does not cover, never the index.
      CommitObj compared = commits.get(sameIdAs != null ? sameIdAs : differentFrom);
      IndexVectors.check(built.incrementalIndex().equals(compared.incrementalIndex()),
          commitName + ": incremental index differs from the commit it varies");
      Map<String, Object> j = commitJson(commitName, request, built, null, note);
      j.put("same_id_as", sameIdAs);
      j.put("different_id_from", differentFrom);
      json.add(j);
    }

    /** A request Nessie rejects: records the conflicts it reports. */
    void conflict(String commitName, Request request) {
      try {
        logic.buildCommitObj(request.toCreateCommit());
        throw new IllegalStateException(commitName + ": expected a commit conflict");
      } catch (CommitConflictException e) {
        Map<String, Object> j = obj("name", commitName, "stored", false);
        j.putAll(request.json());
        j.put("conflicts", e.conflicts().stream()
            .map(c -> (Object) obj("key", elements(c.key()), "type", c.conflictType().name()))
            .toList());
        json.add(j);
      } catch (Exception e) {
        throw new IllegalStateException(commitName, e);
      } finally {
        pendingValues.clear();
      }
    }

    Map<String, Object> json() {
      return obj(
          "name", name,
          "description", description,
          "config",
              obj(
                  "parents_per_commit", config.parentsPerCommit(),
                  "max_incremental_index_size", config.maxIncrementalIndexSize(),
                  "max_serialized_index_size", config.maxSerializedIndexSize(),
                  "max_reference_stripes_per_commit", config.maxReferenceStripesPerCommit()),
          "commits", json);
    }

    private Map<String, Object> commitJson(
        String commitName, Request request, CommitObj built, CommitObj stored, String note)
        throws Exception {
      CommitObj c = stored != null ? stored : built;
      Map<String, Object> j = obj("name", commitName);
      if (note != null) {
        j.put("note", note);
      }
      j.put("stored", stored != null);
      j.putAll(request.json());
      j.put("id", hex(c.id()));
      j.put("seq", c.seq());
      j.put("tail", hexList(c.tail()));
      j.put("created", c.created());
      j.put("built_incremental_index_hex", hex(built.incrementalIndex()));
      j.put("incremental_index_hex", hex(c.incrementalIndex()));
      List<Object> incremental = new ArrayList<>();
      deserializeStoreIndex(c.incrementalIndex(), COMMIT_OP_SERIALIZER)
          .forEach(e -> incremental.add(element(e.key(), e.content())));
      j.put("incremental_index", incremental);
      j.put("spilled", !built.incrementalIndex().equals(c.incrementalIndex()));
      j.put("reference_index", hex(c.referenceIndex()));
      List<IndexStripe> stripes = c.referenceIndexStripes();
      Map<String, Object> segmentsObj = null;
      if (c.referenceIndex() != null) {
        IndexSegmentsObj s =
            persist.fetchTypedObj(c.referenceIndex(), StandardObjType.INDEX_SEGMENTS, IndexSegmentsObj.class);
        stripes = s.stripes();
        segmentsObj = obj("id", hex(s.id()), "stripes", stripesJson(s.stripes()));
      }
      j.put("reference_index_stripes", stripesJson(c.referenceIndexStripes()));
      j.put("reference_index_segments_obj", segmentsObj);
      Map<String, Object> segments = new LinkedHashMap<>();
      for (IndexStripe stripe : stripes) {
        IndexObj index = persist.fetchTypedObj(stripe.segment(), StandardObjType.INDEX, IndexObj.class);
        segments.put(hex(stripe.segment()), hex(index.index()));
      }
      j.put("index_objs", segments);
      return j;
    }
  }

  private static List<Object> stripesJson(List<IndexStripe> stripes) {
    return stripes.stream()
        .map(s -> (Object) obj(
            "first_key", elements(s.firstKey()),
            "last_key", elements(s.lastKey()),
            "segment", hex(s.segment())))
        .toList();
  }

  // --- the chains ----------------------------------------------------------------------------

  static Map<String, Object> generate() throws Exception {
    CommitVectors v = new CommitVectors();
    List<Object> chains = new ArrayList<>();
    chains.add(v.basicChain().json());
    chains.add(v.tailChain().json());
    chains.add(v.spillChain().json());
    chains.add(v.segmentsChain().json());
    return obj(
        "format", "lochkit nessie commit vectors v1",
        "nessie_version", Util.NESSIE_VERSION,
        "seed", SEED,
        "clock", NOW.toString(),
        "chains", chains);
  }

  private static final StoreKey NS = key("ns");
  private static final StoreKey TABLE = key("ns", "table1");
  private static final StoreKey VIEW = key("ns", "view");
  private static final StoreKey DELTA = key("ns", "delta");
  private static final StoreKey DELTA_RENAMED = key("ns", "delta_renamed");
  private static final StoreKey NO_CID = key("no-content-id");
  private static final StoreKey P127 = key("p127");
  private static final StoreKey UNICODE = key("ünï", "😀");

  private Chain basicChain() throws Exception {
    Chain c = new Chain("basic", "adds, updates, removes, renames, re-adds, headers", a -> a);

    c.commit("root", c.request("Initial commit")
        .headers("author", "Alice <alice@example.com>")
        .op(c.addNew(NS, 4, randomUuid(random)))
        .op(c.addNew(TABLE, 1, randomUuid(random)))
        .op(c.addNew(VIEW, 3, randomUuid(random)))
        .op(c.addNew(NO_CID, 0, null))
        .op(c.addNew(DELTA, 2, randomUuid(random)))
        .op(c.addNew(P127, 127, randomUuid(random)))
        .op(c.addNew(UNICODE, 5, randomUuid(random))));

    // Nessie's own create-reference headers: several names whose HashMap order is sorted order.
    c.commit("update", c.request("Update table1")
        .headers("operation", "update", "name", "refs/heads/main", "Name", "refs/heads/other",
            "head", "0011", "timestamp", "2024-01-02T03:04:05Z")
        .op(c.update(TABLE)));

    c.commit("remove", c.request("Remove two keys")
        .op(c.remove(NO_CID))
        .op(c.remove(VIEW)));

    Live delta = c.live.get(DELTA);
    c.commit("rename", c.request("Rename delta")
        .headers("signed-off-by", "Alice", "signed-off-by", "Bob", "signed-off-by", "Alice")
        .op(c.remove(DELTA))
        .op(new Op("add", DELTA_RENAMED, delta.payload(), c.newValue(delta.contentId(), delta.payload()),
            delta.value(), delta.contentId())));

    // Re-add: remove + add of the same key in one commit, new content id and payload.
    c.commit("re-add-same-commit", c.request("Re-add table1 as a view")
        .op(c.remove(TABLE))
        .op(c.addNew(TABLE, 3, randomUuid(random))));

    // Add again a key removed by an earlier commit.
    c.commit("re-add-later", c.request("Bring back no-content-id")
        .op(c.addNew(NO_CID, 0, null)));

    c.commit("empty", c.request("An empty commit").headers("x-reason", "no operations"));

    c.commit("non-ascii-message", c.request("Ünïcödé message 😀\n\nwith a body\n")
        .headers("a", "1", "b", "ünï", "c", "😀", "a", "2", "a", "1")
        .op(c.update(P127)));

    // Several adds and removes; adds deliberately not in key order.
    Request multi = c.request("Multi")
        .op(c.remove(P127))
        .op(c.remove(UNICODE))
        .op(c.addNew(key("zz"), 1, randomUuid(random)))
        .op(c.addNew(key("aa"), 1, randomUuid(random)))
        .op(c.addNew(key("mm", "nn"), 1, randomUuid(random)))
        .op(c.update(NS));
    Request multiBase = multi.copy();
    c.commit("multi", multi);

    // --- variants that are built but not stored, compared with the commit they vary ----------
    // Copies of the "multi" request keep its parent, although the head has moved on since.
    List<Op> ops = multiBase.ops;

    Request swapped = multiBase.copy();
    swapped.ops.clear();
    swapped.op(ops.get(1)).op(ops.get(0)).op(ops.get(3)).op(ops.get(2)).op(ops.get(4)).op(ops.get(5));
    c.buildOnly("multi-swapped-order",
        "same operations in another request order: the id covers the request order, the index does not",
        swapped, null, "multi");

    Request withSecondary = multiBase.copy();
    withSecondary.secondaryParents.add(c.commits.get("root").id());
    withSecondary.secondaryParents.add(randomObjId(random));
    c.buildOnly("multi-secondary-parents", "secondary parents are not part of the id",
        withSecondary, "multi", null);

    Request internal = multiBase.copy();
    internal.commitType = CommitType.INTERNAL;
    c.buildOnly("multi-internal", "the commit type is not part of the id", internal, "multi", null);

    // DELTA_RENAMED is live in the parent of "multi" and not touched by it.
    Request withUnchanged = multiBase.copy();
    withUnchanged.op(c.unchanged(DELTA_RENAMED));
    c.buildOnly("multi-unchanged", "unchanged checks are not part of the id", withUnchanged, "multi", null);

    Request otherExpected = multiBase.copy();
    otherExpected.onConflict = ConflictResolution.ADD;
    Op nsUpdate = otherExpected.ops.remove(5);
    otherExpected.op(new Op("add", nsUpdate.key(), nsUpdate.payload(), nsUpdate.value(),
        randomObjId(random), nsUpdate.contentId()));
    c.buildOnly("multi-other-expected-value",
        "a different expected value (conflict handler ADD keeps the op): expected values are not part of the id",
        otherExpected, "multi", null);

    Request dropped = multiBase.copy();
    dropped.onConflict = ConflictResolution.DROP;
    dropped.op(new Op("add", TABLE, 1, randomObjId(random), null, randomUuid(random)));
    c.buildOnly("multi-dropped-conflict",
        "an extra add of an existing key with expected=null is dropped by conflict handler DROP",
        dropped, "multi", null);

    // The version store's usual headers iterate in an unsorted order in the JVM.
    Request versionStoreHeaders = multiBase.copy()
        .headers("author", "Alice", "author", "Carol", "committer", "Bob", "date", "2024-01-02T03:04:05Z",
            "author-date", "2024-01-01T00:00:00Z", "signed-off-by", "Dave", "x-custom", "1");
    c.buildOnly("multi-version-store-headers",
        "headers as the version store writes them; the JVM iterates these names in unsorted order",
        versionStoreHeaders, null, "multi");

    conflicts(c);
    return c;
  }

  /** Requests on the head of the basic chain that Nessie rejects, with the conflicts it reports. */
  private void conflicts(Chain c) {
    Live ns = c.live.get(NS);
    c.conflict("conflict-key-exists", c.request("x").op(c.addNew(NS, 4, randomUuid(random))));
    c.conflict("conflict-key-does-not-exist",
        c.request("x").op(new Op("remove", key("missing"), 1, null, randomObjId(random), null)));
    c.conflict("conflict-payload-differs",
        c.request("x").op(new Op("add", NS, 1, randomObjId(random), ns.value(), ns.contentId())));
    c.conflict("conflict-content-id-differs",
        c.request("x")
            .op(new Op("add", NS, ns.payload(), randomObjId(random), ns.value(), randomUuid(random))));
    c.conflict("conflict-value-differs",
        c.request("x").op(new Op("add", NS, ns.payload(), randomObjId(random), randomObjId(random),
            ns.contentId())));
    Live table = c.live.get(TABLE);
    c.conflict("conflict-rename-onto-existing",
        c.request("x")
            .op(c.remove(TABLE))
            .op(new Op("add", NS, table.payload(), randomObjId(random), table.value(), table.contentId())));
    c.conflict("conflict-several",
        c.request("x")
            .op(new Op("remove", key("missing"), 1, null, randomObjId(random), null))
            .op(c.addNew(NS, 4, randomUuid(random)))
            .op(new Op("unchanged", TABLE, table.payload(), null, randomObjId(random), table.contentId())));
  }

  private Chain tailChain() throws Exception {
    Chain c = new Chain("tail", "parents-per-commit = 3: the tail keeps the 3 nearest ancestors",
        a -> a.withParentsPerCommit(3));
    for (int i = 1; i <= 6; i++) {
      c.commit("c" + i, c.request("commit " + i).op(c.addNew(key("k" + i), 1, randomUuid(random))));
    }
    return c;
  }

  private Chain spillChain() throws Exception {
    Chain c = new Chain("spill",
        "tiny limits force the incremental index to spill into embedded reference-index stripes",
        a -> a.withMaxIncrementalIndexSize(2048).withMaxSerializedIndexSize(4096));
    spillCommits(c);
    return c;
  }

  private Chain segmentsChain() throws Exception {
    Chain c = new Chain("spill-segments",
        "tiny limits and at most 2 embedded stripes: the reference index goes to an IndexSegmentsObj",
        a -> a.withMaxIncrementalIndexSize(2048).withMaxSerializedIndexSize(1024)
            .withMaxReferenceStripesPerCommit(2));
    spillCommits(c);
    return c;
  }

  /** Eight commits of ten adds, then updates and removes of keys that were spilled. */
  private void spillCommits(Chain c) throws Exception {
    for (int i = 0; i < 8; i++) {
      Request r = c.request("batch " + i);
      for (int k = 0; k < 10; k++) {
        r.op(c.addNew(key("db", String.format("table_%02d_%02d", k, i)), 1, randomUuid(random)));
      }
      c.commit("batch-" + i, r);
    }
    c.commit("update-spilled", c.request("update spilled keys")
        .op(c.update(key("db", "table_00_00")))
        .op(c.update(key("db", "table_05_03"))));
    c.commit("remove-spilled", c.request("remove spilled keys")
        .op(c.remove(key("db", "table_01_00")))
        .op(c.remove(key("db", "table_09_07"))));
    for (int i = 0; i < 3; i++) {
      Request r = c.request("more " + i);
      for (int k = 0; k < 10; k++) {
        r.op(c.addNew(key("db2", String.format("t_%02d_%02d", k, i)), 2, randomUuid(random)));
      }
      c.commit("more-" + i, r);
    }
  }
}
