package lochkit.vectors;

import static lochkit.vectors.Util.hex;
import static lochkit.vectors.Util.hexList;
import static lochkit.vectors.Util.obj;
import static lochkit.vectors.Util.randomBytes;
import static lochkit.vectors.Util.randomObjId;
import static org.projectnessie.versioned.storage.common.config.StoreConfig.DEFAULT_MAX_INCREMENTAL_INDEX_SIZE;
import static org.projectnessie.versioned.storage.common.config.StoreConfig.DEFAULT_MAX_SERIALIZED_INDEX_SIZE;
import static org.projectnessie.versioned.storage.common.indexes.StoreKey.keyFromString;
import static org.projectnessie.versioned.storage.common.objtypes.CommitObj.commitBuilder;
import static org.projectnessie.versioned.storage.common.persist.ObjId.EMPTY_OBJ_ID;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import lochkit.vectors.Util.HeaderPairs;
import org.projectnessie.nessie.relocated.protobuf.ByteString;
import org.projectnessie.versioned.storage.common.indexes.StoreKey;
import org.projectnessie.versioned.storage.common.objtypes.CommitHeaders;
import org.projectnessie.versioned.storage.common.objtypes.CommitObj;
import org.projectnessie.versioned.storage.common.objtypes.CommitType;
import org.projectnessie.versioned.storage.common.objtypes.Compression;
import org.projectnessie.versioned.storage.common.objtypes.ContentValueObj;
import org.projectnessie.versioned.storage.common.objtypes.GenericObj;
import org.projectnessie.versioned.storage.common.objtypes.GenericObjTypeMapper;
import org.projectnessie.versioned.storage.common.objtypes.ImmutableGenericObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexSegmentsObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexStripe;
import org.projectnessie.versioned.storage.common.objtypes.RefObj;
import org.projectnessie.versioned.storage.common.objtypes.StringObj;
import org.projectnessie.versioned.storage.common.objtypes.TagObj;
import org.projectnessie.versioned.storage.common.objtypes.UniqueIdObj;
import org.projectnessie.versioned.storage.common.persist.Obj;
import org.projectnessie.versioned.storage.common.persist.ObjId;
import org.projectnessie.versioned.storage.common.persist.Reference;
import org.projectnessie.versioned.storage.common.persist.Reference.PreviousPointer;
import org.projectnessie.versioned.storage.serialize.ProtoSerialization;

/**
 * Stored-byte vectors: every object of the object-id vectors (rebuilt from their recorded fields),
 * a few commits and custom objects, and references, serialised by Nessie's {@code
 * ProtoSerialization} exactly as its backends store them.
 */
final class ObjProtoVectors {
  static final long SEED = 0x10c4_0004L;

  /** The {@code referenced} value of the RocksDB-style serialisations (any nonzero µs value). */
  static final long REFERENCED = 1_700_000_000_654_321L;

  private static final HexFormat HEX = HexFormat.of();

  private final Random random = new Random(SEED);
  private final List<Object> objects = new ArrayList<>();
  private final List<Object> references = new ArrayList<>();

  static Map<String, Object> generate() throws Exception {
    ObjProtoVectors v = new ObjProtoVectors();
    v.objectIdVectorObjects();
    v.commits();
    v.customObjects();
    v.references();
    return obj(
        "format", "lochkit nessie objproto vectors v1",
        "nessie_version", Util.NESSIE_VERSION,
        "seed", SEED,
        "incremental_index_limit", DEFAULT_MAX_INCREMENTAL_INDEX_SIZE,
        "index_segment_limit", DEFAULT_MAX_SERIALIZED_INDEX_SIZE,
        "objects", v.objects,
        "references", v.references);
  }

  // --- objects -------------------------------------------------------------------------------

  /**
   * The two ways Nessie's backends serialise an object: the column backends (JDBC2, MONGODB2,
   * CASSANDRA2, DYNAMODB2) with {@code referenced} 0 and the version token in its own column, and
   * RocksDB with the write time and the token inside the blob. A third, with the -1 "no value"
   * sentinel, covers a negative {@code referenced}.
   */
  private static List<Object> serializations(Obj obj) throws Exception {
    List<Object> out = new ArrayList<>();
    out.add(serialization(obj, 0L, false));
    out.add(serialization(obj, REFERENCED, true));
    out.add(serialization(obj, -1L, false));
    return out;
  }

