package lochkit.vectors;

import static lochkit.vectors.Util.element;
import static lochkit.vectors.Util.elements;
import static lochkit.vectors.Util.hex;
import static lochkit.vectors.Util.obj;
import static lochkit.vectors.Util.randomObjId;
import static lochkit.vectors.Util.randomUuid;
import static org.projectnessie.versioned.storage.common.indexes.StoreIndexElement.indexElement;
import static org.projectnessie.versioned.storage.common.indexes.StoreIndexes.deserializeStoreIndex;
import static org.projectnessie.versioned.storage.common.indexes.StoreIndexes.emptyImmutableIndex;
import static org.projectnessie.versioned.storage.common.indexes.StoreIndexes.newStoreIndex;
import static org.projectnessie.versioned.storage.common.indexes.StoreKey.key;
import static org.projectnessie.versioned.storage.common.objtypes.CommitOp.COMMIT_OP_SERIALIZER;
import static org.projectnessie.versioned.storage.common.objtypes.CommitOp.commitOp;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.projectnessie.nessie.relocated.protobuf.ByteString;
import org.projectnessie.versioned.storage.common.indexes.StoreIndex;
import org.projectnessie.versioned.storage.common.indexes.StoreIndexElement;
import org.projectnessie.versioned.storage.common.indexes.StoreKey;
import org.projectnessie.versioned.storage.common.objtypes.CommitOp;
import org.projectnessie.versioned.storage.common.objtypes.CommitOp.Action;
import org.projectnessie.versioned.storage.common.persist.ObjId;

/**
 * Store-index vectors: indexes built with {@code StoreIndexes.newStoreIndex(COMMIT_OP_SERIALIZER)},
 * serialised by Nessie, and checked by reading them back with Nessie.
 *
 * <p>Every vector draws its random values from a generator seeded by the vector's name, so a vector
 * is the same whether it is built alone (as the legacy v1 vectors are) or among all the others.
 */
final class IndexVectors {
  static final long SEED = 0x10c4_0002L;

  /** Nessie reads this system property once, when its index class is initialised. */
  private static final String FORMAT_VERSION_PROPERTY = "nessie.internal.store-index-format-version";

  private static final List<String> LEGACY_VECTOR_NAMES =
      List.of("empty", "design-doc-example", "multi-element-keys", "id-lengths", "all-actions");

  record Spec(
      String name,
      String description,
      boolean utf16OrderDiffers,
      List<StoreIndexElement<CommitOp>> elements) {}

  static Map<String, Object> generate() throws Exception {
    List<Object> vectors = new ArrayList<>();
    for (Spec spec : specs()) {
      vectors.add(vector(spec));
    }
    vectors.addAll(legacyVectorsInFreshClassLoader());

    StoreIndex<CommitOp> emptyImmutable = emptyImmutableIndex(COMMIT_OP_SERIALIZER);
    return obj(
        "format", "lochkit nessie index vectors v1",
        "nessie_version", Util.NESSIE_VERSION,
        "seed", SEED,
        "empty_immutable",
            obj(
                "serialized_hex", hex(emptyImmutable.serialize()),
                "estimated_serialized_size", emptyImmutable.estimatedSerializedSize()),
        "vectors", vectors,
        "estimate_histories", EstimateHistories.generate(),
        "divisions", divisions());
  }

  // --- the element sets ----------------------------------------------------------------------

