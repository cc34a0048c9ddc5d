package lochkit.nessiebench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.projectnessie.model.CommitMeta;
import org.projectnessie.model.ContentKey;
import org.projectnessie.model.IcebergTable;
import org.projectnessie.model.Namespace;
import org.projectnessie.model.Operation;
import org.projectnessie.model.Operation.Put;
import org.projectnessie.versioned.BranchName;
import org.projectnessie.versioned.GetNamedRefsParams;
import org.projectnessie.versioned.ReferenceAlreadyExistsException;
import org.projectnessie.versioned.VersionStore;

/**
 * The content shapes of lochkit's benchmarks, built the same way on Nessie's side.
 *
 * <ul>
 *   <li>{@code updates} (lochkit bench): a branch holds namespace {@code bench} and tables {@code
 *       bench.table_000000} ...; commit n updates {@code puts} of them round robin, each to
 *       metadata location {@code s3://bucket/metadata/%08d.json} and snapshot id n + 1.
 *   <li>{@code new-tables} (the asymmetric experiment): commit n of writer W creates tables {@code
 *       W-n-p} for p below {@code puts}, metadata location {@code asym/W/n/p}.
 * </ul>
 */
final class Workload {
  static final String NAMESPACE = "bench";

  private final BranchName branch;
  private final List<ContentKey> keys = new ArrayList<>();
  private final Map<ContentKey, String> contentIds = new HashMap<>();

  Workload(String branch) {
    this.branch = BranchName.of(branch);
  }

  /** Creates the branch at main's head unless it exists. */
  static void createBranch(VersionStore store, String name) throws Exception {
    try {
      store.create(
          BranchName.of(name),
          Optional.of(store.getNamedRef("main", GetNamedRefsParams.DEFAULT).getHash()));
    } catch (ReferenceAlreadyExistsException e) {
      // several processes may create it at once: one wins, all use it
    }
  }

  /** The {@code updates} shape: creates the branch with the namespace and {@code count} tables. */
  void setUpTables(VersionStore store, int count) throws Exception {
    createBranch(store, branch.getName());
    commit(
        store,
        "namespace",
        List.of(Put.of(ContentKey.of(NAMESPACE), Namespace.of(NAMESPACE))));
    for (int i = 0; i < count; i++) {
      keys.add(ContentKey.of(NAMESPACE, String.format("table_%06d", i)));
    }
    for (int start = 0; start < count; start += 500) {
      List<Operation> puts = new ArrayList<>();
      for (ContentKey key : keys.subList(start, Math.min(count, start + 500))) {
        puts.add(Put.of(key, table(0, null)));
      }
      commit(store, "bulk", puts);
    }
  }

  /** Commit n of the {@code updates} shape. */
  void update(VersionStore store, long n, int puts) throws Exception {
    List<Operation> ops = new ArrayList<>(puts);
    int size = keys.size();
    for (int j = 0; j < puts; j++) {
      ContentKey key = keys.get((int) ((n * puts + j) % size));
      ops.add(Put.of(key, table(n + 1, contentIds.get(key))));
    }
    store.commit(branch, Optional.empty(), CommitMeta.fromMessage("update #" + n), ops);
  }

  /** Commit n of writer {@code name} in the {@code new-tables} shape. */
  void newTables(VersionStore store, String name, long n, int puts) throws Exception {
    List<Operation> ops = new ArrayList<>(puts);
    for (int p = 0; p < puts; p++) {
      ops.add(
          Put.of(
              ContentKey.of(name + "-" + n + "-" + p),
              IcebergTable.of("asym/" + name + "/" + n + "/" + p, -1, 0, 0, 0)));
    }
    store.commit(branch, Optional.empty(), CommitMeta.fromMessage(name + " commit " + n), ops);
  }

  private void commit(VersionStore store, String message, List<Operation> ops) throws Exception {
    store.commit(
        branch, Optional.empty(), CommitMeta.fromMessage(message), ops, x -> {}, contentIds::put);
  }

  private static IcebergTable table(long n, String contentId) {
    return IcebergTable.of(String.format("s3://bucket/metadata/%08d.json", n), n, 0, 0, 0, contentId);
  }
}