  private static Map<String, Object> serialization(Obj obj, long referenced, boolean withToken)
      throws Exception {
    Obj withReferenced = obj.withReferenced(referenced);
    byte[] bytes =
        ProtoSerialization.serializeObj(
            withReferenced,
            DEFAULT_MAX_INCREMENTAL_INDEX_SIZE,
            DEFAULT_MAX_SERIALIZED_INDEX_SIZE,
            withToken);
    return obj(
        "referenced", referenced,
        "include_version_token", withToken,
        "nessie_reads_back", readsBack(obj, bytes, referenced),
        "hex", hex(bytes));
  }

  /**
   * Whether Nessie reads its own bytes back to an equal object with that referenced value. Not
   * always: a RefObj with a zero-length initial pointer is written, but reading it fails (the empty
   * bytes become a null pointer, which RefObj refuses).
   */
  private static boolean readsBack(Obj obj, byte[] bytes, long referenced) {
    Obj back;
    try {
      back = ProtoSerialization.deserializeObj(obj.id(), 0L, bytes, null);
    } catch (NullPointerException e) {
      return false;
    }
    // Nessie's GenericObj has no place for `referenced` when read back; every other type keeps it.
    boolean referencedKept = back instanceof GenericObj || back.referenced() == referenced;
    if (!referencedKept || !back.type().shortName().equals(obj.type().shortName())) {
      throw new IllegalStateException("Nessie read back another object for " + obj);
    }
    return true;
  }

  private void addObject(String name, String source, Obj obj, Map<String, Object> fields)
      throws Exception {
    Map<String, Object> vector = obj("name", name, "source", source, "id", hex(obj.id()));
    vector.putAll(fields);
    vector.put("serialized", serializations(obj));
    objects.add(vector);
  }

  /** Every object of the object-id vectors, rebuilt from the fields they recorded. */
  @SuppressWarnings("unchecked")
  private void objectIdVectorObjects() throws Exception {
    List<Object> vectors = (List<Object>) ObjectIdVectors.generate().get("vectors");
    for (Object o : vectors) {
      Map<String, Object> v = (Map<String, Object>) o;
      String type = (String) v.get("type");
      if (type.equals("EMPTY_OBJ_ID")) {
        continue; // an id, not an object
      }
      Obj obj = rebuild(type, v);
      if (!hex(obj.id()).equals(v.get("id"))) {
        throw new IllegalStateException("rebuilt " + v.get("name") + " has another id");
      }
      addObject((String) v.get("name"), "nessie-object-ids.json", obj, obj("type", type));
    }
  }

  @SuppressWarnings("unchecked")
  private static Obj rebuild(String type, Map<String, Object> v) {
    return switch (type) {
      case "VALUE" ->
          ContentValueObj.contentValue(
              (String) v.get("content_id"), (Integer) v.get("payload"), bytes(v, "data_hex"));
      case "REF" ->
          RefObj.ref(
              (String) v.get("ref_name"),
              id((String) v.get("initial_pointer")),
              (Long) v.get("created_at_micros"),
              id((String) v.get("extended_info_obj")));
      case "TAG" -> {
        List<List<String>> pairs = (List<List<String>>) v.get("headers");
        CommitHeaders headers = pairs == null ? null : new HeaderPairs(pairs).build();
        yield TagObj.tag((String) v.get("message"), headers, bytes(v, "signature_hex"));
      }
      case "STRING" ->
          StringObj.stringData(
              (String) v.get("content_type"),
              Compression.valueOf((String) v.get("compression")),
              (String) v.get("filename"),
              ((List<String>) v.get("predecessors")).stream().map(ObjProtoVectors::id).toList(),
              bytes(v, "text_hex"));
      case "INDEX" -> IndexObj.index(bytes(v, "index_hex"));
      case "INDEX_SEGMENTS" -> {
        List<IndexStripe> stripes = new ArrayList<>();
        for (Object s : (List<Object>) v.get("stripes")) {
          Map<String, Object> stripe = (Map<String, Object>) s;
          stripes.add(
              IndexStripe.indexStripe(
                  key((List<String>) stripe.get("first_key")),
                  key((List<String>) stripe.get("last_key")),
                  id((String) stripe.get("segment"))));
        }
        yield IndexSegmentsObj.indexSegments(stripes);
      }
      case "UNIQUE" -> UniqueIdObj.uniqueId((String) v.get("space"), bytes(v, "value_hex"));
      default -> throw new IllegalArgumentException("unknown vector type " + type);
    };
  }