  static List<Spec> specs() {
    List<Spec> specs = new ArrayList<>();
    specs.add(spec("empty", "the empty mutable index", false, r -> List.of()));
    specs.add(spec("design-doc-example", "keys a, a\\0b, a\\0c, b (design doc section 3.3)", false,
        r -> {
          ObjId v = randomObjId(r);
          return List.of(
              el(key("a"), Action.ADD, 1, v, null),
              el(key("a", "b"), Action.ADD, 1, v, null),
              el(key("a", "c"), Action.INCREMENTAL_ADD, 1, v, null),
              el(key("b"), Action.REMOVE, 1, v, null));
        }));
    specs.add(spec("single-element", "one ADD with a content id", false,
        r -> List.of(el(key("table"), Action.ADD, 1, randomObjId(r), randomUuid(r)))));
    specs.add(spec("common-prefixes", "single-element keys sharing long prefixes; space sorts before digits",
        false,
        r -> noneElements(r, List.of(
            key("a/ref-   1"), key("a/ref-  11"), key("a/ref- 111"), key("a/ref-1111"),
            key("a/ref-   2"), key("a/ref-  10"), key("a/ref-10"), key("a/ref-100"),
            key("a"), key("a/"), key("a/ref"), key("a/ref-"), key("ab"), key("b")))));
    specs.add(spec("ref-names", "int/refs-style keys: a whole ref name is one element", false,
        r -> noneElements(r, List.of(
            key("refs/heads/main"), key("refs/heads/main2"), key("refs/heads/mai"),
            key("refs/heads/main/sub"), key("refs/tags/v1"), key("refs/tags/v1.0"),
            key("refs/tags/v10"), key("nessie/configs")))));
    specs.add(spec("multi-element-keys", "keys of 1..4 elements, element prefixes, U+0001 inside elements",
        false,
        r -> noneElements(r, List.of(
            key("n"), key("ns"), key("ns", "t1"), key("ns", "t1", "x"), key("ns", "t1", "x", "y"),
            key("ns", "t10"), key("ns", "t2"), key("ns2"), key("nsa"), key("ns\u0001x"),
            key("ns", "\u0001"), key("ns\u0001"), key("a", "b", "c"), key("a", "bc"), key("ab", "c")))));
    specs.add(spec("type-mapped-keys", "version-store content keys: M \\0 e1 \\1 e2 ... \\0 C", false,
        r -> {
          List<StoreIndexElement<CommitOp>> list = new ArrayList<>();
          String[][] contentKeys = {
            {"db"}, {"db", "schema"}, {"db", "schema", "tbl"}, {"db", "schema", "tbl2"},
            {"db", "schema2", "t"}, {"db2"}, {"d"}, {"db", "s"},
          };
          for (String[] ck : contentKeys) {
            StoreKey k = key("M", String.join("\u0001", ck), "C");
            list.add(el(k, Action.INCREMENTAL_ADD, ck.length == 3 ? 1 : 4, randomObjId(r), randomUuid(r)));
          }
          // A key-range bound as the version store builds it (not a real key, but serialisable).
          list.add(el(key("M", "db\u0001schema", "\u00ff"), Action.NONE, 0, randomObjId(r), null));
          return list;
        }));
    specs.add(spec("non-ascii-bmp", "2- and 3-byte UTF-8 characters (no surrogates)", false,
        r -> noneElements(r, List.of(
            key("e"), key("é"), key("ü"), key("ß"), key("中文"), key("中"), key("\u007f"),
            key("\u0080"), key("\u07ff"), key("\u0800"), key("\ud7ff"), key("\ue000"),
            key("\uffff"), key("a\u00e9"), key("aé", "ключ")))));
    specs.add(spec("supplementary", "4-byte UTF-8 characters mixed with ASCII and BMP below U+D800", false,
        r -> noneElements(r, List.of(
            key("😀"), key("𝄞"), key("𠀋"), key("a😀"), key("a𝄞b"), key("a"), key("z"),
            key("é"), key("😀", "𝄞"), key("😀😀")))));
    specs.add(spec("utf16-order-differs",
        "Java orders by UTF-16 code unit: U+E000..U+FFFF sort AFTER supplementary characters here, "
            + "so this order differs from code-point (UTF-8 byte) order",
        true,
        r -> noneElements(r, List.of(
            key("a\uffff"), key("a😀"), key("\ue000"), key("𝄞"), key("z"), key("a\ue000b")))));
    specs.add(spec("id-lengths", "value ids of 0 (null), 1, 4, 32, 127, 128, 255 and 256 bytes", false,
        r -> {
          List<StoreIndexElement<CommitOp>> list = new ArrayList<>();
          list.add(el(key("len-000"), Action.ADD, 1, null, null));
          for (int len : new int[] {1, 4, 32, 127, 128, 255, 256}) {
            list.add(el(key(String.format("len-%03d", len)), Action.ADD, 1, randomObjId(r, len), null));
          }
          return list;
        }));
    specs.add(spec("all-actions", "one element per action, with and without value / content id", false,
        r -> List.of(
            el(key("k-a"), Action.ADD, 1, randomObjId(r), randomUuid(r)),
            el(key("k-ia"), Action.INCREMENTAL_ADD, 2, randomObjId(r), randomUuid(r)),
            el(key("k-ir"), Action.INCREMENTAL_REMOVE, 3, randomObjId(r), null),
            el(key("k-ir-null"), Action.INCREMENTAL_REMOVE, 3, null, null),
            el(key("k-n"), Action.NONE, 4, randomObjId(r), randomUuid(r)),
            el(key("k-r"), Action.REMOVE, 5, randomObjId(r), randomUuid(r)),
            el(key("k-r-null"), Action.REMOVE, 0, null, null))));
    specs.add(spec("payloads", "payloads 0..5, 63, 64, 126, 127 (all one varint byte)", false,
        r -> {
          List<StoreIndexElement<CommitOp>> list = new ArrayList<>();
          for (int p : new int[] {0, 1, 2, 3, 4, 5, 63, 64, 126, 127}) {
            list.add(el(key(String.format("p%03d", p)), Action.ADD, p, randomObjId(r), null));
          }
          return list;
        }));
    specs.add(spec("content-ids", "content ids with high bits set, small values, and random", false,
        r -> List.of(
            el(key("c1"), Action.ADD, 1, randomObjId(r), new UUID(0L, 1L)),
            el(key("c2"), Action.ADD, 1, randomObjId(r), new UUID(1L, 0L)),
            el(key("c3"), Action.ADD, 1, randomObjId(r), new UUID(-1L, -1L)),
            el(key("c4"), Action.ADD, 1, randomObjId(r), new UUID(Long.MIN_VALUE, 0L)),
            el(key("c5"), Action.ADD, 1, randomObjId(r),
                UUID.fromString("123e4567-e89b-12d3-a456-426614174000")),
            el(key("c6"), Action.ADD, 1, randomObjId(r), randomUuid(r)))));
    specs.add(spec("long-key", "a key whose serialised form is exactly 4096 bytes (the maximum)", false,
        r -> List.of(
            el(key("k".repeat(4094)), Action.ADD, 1, randomObjId(r), null),
            el(key("k".repeat(100), "x"), Action.ADD, 1, randomObjId(r), null),
            el(key("ü".repeat(2047)), Action.ADD, 1, randomObjId(r), null))));
    specs.add(spec("realistic-1000", "about 1000 version-store keys with mixed actions", false,
        IndexVectors::realistic));
    return specs;
  }

