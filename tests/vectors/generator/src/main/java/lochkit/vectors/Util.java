package lochkit.vectors;

import static org.projectnessie.versioned.storage.common.objtypes.CommitHeaders.newCommitHeaders;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.projectnessie.nessie.relocated.protobuf.ByteString;
import org.projectnessie.versioned.storage.common.indexes.StoreKey;
import org.projectnessie.versioned.storage.common.objtypes.CommitHeaders;
import org.projectnessie.versioned.storage.common.objtypes.CommitOp;
import org.projectnessie.versioned.storage.common.persist.ObjId;

/** Small helpers shared by the vector generators: hex, JSON building blocks, seeded randomness. */
final class Util {
  private Util() {}

  static final String NESSIE_VERSION = "0.108.1";

  private static final HexFormat HEX = HexFormat.of();

  /** An insertion-ordered JSON object from alternating keys and values. */
  static Map<String, Object> obj(Object... keysAndValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return map;
  }

  static String hex(byte[] bytes) {
    return bytes == null ? null : HEX.formatHex(bytes);
  }

  static String hex(ByteString bytes) {
    return bytes == null ? null : hex(bytes.toByteArray());
  }

  static String hex(ObjId id) {
    return id == null ? null : hex(id.asByteArray());
  }

  static List<String> hexList(List<ObjId> ids) {
    return ids.stream().map(Util::hex).toList();
  }

  static String uuid(UUID uuid) {
    return uuid == null ? null : uuid.toString();
  }

  /** A store key as its list of elements (Nessie joins them with U+0000). */
  static List<String> elements(StoreKey key) {
    return Arrays.asList(key.rawString().split("\u0000", -1));
  }

  static byte[] randomBytes(Random random, int length) {
    byte[] bytes = new byte[length];
    random.nextBytes(bytes);
    return bytes;
  }

  static ObjId randomObjId(Random random, int length) {
    return ObjId.objIdFromByteArray(randomBytes(random, length));
  }

  static ObjId randomObjId(Random random) {
    return randomObjId(random, 32);
  }

  static UUID randomUuid(Random random) {
    return new UUID(random.nextLong(), random.nextLong());
  }

  /** Header name/value pairs in the order they are handed to Nessie's headers builder. */
  record HeaderPairs(List<List<String>> pairs) {
    static HeaderPairs of(String... namesAndValues) {
      List<List<String>> pairs = new ArrayList<>();
      for (int i = 0; i < namesAndValues.length; i += 2) {
        pairs.add(List.of(namesAndValues[i], namesAndValues[i + 1]));
      }
      return new HeaderPairs(pairs);
    }

    CommitHeaders build() {
      CommitHeaders.Builder builder = newCommitHeaders();
      pairs.forEach(p -> builder.add(p.get(0), p.get(1)));
      return builder.build();
    }
  }

  /**
   * Adds "headers" (the input pairs), "java_header_order" (lowercased names as the JVM iterates
   * them when hashing) and "java_header_order_is_sorted" (whether that equals code-point order).
   */
  static void putHeaders(Map<String, Object> target, HeaderPairs pairs, CommitHeaders headers) {
    if (headers == null) {
      target.put("headers", null);
      target.put("java_header_order", null);
      target.put("java_header_order_is_sorted", null);
      return;
    }
    List<String> javaOrder = new ArrayList<>(headers.keySet());
    List<String> sorted = new ArrayList<>(javaOrder);
    sorted.sort(Util::compareCodePoints);
    target.put("headers", pairs.pairs());
    target.put("java_header_order", javaOrder);
    target.put("java_header_order_is_sorted", javaOrder.equals(sorted));
  }

  /** String order by Unicode code point (= UTF-8 byte order), unlike String.compareTo (UTF-16). */
  static int compareCodePoints(String a, String b) {
    return Arrays.compare(a.codePoints().toArray(), b.codePoints().toArray());
  }

  /** One index element / commit op as JSON. */
  static Map<String, Object> element(StoreKey key, CommitOp op) {
    return obj(
        "key", elements(key),
        "action", String.valueOf(op.action().value()),
        "payload", op.payload(),
        "value", hex(op.value()),
        "content_id", uuid(op.contentId()));
  }
}