  // --- commits -------------------------------------------------------------------------------

  /** Commits with every field set and unset; their ids are random (the codec does not derive them). */
  private void commits() throws Exception {
    commit("commit-minimal", 0L, 1L, List.of(EMPTY_OBJ_ID), List.of(), HeaderPairs.of(), "",
        new byte[0], null, List.of(), false, CommitType.NORMAL);
    commit("commit-everything", 1_704_164_645_678_901L, 42L,
        List.of(randomObjId(random), randomObjId(random), randomObjId(random)),
        List.of(randomObjId(random), randomObjId(random)),
        HeaderPairs.of("author", "Alice <alice@example.com>"),
        "ünïcödé message\nwith 😀 and a second line",
        new byte[] {2, 0}, randomObjId(random),
        List.of(
            IndexStripe.indexStripe(StoreKey.key("a"), StoreKey.key("m"), randomObjId(random)),
            IndexStripe.indexStripe(
                keyFromString("M\u0000db\u0001schema\u0001tbl\u0000C"),
                StoreKey.key("z", "deep"),
                randomObjId(random))),
        true, CommitType.INTERNAL);
    // The version store's usual headers: a Java HashMap iterates them out of sorted order.
    commit("commit-version-store-headers", 1_700_000_000_000_000L, 7L,
        List.of(randomObjId(random)), List.of(),
        HeaderPairs.of(
            "Author", "Alice", "Author", "Carol", "Committer", "Bob",
            "Date", "2024-01-01T00:00:00Z", "Signed-Off-By", "Dave", "Signed-Off-By", "Dave"),
        "with version-store headers", randomBytes(random, 300), null, List.of(), false,
        CommitType.NORMAL);
    commit("commit-negative-and-large", -1L, Long.MAX_VALUE,
        List.of(randomObjId(random), randomObjId(random, 4)), List.of(randomObjId(random)),
        HeaderPairs.of("empty-value", ""), "", randomBytes(random, 2000), null, List.of(), true,
        CommitType.NORMAL);
    commit("commit-segments-reference-index", 1L, 3L, List.of(randomObjId(random)), List.of(),
        HeaderPairs.of(), "spilled", new byte[] {2, 0}, randomObjId(random), List.of(), false,
        CommitType.NORMAL);
  }

  private void commit(
      String name,
      long created,
      long seq,
      List<ObjId> tail,
      List<ObjId> secondaryParents,
      HeaderPairs headers,
      String message,
      byte[] incrementalIndex,
      ObjId referenceIndex,
      List<IndexStripe> stripes,
      boolean incompleteIndex,
      CommitType commitType)
      throws Exception {
    CommitHeaders built = headers.build();
    CommitObj commit =
        commitBuilder()
            .id(randomObjId(random))
            .created(created)
            .seq(seq)
            .tail(tail)
            .secondaryParents(secondaryParents)
            .headers(built)
            .message(message)
            .incrementalIndex(ByteString.copyFrom(incrementalIndex))
            .referenceIndex(referenceIndex)
            .referenceIndexStripes(stripes)
            .incompleteIndex(incompleteIndex)
            .commitType(commitType)
            .build();
    Map<String, Object> fields =
        obj(
            "type", "COMMIT",
            "created", created,
            "seq", seq,
            "tail", hexList(tail),
            "secondary_parents", hexList(secondaryParents));
    Util.putHeaders(fields, headers, built);
    fields.putAll(
        obj(
            "message", message,
            "incremental_index_hex", hex(incrementalIndex),
            "reference_index", hex(referenceIndex),
            "reference_index_stripes", stripesJson(stripes),
            "incomplete_index", incompleteIndex,
            "commit_type", commitType.name()));
    addObject(name, "nessie-objproto.json", commit, fields);
  }

  private static List<Object> stripesJson(List<IndexStripe> stripes) {
    return stripes.stream()
        .map(
            s ->
                (Object)
                    obj(
                        "first_key", Util.elements(s.firstKey()),
                        "last_key", Util.elements(s.lastKey()),
                        "segment", hex(s.segment())))
        .toList();
  }

