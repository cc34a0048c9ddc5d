package lochkit.vectors;

import static lochkit.vectors.IndexVectors.el;
import static lochkit.vectors.Util.element;
import static lochkit.vectors.Util.elements;
import static lochkit.vectors.Util.hex;
import static lochkit.vectors.Util.obj;
import static lochkit.vectors.Util.randomObjId;
import static lochkit.vectors.Util.randomUuid;
import static org.projectnessie.versioned.storage.common.indexes.StoreIndexes.deserializeStoreIndex;
import static org.projectnessie.versioned.storage.common.indexes.StoreIndexes.newStoreIndex;
import static org.projectnessie.versioned.storage.common.indexes.StoreKey.key;
import static org.projectnessie.versioned.storage.common.objtypes.CommitOp.COMMIT_OP_SERIALIZER;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.projectnessie.nessie.relocated.protobuf.ByteString;
import org.projectnessie.versioned.storage.common.indexes.StoreIndex;
import org.projectnessie.versioned.storage.common.indexes.StoreIndexElement;
import org.projectnessie.versioned.storage.common.indexes.StoreKey;
import org.projectnessie.versioned.storage.common.objtypes.CommitOp;
import org.projectnessie.versioned.storage.common.objtypes.CommitOp.Action;

/**
 * How Nessie's size estimate evolves: sequences of add/remove calls on one index, recording the
 * return value and {@code estimatedSerializedSize()} after every step. The estimate depends on the
 * history (a remove does not give back what the add charged), so element lists alone cannot
 * reproduce it.
 */
final class EstimateHistories {
  private final StoreIndex<CommitOp> index;
  private final String startHex;
  private final int startEstimate;
  private final List<Object> steps = new ArrayList<>();

  static List<Object> generate() {
    Random r = new Random(IndexVectors.SEED + 99);
    List<Object> result = new ArrayList<>();

    EstimateHistories h = new EstimateHistories(null);
    h.add(el(key("a"), Action.ADD, 1, randomObjId(r), null));
    h.add(el(key("b", "c"), Action.ADD, 2, randomObjId(r), randomUuid(r)));
    h.add(el(key("ü😀"), Action.INCREMENTAL_ADD, 3, randomObjId(r), null));
    h.add(el(key("a"), Action.ADD, 1, randomObjId(r, 256), null)); // replace: bigger value id
    h.add(el(key("a"), Action.REMOVE, 1, null, null)); // replace: smaller (null) value id
    h.remove(key("b", "c"));
    h.remove(key("missing"));
    h.add(el(key("b", "c"), Action.ADD, 2, randomObjId(r), null)); // re-add after remove
    result.add(h.finish("add-replace-remove", "starts from an empty mutable index"));

    // Start from serialised bytes: the estimate then starts at the real size.
    StoreIndex<CommitOp> start = newStoreIndex(COMMIT_OP_SERIALIZER);
    for (String k : new String[] {"a", "c", "e", "g"}) {
      start.add(el(key(k), Action.INCREMENTAL_ADD, 1, randomObjId(r), randomUuid(r)));
    }
    h = new EstimateHistories(start.serialize());
    h.add(el(key("b"), Action.ADD, 1, randomObjId(r), randomUuid(r)));
    h.remove(key("c"));
    h.add(el(key("e"), Action.INCREMENTAL_REMOVE, 1, null, null));
    h.add(el(key("g"), Action.ADD, 1, randomObjId(r), null));
    result.add(
        h.finish(
            "from-deserialized",
            "starts from deserialising start_serialized_hex; re-serialisation must equal a fresh build"));

    h = new EstimateHistories(start.serialize());
    result.add(h.finish("deserialized-untouched", "deserialised and serialised again without changes"));
    return result;
  }

  private EstimateHistories(ByteString start) {
    this.index =
        start == null
            ? newStoreIndex(COMMIT_OP_SERIALIZER)
            : deserializeStoreIndex(start, COMMIT_OP_SERIALIZER);
    this.startHex = start == null ? null : hex(start);
    this.startEstimate = index.estimatedSerializedSize();
  }

  private void add(StoreIndexElement<CommitOp> element) {
    boolean returned = index.add(element);
    steps.add(
        obj(
            "op", "add",
            "element", element(element.key(), element.content()),
            "returned", returned,
            "estimated_serialized_size", index.estimatedSerializedSize()));
  }

  private void remove(StoreKey key) {
    boolean returned = index.remove(key);
    steps.add(
        obj(
            "op", "remove",
            "key", elements(key),
            "returned", returned,
            "estimated_serialized_size", index.estimatedSerializedSize()));
  }

  private Map<String, Object> finish(String name, String description) {
    ByteString serialized = index.serialize();
    StoreIndex<CommitOp> fresh = newStoreIndex(COMMIT_OP_SERIALIZER);
    index.forEach(fresh::add);
    IndexVectors.check(
        fresh.serialize().equals(serialized), name + ": re-serialisation differs from a fresh build");
    return obj(
        "name", name,
        "description", description,
        "start_serialized_hex", startHex,
        "start_estimated_serialized_size", startEstimate,
        "steps", steps,
        "serialized_hex", hex(serialized),
        "serialized_size", serialized.size());
  }
}
