package lochkit.vectors;

import static lochkit.vectors.Util.hex;
import static lochkit.vectors.Util.obj;
import static lochkit.vectors.Util.randomBytes;
import static lochkit.vectors.Util.randomObjId;
import static org.projectnessie.versioned.storage.common.config.StoreConfig.DEFAULT_MAX_INCREMENTAL_INDEX_SIZE;
import static org.projectnessie.versioned.storage.common.config.StoreConfig.DEFAULT_MAX_SERIALIZED_INDEX_SIZE;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.projectnessie.versioned.storage.common.objtypes.Compression;
import org.projectnessie.versioned.storage.common.objtypes.GenericObj;
import org.projectnessie.versioned.storage.common.objtypes.GenericObjTypeMapper;
import org.projectnessie.versioned.storage.common.objtypes.ImmutableGenericObj;
import org.projectnessie.versioned.storage.common.persist.Obj;
import org.projectnessie.versioned.storage.common.persist.ObjId;
import org.projectnessie.versioned.storage.common.util.Compressions;
import org.projectnessie.versioned.storage.serialize.ProtoSerialization;
import org.projectnessie.versioned.storage.serialize.SmileSerialization;

/**
 * Custom-object vectors: generic objects whose attributes cover every JSON type Jackson writes in
 * Smile, serialised by Nessie's {@code SmileSerialization} (the custom object's data, compressed by
 * Nessie's rule) and {@code ProtoSerialization.serializeObj} (the whole stored {@code ObjProto}).
 *
 * <p>Attribute values are recorded with their Java type, so a reader can rebuild them exactly:
 * strings, booleans, ints, longs and null as plain JSON; maps as {@code {"map": [[name, value],
 * ...]}} (in the order Jackson wrote them); and {@code {"double": bits}}, {@code {"float": bits}}
 * (raw IEEE bits as hex), {@code {"big_integer": text}}, {@code {"big_decimal": text}}, {@code
 * {"binary": hex}} (a byte[] or an ObjId).
 */
final class SmileVectors {
  static final long SEED = 0x10c4_0005L;

  /** The {@code referenced} value of the RocksDB-style serialisations (any nonzero µs value). */
  static final long REFERENCED = 1_700_000_000_987_654L;

  private static final HexFormat HEX = HexFormat.of();

  private final Random random = new Random(SEED);
  private final List<Object> objects = new ArrayList<>();

  static Map<String, Object> generate() throws Exception {
    SmileVectors v = new SmileVectors();
    v.scalars();
    v.strings();
    v.names();
    v.containers();
    v.binary();
    v.bigNumbers();
    v.readOnly();
    v.versioned();
    v.lochkitType();
    v.compressed();
    return obj(
        "format", "lochkit nessie smile vectors v1",
        "nessie_version", Util.NESSIE_VERSION,
        "seed", SEED,
        "keep_uncompressed", Compressions.KEEP_UNCOMPRESSED,
        "objects", v.objects);
  }

  // --- the objects ---------------------------------------------------------------------------

  private void scalars() throws Exception {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("null", null);
    a.put("true", true);
    a.put("false", false);
    int[] ints = {0, 1, -1, 15, -16, 16, -17, 31, 32, 42, 63, 64, 8191, 8192, -8193};
    for (int i : ints) {
      a.put("int" + i, i);
    }
    a.put("intMax", Integer.MAX_VALUE);
    a.put("intMin", Integer.MIN_VALUE);
    a.put("longSmall", 42L); // a long that fits an int: Jackson writes it as an int
    a.put("longJustAboveInt", (long) Integer.MAX_VALUE + 1);
    a.put("longJustBelowInt", (long) Integer.MIN_VALUE - 1);
    a.put("longMinus2pow62", -(1L << 62));
    a.put("longMax", Long.MAX_VALUE);
    a.put("longMin", Long.MIN_VALUE);
    double[] doubles = {
      0.0, -0.0, 3.5, 2.0, -2.5, 0.1, 1e300, Double.MIN_VALUE, Double.MAX_VALUE,
      Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY
    };
    for (int i = 0; i < doubles.length; i++) {
      a.put("double" + i, doubles[i]);
    }
    add("scalars", "lochkit-smile-test", a, null, true);
  }