  // --- custom objects ------------------------------------------------------------------------

  /**
   * Objects of a type lochkit does not know, as Nessie writes any custom type: Jackson Smile in a
   * {@code CustomProto}, GZIP-compressed above 8 KiB. Nessie's GenericObj stands in for a real
   * custom type (such as the catalog's); the stored form does not depend on the Java class.
   */
  private void customObjects() throws Exception {
    Map<String, Object> small = new LinkedHashMap<>();
    small.put("text", "hello");
    small.put("number", 42);
    small.put("list", Arrays.asList(1, "two", null));
    small.put("map", Map.of("k", "v"));
    custom("custom-small", "lochkit-test", small, null);
    custom("custom-versioned", "lochkit-test-versioned", Map.of("value", "v"), "vt-1");
    Map<String, Object> large = new LinkedHashMap<>();
    large.put("text", "abcdefghij".repeat(2000) + HEX.formatHex(randomBytes(random, 100)));
    custom("custom-large-compressed", "lochkit-test", large, "vt-large");
  }

  private void custom(String name, String type, Map<String, Object> attributes, String token)
      throws Exception {
    ImmutableGenericObj.Builder b =
        ImmutableGenericObj.builder()
            .type(GenericObjTypeMapper.newGenericObjType(type))
            .id(randomObjId(random))
            .attributes(attributes);
    if (token != null) {
      b.putAttributes("versionToken", token);
    }
    addObject(
        name, "nessie-objproto.json", b.build(),
        obj("type", "CUSTOM", "obj_type", type, "version_token", token));
  }

  // --- references ----------------------------------------------------------------------------

  private void references() {
    reference("reference-plain", "main", EMPTY_OBJ_ID, false, 0L, null, List.of());
    reference(
        "reference-everything",
        "refs/heads/ünïcödé-😀",
        randomObjId(random),
        false,
        1_704_164_645_678_901L,
        randomObjId(random),
        List.of(
            PreviousPointer.previousPointer(randomObjId(random), 1_704_164_645_000_000L),
            PreviousPointer.previousPointer(randomObjId(random), 1_704_164_600_000_000L),
            PreviousPointer.previousPointer(EMPTY_OBJ_ID, 1L)));
    reference("reference-deleted", "gone", randomObjId(random), true, 5L, null, List.of());
    reference(
        "reference-history-only",
        "int/refs",
        randomObjId(random),
        false,
        0L,
        null,
        List.of(PreviousPointer.previousPointer(randomObjId(random), -1L)));
    reference("reference-negative-created", "neg", randomObjId(random, 4), false, -7L,
        randomObjId(random, 4), List.of());
  }

  private void reference(
      String name,
      String refName,
      ObjId pointer,
      boolean deleted,
      long createdAtMicros,
      ObjId extendedInfo,
      List<PreviousPointer> history) {
    Reference ref =
        Reference.reference(refName, pointer, deleted, createdAtMicros, extendedInfo, history);
    byte[] serialized = ProtoSerialization.serializeReference(ref);
    if (!ProtoSerialization.deserializeReference(serialized).equals(ref)) {
      throw new IllegalStateException("Nessie did not read back " + ref);
    }
    List<Object> historyJson =
        history.stream()
            .map(p -> (Object) obj("pointer", hex(p.pointer()), "timestamp", p.timestamp()))
            .toList();
    references.add(
        obj(
            "name", name,
            "ref_name", refName,
            "pointer", hex(pointer),
            "deleted", deleted,
            "created_at_micros", createdAtMicros,
            "extended_info_obj", hex(extendedInfo),
            "previous_pointers", historyJson,
            "reference_hex", hex(serialized),
            "previous_pointers_hex", hex(ProtoSerialization.serializePreviousPointers(history))));
  }

  // --- helpers -------------------------------------------------------------------------------

  private static ObjId id(String hexText) {
    return hexText == null ? null : ObjId.objIdFromByteArray(HEX.parseHex(hexText));
  }

  private static ByteString bytes(Map<String, Object> v, String field) {
    String text = (String) v.get(field);
    return text == null ? null : ByteString.copyFrom(HEX.parseHex(text));
  }

  private static StoreKey key(List<String> elements) {
    return keyFromString(String.join("\u0000", elements));
  }
}
