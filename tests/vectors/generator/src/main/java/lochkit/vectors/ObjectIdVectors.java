package lochkit.vectors;

import static lochkit.vectors.Util.hex;
import static lochkit.vectors.Util.hexList;
import static lochkit.vectors.Util.obj;
import static lochkit.vectors.Util.randomBytes;
import static lochkit.vectors.Util.randomObjId;
import static lochkit.vectors.Util.randomUuid;
import static org.projectnessie.versioned.storage.common.indexes.StoreKey.key;
import static org.projectnessie.versioned.storage.common.persist.ObjId.EMPTY_OBJ_ID;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import lochkit.vectors.Util.HeaderPairs;
import org.projectnessie.nessie.relocated.protobuf.ByteString;
import org.projectnessie.versioned.storage.common.indexes.StoreKey;
import org.projectnessie.versioned.storage.common.objtypes.CommitHeaders;
import org.projectnessie.versioned.storage.common.objtypes.Compression;
import org.projectnessie.versioned.storage.common.objtypes.ContentValueObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexSegmentsObj;
import org.projectnessie.versioned.storage.common.objtypes.IndexStripe;
import org.projectnessie.versioned.storage.common.objtypes.RefObj;
import org.projectnessie.versioned.storage.common.objtypes.StringObj;
import org.projectnessie.versioned.storage.common.objtypes.TagObj;
import org.projectnessie.versioned.storage.common.objtypes.UniqueIdObj;
import org.projectnessie.versioned.storage.common.persist.ObjId;

/** Object-id vectors: each object is built with Nessie's own id-deriving factory method. */
final class ObjectIdVectors {
  static final long SEED = 0x10c4_0001L;

  private static final String LONG_ASCII = "abcdefghij".repeat(100);
  private static final String NON_ASCII = "ünïcödé-ключ-中文-ß";
  private static final String SUPPLEMENTARY = "emoji-😀-clef-𝄞-cjk-𠀋";

  private final Random random = new Random(SEED);
  private final List<Object> vectors = new ArrayList<>();

  static Map<String, Object> generate() {
    ObjectIdVectors v = new ObjectIdVectors();
    v.emptyObjId();
    v.contentValues();
    v.refs();
    v.tags();
    v.strings();
    v.indexes();
    v.indexSegments();
    v.uniqueIds();
    return obj(
        "format", "lochkit nessie object-id vectors v1",
        "nessie_version", Util.NESSIE_VERSION,
        "seed", SEED,
        "vectors", v.vectors);
  }

  private void add(String name, String type, ObjId id, Object... fields) {
    Map<String, Object> vector = obj("name", name, "type", type);
    vector.putAll(obj(fields));
    vector.put("id", hex(id));
    vectors.add(vector);
  }

  private void emptyObjId() {
    add("empty-obj-id", "EMPTY_OBJ_ID", EMPTY_OBJ_ID);
  }

  // --- VALUE ---------------------------------------------------------------------------------