  private void strings() throws Exception {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("empty", "");
    a.put("a", "a");
    a.put("hello", "hello");
    for (int n : new int[] {32, 33, 64, 65, 66, 100, 2666, 2667, 3000}) {
      a.put("ascii" + n, ascii(n));
    }
    a.put("latin32", "é".repeat(32)); // 64 UTF-8 bytes: the longest short string
    a.put("latin33", "é".repeat(33));
    a.put("latin2000", "é".repeat(2000));
    a.put("japanese", "日本語");
    a.put("emoji", "\uD83D\uDE00\uD834\uDD1E"); // supplementary characters: surrogate pairs in Java
    a.put("mixed", "ünïcödé ✓ 日本語 \uD83D\uDE00");
    a.put("controls", "tab\tnewline\nnul\u0000end");
    add("strings", "lochkit-smile-test", a, null, true);
  }

  private void names() throws Exception {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("", "the empty name");
    a.put("x".repeat(64), 64);
    a.put("y".repeat(65), 65);
    a.put("é".repeat(28), 56); // 56 UTF-8 bytes: the longest short Unicode name Jackson writes
    a.put("é".repeat(28) + "z", 57);
    a.put("日本", "short unicode");
    a.put("\uD83D\uDE00key", "supplementary");
    a.put("ü".repeat(200), "long unicode");
    add("names", "lochkit-smile-test", a, null, true);

    // Many names: back-references (one and two bytes), the indexes ending in 0xFE/0xFF that
    // Jackson never refers to, and the table starting over after 1024 names.
    List<Object> maps = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      Map<String, Object> m = new LinkedHashMap<>();
      for (int i = 0; i < 1100; i++) {
        m.put("n" + ((i * 7 + round) % 1100), round);
      }
      maps.add(m);
    }
    add("many-names", "lochkit-smile-test", obj("maps", maps), null, true);
  }

  private void containers() throws Exception {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("emptyMap", new LinkedHashMap<>());
    a.put("emptyList", new ArrayList<>());
    a.put("list", Arrays.asList("a", "list", 1, 2.0, null, true));
    a.put("listOfLists", Arrays.asList(Arrays.asList(1, 2), new ArrayList<>(), Arrays.asList("x")));
    Map<String, Object> deepest = obj("deepest", Arrays.asList("v"));
    a.put("nested", obj("deeper", deepest));
    List<Object> beans = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      beans.add(obj("id", i, "name", "bean-" + i));
    }
    a.put("beans", beans);
    a.put("mapWithNulls", obj("a", null, "b", Arrays.asList("x", null)));
    add("containers", "lochkit-smile-test", a, null, true);
  }

  private void binary() throws Exception {
    Map<String, Object> a = new LinkedHashMap<>();
    for (int n : new int[] {0, 1, 2, 6, 7, 8, 13, 14, 15, 32, 100}) {
      a.put("bytes" + n, randomBytes(random, n));
    }
    a.put("allOnes", filled(9, (byte) 0xFF));
    a.put("objId", randomObjId(random)); // Nessie's PersistModule writes an ObjId as binary
    a.put("inList", Arrays.asList(randomBytes(random, 3), "text", randomBytes(random, 10)));
    add("binary", "lochkit-smile-test", a, null, true);
  }

  private void bigNumbers() throws Exception {
    Map<String, Object> a = new LinkedHashMap<>();
    BigInteger two = BigInteger.TWO;
    a.put("bigJustAboveLong", two.pow(63));
    a.put("bigJustBelowLong", two.pow(63).negate().subtract(BigInteger.ONE));
    a.put("big2pow100", two.pow(100));
    a.put("bigMinus2pow100", two.pow(100).negate());
    a.put("bigMinus2pow71", two.pow(71).negate()); // a power of two: the shortest negative form
    a.put("big255times2pow64", BigInteger.valueOf(255).shiftLeft(64)); // needs a sign byte
    for (String d : new String[] {"1.50", "-0.001", "1700000000.123456789", "1E+5", "0", "-12345678901234567890.5"}) {
      a.put("decimal" + a.size(), new BigDecimal(d));
    }
    add("big-numbers", "lochkit-smile-test", a, null, true);
  }

  /**
   * Values Nessie writes that have no form of their own in lochkit: a float (read as a Python
   * float, written back as a double) and BigIntegers that fit a long (read as an int, written back
   * in the shortest int form). lochkit reads them; it would not write the same bytes back.
   */
  private void readOnly() throws Exception {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("float", 1.5f);
    a.put("negativeFloat", -0.25f);
    a.put("smallBigInteger", BigInteger.valueOf(5));
    a.put("zeroBigInteger", BigInteger.ZERO);
    a.put("negativeBigInteger", BigInteger.valueOf(-129));
    add("read-only-forms", "lochkit-smile-test", a, null, false);
  }

  private void versioned() throws Exception {
    // Nessie's GenericObj keeps the version token as the attribute "versionToken": it is written
    // into the Smile data too.
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("value", "v");
    a.put("versionToken", "vt-1");
    add("versioned", "lochkit-smile-versioned", a, "vt-1", true);
  }

  /**
   * What lochkit writes for its own conformance type SimpleTestObj ("lt-simple"): the dataclass's
   * fields in declaration order, named in camelCase; Nessie reads it as a generic object.
   */
  private void lochkitType() throws Exception {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("parent", randomObjId(random));
    a.put("text", "hello");
    a.put("number", 42);
    a.put("numbers", Arrays.asList(1, 2, 3));
    a.put("flags", obj("a", "b"));
    a.put("blob", new byte[] {0, 1});
    add("lochkit-simple", "lt-simple", a, null, true);
    // An updateable lochkit type keeps its version token out of the data (as Nessie's own
    // UpdateableObj types do), so the generic object that matches it has no token attribute.
    Map<String, Object> versioned = new LinkedHashMap<>();
    versioned.put("someValue", "some");
    versioned.put("otherValue", null);
    add("lochkit-versioned", "lt-versioned", versioned, null, true);
  }

  private void compressed() throws Exception {
    // Total Smile length: 13 bytes around the string. 8192 bytes stay uncompressed, 8193 do not.
    add("threshold-8192", "lochkit-smile-test", obj("text", ascii(8192 - 13)), null, true);
    add("threshold-8193", "lochkit-smile-test", obj("text", ascii(8193 - 13)), null, true);
    String text = "abcdefghij".repeat(2000) + HEX.formatHex(randomBytes(random, 100));
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("text", text);
    a.put("numbers", randomInts(500));
    a.put("blob", randomBytes(random, 300));
    add("large-gzip", "lochkit-smile-test", a, "vt-large", true);
  }

  // --- serialising -----------------------------------------------------------------------------

  private void add(
      String name, String type, Map<String, Object> attributes, String token, boolean lochkitWrites)
      throws Exception {
    if (token != null && !token.equals(attributes.get(GenericObj.VERSION_TOKEN_ATTRIBUTE))) {
      attributes.put(GenericObj.VERSION_TOKEN_ATTRIBUTE, token);
    }
    Obj obj =
        ImmutableGenericObj.builder()
            .type(GenericObjTypeMapper.newGenericObjType(type))
            .id(randomObjId(random))
            .attributes(attributes)
            .build();
    AtomicReference<Compression> compression = new AtomicReference<>();
    byte[] data = SmileSerialization.serializeObj(obj, compression::set);
    byte[] smile = Compressions.uncompress(compression.get(), data);

    Map<String, Object> vector = obj("name", name, "obj_type", type, "id", hex(obj.id()));
    vector.put("version_token", token);
    vector.put("lochkit_writes_same_bytes", lochkitWrites);
    vector.put("attributes", tagged(attributes));
    vector.put("compression", compression.get().name());
    vector.put("smile_length", smile.length);
    vector.put("smile_hex", hex(smile));
    vector.put("data_hex", hex(data));
    List<Object> serialized = new ArrayList<>();
    serialized.add(serialization(obj, 0L, false, token));
    serialized.add(serialization(obj, REFERENCED, true, token));
    vector.put("serialized", serialized);
    objects.add(vector);
  }

  private static Map<String, Object> serialization(
      Obj obj, long referenced, boolean withToken, String token) throws Exception {
    byte[] bytes =
        ProtoSerialization.serializeObj(
            obj.withReferenced(referenced),
            DEFAULT_MAX_INCREMENTAL_INDEX_SIZE,
            DEFAULT_MAX_SERIALIZED_INDEX_SIZE,
            withToken);
    // Nessie must read its own bytes back to the same attributes (the column backends give the
    // token from their column, RocksDB finds it inside).
    Obj back = ProtoSerialization.deserializeObj(obj.id(), 0L, bytes, withToken ? null : token);
    Map<String, Object> expected = ((GenericObj) obj).attributes();
    Map<String, Object> actual = ((GenericObj) back).attributes();
    if (!deepEquals(expected, actual)) {
      throw new IllegalStateException("Nessie read back other attributes for " + obj.type());
    }
    return obj("referenced", referenced, "include_version_token", withToken, "hex", hex(bytes));
  }

  /** Equality of attribute values as Nessie reads them back: byte[] by content, an ObjId too. */
  private static boolean deepEquals(Object a, Object b) {
    if (a instanceof ObjId id) {
      a = id.asByteArray();
    }
    if (a instanceof byte[] x && b instanceof byte[] y) {
      return Arrays.equals(x, y);
    }
    if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
      if (!new ArrayList<>(x.keySet()).equals(new ArrayList<>(y.keySet()))) {
        return false;
      }
      return x.keySet().stream().allMatch(k -> deepEquals(x.get(k), y.get(k)));
    }
    if (a instanceof List<?> x && b instanceof List<?> y) {
      if (x.size() != y.size()) {
        return false;
      }
      for (int i = 0; i < x.size(); i++) {
        if (!deepEquals(x.get(i), y.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof Long l && b instanceof Integer i) {
      return l == i.longValue(); // a long that fits an int is read back as an Integer
    }
    return a == null ? b == null : a.equals(b);
  }

  /** An attribute value with its Java type (see the class comment). */
  private static Object tagged(Object value) {
    if (value == null
        || value instanceof String
        || value instanceof Boolean
        || value instanceof Integer
        || value instanceof Long) {
      return value;
    }
    if (value instanceof Map<?, ?> map) {
      List<Object> entries = new ArrayList<>();
      map.forEach((k, v) -> entries.add(Arrays.asList(k, tagged(v))));
      return obj("map", entries);
    }
    if (value instanceof List<?> list) {
      return list.stream().map(SmileVectors::tagged).toList();
    }
    if (value instanceof Double d) {
      return obj("double", Long.toHexString(Double.doubleToRawLongBits(d)));
    }
    if (value instanceof Float f) {
      return obj("float", Integer.toHexString(Float.floatToRawIntBits(f)));
    }
    if (value instanceof BigInteger b) {
      return obj("big_integer", b.toString());
    }
    if (value instanceof BigDecimal d) {
      return obj("big_decimal", d.toString());
    }
    if (value instanceof byte[] b) {
      return obj("binary", hex(b));
    }
    if (value instanceof ObjId id) {
      return obj("binary", hex(id));
    }
    throw new IllegalArgumentException("no tag for " + value.getClass());
  }

  // --- values ----------------------------------------------------------------------------------

  private String ascii(int length) {
    StringBuilder s = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      s.append((char) ('a' + random.nextInt(26)));
    }
    return s.toString();
  }

  private List<Object> randomInts(int count) {
    List<Object> ints = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ints.add(random.nextInt());
    }
    return ints;
  }

  private static byte[] filled(int length, byte value) {
    byte[] bytes = new byte[length];
    Arrays.fill(bytes, value);
    return bytes;
  }
}