  /** Namespaces and tables as the version store maps them, in several states. */
  private static List<StoreIndexElement<CommitOp>> realistic(Random r) {
    List<StoreIndexElement<CommitOp>> list = new ArrayList<>();
    Action[] tableActions = {
      Action.INCREMENTAL_ADD, Action.INCREMENTAL_ADD, Action.INCREMENTAL_ADD, Action.ADD,
      Action.REMOVE, Action.INCREMENTAL_REMOVE, Action.NONE
    };
    for (int db = 0; db < 4; db++) {
      String dbName = "warehouse_" + db;
      list.add(el(key("M", dbName, "C"), Action.INCREMENTAL_ADD, 4, randomObjId(r), randomUuid(r)));
      for (int schema = 0; schema < 8; schema++) {
        String schemaName = dbName + "\u0001schema_" + schema;
        list.add(el(key("M", schemaName, "C"), Action.INCREMENTAL_ADD, 4, randomObjId(r), randomUuid(r)));
        for (int table = 0; table < 30; table++) {
          String name = String.format("%s\u0001table_%04d", schemaName, r.nextInt(10_000));
          StoreKey k = key("M", name, "C");
          if (list.stream().anyMatch(e -> e.key().equals(k))) {
            continue;
          }
          Action action = tableActions[r.nextInt(tableActions.length)];
          int payload = 1 + r.nextInt(5);
          list.add(el(k, action, payload, randomObjId(r), randomUuid(r)));
        }
      }
    }
    return list;
  }

  private interface ElementsFactory {
    List<StoreIndexElement<CommitOp>> elements(Random random);
  }

  private static Spec spec(String name, String description, boolean utf16OrderDiffers, ElementsFactory f) {
    Random random = new Random(SEED + name.hashCode());
    return new Spec(name, description, utf16OrderDiffers, f.elements(random));
  }

  static StoreIndexElement<CommitOp> el(StoreKey key, Action action, int payload, ObjId value, UUID cid) {
    return indexElement(key, commitOp(action, payload, value, cid));
  }

  private static List<StoreIndexElement<CommitOp>> noneElements(Random r, List<StoreKey> keys) {
    return keys.stream().map(k -> el(k, Action.NONE, 0, randomObjId(r), null)).toList();
  }

  // --- building and checking one vector ------------------------------------------------------

  /** Adds the elements in a shuffled order (Nessie sorts them), then serialises. */
  static StoreIndex<CommitOp> build(Spec spec) {
    List<StoreIndexElement<CommitOp>> shuffled = new ArrayList<>(spec.elements());
    Collections.shuffle(shuffled, new Random(SEED + spec.name().hashCode() + 1));
    StoreIndex<CommitOp> index = newStoreIndex(COMMIT_OP_SERIALIZER);
    shuffled.forEach(index::add);
    return index;
  }

