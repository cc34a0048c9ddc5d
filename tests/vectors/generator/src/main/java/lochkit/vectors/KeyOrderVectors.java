package lochkit.vectors;

import static lochkit.vectors.Util.elements;
import static lochkit.vectors.Util.obj;
import static lochkit.vectors.Util.randomObjId;
import static lochkit.vectors.Util.randomUuid;
import static org.projectnessie.versioned.storage.common.indexes.StoreKey.key;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.projectnessie.versioned.storage.common.config.StoreConfig;
import org.projectnessie.versioned.storage.common.indexes.StoreIndex;
import org.projectnessie.versioned.storage.common.indexes.StoreIndexElement;
import org.projectnessie.versioned.storage.common.indexes.StoreKey;
import org.projectnessie.versioned.storage.common.objtypes.CommitOp;
import org.projectnessie.versioned.storage.common.objtypes.CommitOp.Action;

/**
 * Key-order vectors: how Nessie orders store keys whose UTF-16 order differs from their code-point
 * order (characters above U+FFFF against U+E000..U+FFFF), and the index bytes and commit ids that
 * order produces.
 *
 * <p>Writes {@code nessie-key-order.json}: the keys as given and as {@code StoreKey.compareTo} sorts
 * them, an index over them (as {@link IndexVectors} writes one) with its {@code divide(n)} parts,
 * and commit chains (as {@link CommitVectors} writes them) whose incremental indexes, spilled
 * stripes and ids depend on the order.
 */
final class KeyOrderVectors {
  static final long SEED = 0x10c4_0007L;

  /** Supplementary characters (a surrogate pair in UTF-16) and characters of U+E000..U+FFFF. */
  private static final String GRIN = "\ud83d\ude00"; // U+1F600

  private static final String LINEAR_B = "\ud800\udc00"; // U+10000, the first supplementary char
  private static final String LAST = "\udbff\udfff"; // U+10FFFF, the last one

  private static final List<String> NAMES =
      List.of(
          "a", "z", "\u00e9", "\ud7ff", "\ue000", "\uff5e", "\ufffd", "\uffff", GRIN, LINEAR_B, LAST,
          "x" + GRIN, "x\uff5e", "x\ue000b", "x" + LINEAR_B + "b", "xy", "x\ufffd" + GRIN);

  /**
   * Single- and multi-element keys over {@link #NAMES}, by hand and as the version store maps
   * content keys. No key is another key plus more elements: Nessie 0.108.1 reads such a pair back
   * wrongly from a serialised index in some cases (its lazily decoded keys re-encode a predecessor
   * without the U+0000 that follows it), which would make the vectors test that instead.
   */
  static List<StoreKey> keys() {
    List<StoreKey> keys = new ArrayList<>();
    for (String name : NAMES) {
      keys.add(key(name));
    }
    keys.add(key("k", GRIN));
    keys.add(key("k", "\uff5e"));
    keys.add(key("k", "\ue000", "x"));
    keys.add(key("k", LINEAR_B, "x"));
    keys.add(key("k", "t", GRIN));
    keys.add(key("k", "t", "\ufffd"));
    keys.add(key("k", "t\uff5e"));
    keys.add(key("M", "db\u0001t" + GRIN, "C"));
    keys.add(key("M", "db\u0001t\uff5e", "C"));
    keys.add(key("M", "db\u0001t", "C"));
    keys.add(key("M", "db" + GRIN + "\u0001t", "C"));
    keys.add(key("M", "db\uffe0\u0001t", "C"));
    return keys;
  }

  static Map<String, Object> generate() throws Exception {
    List<StoreKey> given = new ArrayList<>(keys());
    Collections.shuffle(given, new Random(SEED));
    List<StoreKey> sorted = new ArrayList<>(given);
    Collections.sort(sorted);
    List<StoreKey> byCodePoint = new ArrayList<>(given);
    byCodePoint.sort((a, b) -> Util.compareCodePoints(a.rawString(), b.rawString()));
    IndexVectors.check(!sorted.equals(byCodePoint), "the key set must order differently by code point");

    Random random = new Random(SEED + 1);
    List<StoreIndexElement<CommitOp>> elements = new ArrayList<>();
    for (StoreKey k : given) {
      elements.add(IndexVectors.el(k, Action.ADD, 1 + random.nextInt(5), randomObjId(random), randomUuid(random)));
    }
    IndexVectors.Spec spec =
        new IndexVectors.Spec("mixed-planes", "the key set above, one ADD per key", true, elements);

    return obj(
        "format", "lochkit nessie key-order vectors v1",
        "nessie_version", Util.NESSIE_VERSION,
        "seed", SEED,
        "given_keys", given.stream().map(k -> (Object) elements(k)).toList(),
        "sorted_keys", sorted.stream().map(k -> (Object) elements(k)).toList(),
        "index", IndexVectors.vector(spec),
        "divisions", divisions(spec, new int[] {2, 3, 5}),
        "chains", chains());
  }

  /** {@code divide(n)} of the index: where its parts (the spilled stripes) begin and end. */
  private static List<Object> divisions(IndexVectors.Spec spec, int[] counts) {
    List<Object> result = new ArrayList<>();
    for (int n : counts) {
      List<Object> parts = new ArrayList<>();
      for (StoreIndex<CommitOp> part : IndexVectors.build(spec).divide(n)) {
        parts.add(IndexVectors.partJson(part));
      }
      result.add(obj("parts_requested", n, "parts", parts));
    }
    return result;
  }

  /** The chains: one incremental index; spilled into embedded stripes; into an IndexSegmentsObj. */
  private static List<Object> chains() throws Exception {
    return List.of(
        chain("mixed-planes", "the keys in one incremental index", 10, a -> a).json(),
        chain("mixed-planes-stripes", "tiny limits spill the keys into embedded reference-index stripes", 4,
            a -> a.withMaxIncrementalIndexSize(1024).withMaxSerializedIndexSize(512)).json(),
        chain("mixed-planes-segments", "tiny limits and at most 2 embedded stripes: an IndexSegmentsObj", 4,
            a -> a.withMaxIncrementalIndexSize(1024).withMaxSerializedIndexSize(512)
                .withMaxReferenceStripesPerCommit(2)).json());
  }

  /**
   * Commits adding the keys (in a shuffled order) {@code perCommit} at a time, then updating and
   * removing some; the stripes' first and last keys and the commit ids follow the key order.
   */
  private static CommitVectors.Chain chain(
      String name, String description, int perCommit, UnaryOperator<StoreConfig.Adjustable> adjust)
      throws Exception {
    CommitVectors.Chain c = new CommitVectors().new Chain(name, description, adjust);
    Random random = new Random(SEED + name.hashCode());
    List<StoreKey> keys = new ArrayList<>(keys());
    Collections.shuffle(keys, random);
    for (int from = 0, n = 0; from < keys.size(); from += perCommit, n++) {
      CommitVectors.Request r = c.request("add " + n);
      for (StoreKey k : keys.subList(from, Math.min(from + perCommit, keys.size()))) {
        r.op(c.addNew(k, 1 + random.nextInt(5), randomUuid(random)));
      }
      c.commit("add-" + n, r);
    }
    c.commit("update", c.request("update").op(c.update(key(GRIN))).op(c.update(key("k", "\uff5e"))));
    c.commit("remove", c.request("remove").op(c.remove(key(LINEAR_B))).op(c.remove(key("x\ue000b"))));
    return c;
  }

  private KeyOrderVectors() {}
}