  private void contentValues() {
    String[] contentIds = {
      "", "cid", randomUuid(random).toString(), NON_ASCII, SUPPLEMENTARY, LONG_ASCII, "nul\u0000inside"
    };
    int[] payloads = {0, 1, 4, 127};
    int n = 0;
    for (String contentId : contentIds) {
      for (int payload : payloads) {
        // Cycle through empty, tiny, small and large data so every content id meets several.
        int length = new int[] {0, 1, 17, 1000}[n++ % 4];
        valueVector("value-" + n, contentId, payload, randomBytes(random, length));
      }
    }
    valueVector("value-text-data", "cid", 1, "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
  }

  private void valueVector(String name, String contentId, int payload, byte[] data) {
    ContentValueObj obj = ContentValueObj.contentValue(contentId, payload, ByteString.copyFrom(data));
    add(name, "VALUE", obj.id(), "content_id", contentId, "payload", payload, "data_hex", hex(data));
  }

  // --- REF -----------------------------------------------------------------------------------

  private void refs() {
    refVector("ref-main-empty-0", "refs/heads/main", EMPTY_OBJ_ID, 0L, null);
    refVector("ref-main-random", "refs/heads/main", randomObjId(random), 1_700_000_000_123_456L, null);
    refVector("ref-tag-ext-info", "refs/tags/v1.0", randomObjId(random), 42L, randomObjId(random));
    refVector("ref-non-ascii", "refs/heads/" + NON_ASCII, randomObjId(random), 1L, null);
    refVector("ref-supplementary", "refs/heads/" + SUPPLEMENTARY, EMPTY_OBJ_ID, 1L, null);
    refVector("ref-long-max", "refs/heads/" + LONG_ASCII, randomObjId(random), Long.MAX_VALUE, null);
    refVector("ref-negative", "refs/heads/neg", randomObjId(random), -1L, null);
    refVector("ref-long-min", "refs/heads/min", randomObjId(random), Long.MIN_VALUE, null);
    refVector("ref-empty-name", "", EMPTY_OBJ_ID, 0L, null);
    refVector("ref-short-pointer", "refs/heads/legacy", randomObjId(random, 4), 7L, null);
    refVector("ref-zero-length-pointer", "refs/heads/zero", ObjId.zeroLengthObjId(), 7L, null);
    refVector("ref-internal", "int/refs", EMPTY_OBJ_ID, 1_234_567_890L, null);
  }

  private void refVector(String name, String refName, ObjId pointer, long created, ObjId extInfo) {
    RefObj obj = RefObj.ref(refName, pointer, created, extInfo);
    add(
        name,
        "REF",
        obj.id(),
        "ref_name", refName,
        "initial_pointer", hex(pointer),
        "created_at_micros", created,
        "extended_info_obj", hex(extInfo));
  }

  // --- TAG -----------------------------------------------------------------------------------

  private void tags() {
    tagVector("tag-all-null", null, null, null);
    tagVector("tag-message-only", "Release 1.0", null, null);
    tagVector("tag-empty-message", "", null, null);
    tagVector("tag-non-ascii-message", NON_ASCII + "\n" + SUPPLEMENTARY, null, null);
    tagVector("tag-empty-headers", null, HeaderPairs.of(), null);
    tagVector("tag-one-header", null, HeaderPairs.of("author", "Alice <alice@example.com>"), null);
    tagVector("tag-one-header-uppercase", null, HeaderPairs.of("X-Custom-Header", "v"), null);
    tagVector(
        "tag-one-header-repeated",
        null,
        HeaderPairs.of("signed-off-by", "a", "Signed-Off-By", "b", "signed-off-by", "a"),
        null);
    tagVector(
        "tag-two-headers",
        "with headers",
        HeaderPairs.of("committer", "Bob", "author", "Alice"),
        null);
    // Nessie's create-reference headers: the JVM happens to iterate these names in sorted order.
    tagVector(
        "tag-headers-jvm-order-sorted",
        "Create reference",
        HeaderPairs.of(
            "operation", "create", "name", "refs/heads/main", "head", "0011",
            "timestamp", "2024-01-02T03:04:05Z", "name", "second value"),
        null);
    tagVector(
        "tag-version-store-headers",
        "Tag v2",
        HeaderPairs.of(
            "date", "2024-01-01T00:00:00Z",
            "author-date", "2024-01-01T00:00:00Z",
            "committer", "Bob",
            "author", "Alice",
            "author", "Carol",
            "signed-off-by", "Dave",
            "signed-off-by", "Dave"),
        null);
    tagVector(
        "tag-many-headers",
        null,
        HeaderPairs.of(
            "zeta", "1", "alpha", "2", "mid", "3", "beta", "4", "x-request-id", "5",
            "gamma", "6", "a", "7", "b", "8", "c", "9", "property.one", "10"),
        null);
    tagVector(
        "tag-headers-non-ascii",
        null,
        HeaderPairs.of("X-Ünïcode", NON_ASCII, "x-emoji", SUPPLEMENTARY, "plain", ""),
        null);
    // Lowercasing beyond ASCII: final sigma and dotted capital I (Locale.ROOT rules).
    tagVector("tag-header-final-sigma", null, HeaderPairs.of("X-ΟΔΟΣ", "v"), null);
    tagVector("tag-header-dotted-i", null, HeaderPairs.of("X-İstanbul", "v"), null);
    tagVector("tag-signature-only", null, null, randomBytes(random, 64));
    tagVector("tag-empty-signature", null, null, new byte[0]);
    tagVector(
        "tag-everything",
        "signed tag",
        HeaderPairs.of("tagger", "Eve", "date", "2024-06-01T12:00:00Z"),
        randomBytes(random, 32));
  }

  private void tagVector(String name, String message, HeaderPairs pairs, byte[] signature) {
    CommitHeaders headers = pairs == null ? null : pairs.build();
    TagObj obj =
        TagObj.tag(message, headers, signature == null ? null : ByteString.copyFrom(signature));
    Map<String, Object> fields = obj("message", message);
    Util.putHeaders(fields, pairs, headers);
    fields.put("signature_hex", hex(signature));
    Map<String, Object> vector = obj("name", name, "type", "TAG");
    vector.putAll(fields);
    vector.put("id", hex(obj.id()));
    vectors.add(vector);
  }

  // --- STRING --------------------------------------------------------------------------------

  private void strings() {
    byte[] json = "{\"defaultBranchName\":\"main\"}".getBytes(StandardCharsets.UTF_8);
    for (Compression compression : Compression.values()) {
      stringVector("string-" + compression.name().toLowerCase(), "application/json", compression,
          null, List.of(), json);
    }
    stringVector("string-filename", "text/plain", Compression.NONE, "repo.json", List.of(), json);
    stringVector("string-empty-filename", "text/plain", Compression.NONE, "", List.of(), json);
    stringVector("string-non-ascii-filename", "text/plain; charset=utf-8", Compression.GZIP,
        NON_ASCII + SUPPLEMENTARY + ".txt", List.of(), randomBytes(random, 50));
    stringVector("string-one-predecessor", "text/plain", Compression.NONE, null,
        List.of(randomObjId(random)), "diff".getBytes(StandardCharsets.UTF_8));
    stringVector("string-three-predecessors", "text/plain", Compression.ZSTD, "f",
        List.of(randomObjId(random), randomObjId(random, 4), randomObjId(random)),
        randomBytes(random, 100));
    stringVector("string-empty-everything", "", Compression.NONE, null, List.of(), new byte[0]);
    stringVector("string-long-text", "text/plain", Compression.NONE, null, List.of(),
        (LONG_ASCII + NON_ASCII).repeat(20).getBytes(StandardCharsets.UTF_8));
  }

  private void stringVector(
      String name,
      String contentType,
      Compression compression,
      String filename,
      List<ObjId> predecessors,
      byte[] text) {
    StringObj obj =
        StringObj.stringData(
            contentType, compression, filename, predecessors, ByteString.copyFrom(text));
    add(
        name,
        "STRING",
        obj.id(),
        "content_type", contentType,
        "compression", compression.name(),
        "compression_code", String.valueOf(compression.value()),
        "filename", filename,
        "predecessors", hexList(predecessors),
        "text_hex", hex(text));
  }

  // --- INDEX / INDEX_SEGMENTS ----------------------------------------------------------------

  private void indexes() {
    indexVector("index-empty-bytes", new byte[0]);
    indexVector("index-empty-mutable-index", new byte[] {2, 0});
    indexVector("index-one-byte", new byte[] {1});
    indexVector("index-random-100", randomBytes(random, 100));
    indexVector("index-random-5000", randomBytes(random, 5000));
  }

  private void indexVector(String name, byte[] index) {
    IndexObj obj = IndexObj.index(ByteString.copyFrom(index));
    add(name, "INDEX", obj.id(), "index_hex", hex(index));
  }

  private void indexSegments() {
    StoreKey a = key("a");
    StoreKey nsTable = key("ns", "table");
    StoreKey nsZ = key("ns", "z", "deep");
    StoreKey nonAscii = key(NON_ASCII, "t");
    StoreKey supplementary = key(SUPPLEMENTARY);
    StoreKey typeMapped = StoreKey.keyFromString("M\u0000db\u0001schema\u0001tbl\u0000C");
    List<IndexStripe> all =
        List.of(
            IndexStripe.indexStripe(a, a, randomObjId(random)),
            IndexStripe.indexStripe(key("b"), nsTable, randomObjId(random)),
            IndexStripe.indexStripe(nsZ, nonAscii, randomObjId(random)),
            IndexStripe.indexStripe(typeMapped, typeMapped, randomObjId(random)),
            IndexStripe.indexStripe(supplementary, key(SUPPLEMENTARY, "x"), randomObjId(random, 4)));
    segmentsVector("index-segments-0", List.of());
    for (int n = 1; n <= all.size(); n++) {
      segmentsVector("index-segments-" + n, all.subList(0, n));
    }
  }

  private void segmentsVector(String name, List<IndexStripe> stripes) {
    IndexSegmentsObj obj = IndexSegmentsObj.indexSegments(stripes);
    List<Object> json =
        stripes.stream()
            .map(
                s ->
                    (Object)
                        obj(
                            "first_key", Util.elements(s.firstKey()),
                            "last_key", Util.elements(s.lastKey()),
                            "segment", hex(s.segment())))
            .toList();
    add(name, "INDEX_SEGMENTS", obj.id(), "stripes", json);
  }

  // --- UNIQUE --------------------------------------------------------------------------------

  private void uniqueIds() {
    UUID[] uuids = {
      new UUID(0L, 0L),
      new UUID(0L, 1L),
      new UUID(-1L, -1L),
      new UUID(Long.MIN_VALUE, Long.MAX_VALUE),
      UUID.fromString("123e4567-e89b-12d3-a456-426614174000"),
      randomUuid(random),
      randomUuid(random),
    };
    int n = 0;
    for (UUID uuid : uuids) {
      UniqueIdObj obj = UniqueIdObj.uniqueId("content-id", uuid);
      add("unique-uuid-" + ++n, "UNIQUE", obj.id(),
          "space", "content-id", "uuid", uuid.toString(), "value_hex", hex(obj.value()));
    }
    uniqueRaw("unique-raw-empty", "content-id", new byte[0]);
    uniqueRaw("unique-raw-one", "content-id", new byte[] {0x7f});
    uniqueRaw("unique-raw-100", "content-id", randomBytes(random, 100));
    uniqueRaw("unique-empty-space", "", randomBytes(random, 16));
    uniqueRaw("unique-non-ascii-space", NON_ASCII + SUPPLEMENTARY, randomBytes(random, 16));
  }

  private void uniqueRaw(String name, String space, byte[] value) {
    UniqueIdObj obj = UniqueIdObj.uniqueId(space, ByteString.copyFrom(value));
    add(name, "UNIQUE", obj.id(), "space", space, "uuid", null, "value_hex", hex(value));
  }
}