  static Map<String, Object> vector(Spec spec) {
    StoreIndex<CommitOp> index = build(spec);
    ByteString serialized = index.serialize();
    StoreIndex<CommitOp> readBack = deserializeStoreIndex(serialized, COMMIT_OP_SERIALIZER);
    List<Object> elements = new ArrayList<>();
    index.forEach(e -> elements.add(element(e.key(), e.content())));
    List<Object> readElements = new ArrayList<>();
    readBack.forEach(e -> readElements.add(element(e.key(), e.content())));
    check(elements.equals(readElements), spec.name() + ": Nessie read back different elements");
    check(elements.size() == spec.elements().size(), spec.name() + ": duplicate keys in spec");
    return obj(
        "name", spec.name(),
        "description", spec.description(),
        "format_version", serialized.byteAt(0) & 0xff,
        "utf16_order_differs", spec.utf16OrderDiffers(),
        "element_count", elements.size(),
        "elements", elements,
        "serialized_hex", hex(serialized),
        "serialized_size", serialized.size(),
        "estimated_serialized_size", index.estimatedSerializedSize(),
        "deserialized_estimated_serialized_size", readBack.estimatedSerializedSize());
  }

  static void check(boolean condition, String message) {
    if (!condition) {
      throw new IllegalStateException(message);
    }
  }

  // --- divide() ------------------------------------------------------------------------------

  /** {@code divide(n)} as the spill logic uses it: each part's elements, bytes and estimate. */
  private static List<Object> divisions() {
    List<Object> result = new ArrayList<>();
    for (Spec spec : specs()) {
      int[] parts =
          switch (spec.name()) {
            case "design-doc-example" -> new int[] {2, 3};
            case "common-prefixes" -> new int[] {3};
            case "realistic-1000" -> new int[] {2, 7};
            default -> new int[0];
          };
      for (int n : parts) {
        StoreIndex<CommitOp> index = build(spec);
        List<Object> jsonParts = new ArrayList<>();
        for (StoreIndex<CommitOp> part : index.divide(n)) {
          jsonParts.add(partJson(part));
        }
        result.add(
            obj(
                "index", spec.name(),
                "parts_requested", n,
                "estimated_serialized_size_before", index.estimatedSerializedSize(),
                "parts", jsonParts));
      }
    }
    return result;
  }

  /** One part of a {@code divide(n)}: its bounds, size, bytes and estimate. */
  static Map<String, Object> partJson(StoreIndex<CommitOp> part) {
    ByteString serialized = part.serialize();
    return obj(
        "first_key", elements(part.first()),
        "last_key", elements(part.last()),
        "element_count", part.elementCount(),
        "serialized_hex", hex(serialized),
        "estimated_serialized_size", part.estimatedSerializedSize());
  }

  // --- legacy (v1) serialisation -------------------------------------------------------------

  /**
   * Builds {@link #LEGACY_VECTOR_NAMES} with Nessie's legacy v1 format. Nessie picks the format from
   * a system property read once per class loader, so this loads Nessie (and this class) again in a
   * fresh class loader with the property set. The v1 bytes are then read back by the normal (v2)
   * Nessie classes to show that Nessie still reads them.
   */
  @SuppressWarnings("unchecked")
  private static List<Object> legacyVectorsInFreshClassLoader() throws Exception {
    String[] classPath = System.getProperty("java.class.path").split(java.io.File.pathSeparator);
    URL[] urls = new URL[classPath.length];
    for (int i = 0; i < classPath.length; i++) {
      urls[i] = Path.of(classPath[i]).toUri().toURL();
    }
    List<Object> legacy;
    System.setProperty(FORMAT_VERSION_PROPERTY, "1");
    try (URLClassLoader loader = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
      Method m = loader.loadClass(IndexVectors.class.getName()).getDeclaredMethod("legacyVectors");
      m.setAccessible(true);
      legacy = (List<Object>) m.invoke(null);
    } finally {
      System.clearProperty(FORMAT_VERSION_PROPERTY);
    }
    for (Object v : legacy) {
      Map<String, Object> vector = (Map<String, Object>) v;
      check((Integer) vector.get("format_version") == 1, "legacy vector is not v1");
      byte[] bytes = HexFormat.of().parseHex((String) vector.get("serialized_hex"));
      List<Object> readElements = new ArrayList<>();
      deserializeStoreIndex(ByteString.copyFrom(bytes), COMMIT_OP_SERIALIZER)
          .forEach(e -> readElements.add(element(e.key(), e.content())));
      check(readElements.equals(vector.get("elements")), "v1 bytes read back differently by v2 Nessie");
    }
    return legacy;
  }

  /** Runs inside the class loader created above (the v1 format is in force there). */
  @SuppressWarnings("unused")
  private static List<Object> legacyVectors() {
    List<Object> result = new ArrayList<>();
    for (Spec spec : specs()) {
      if (LEGACY_VECTOR_NAMES.contains(spec.name())) {
        Map<String, Object> vector = vector(spec);
        vector.put("name", "v1-" + spec.name());
        vector.put("description", "legacy v1 encoding (no element count) of vector '" + spec.name() + "'");
        result.add(vector);
      }
    }
    return result;
  }
}
