package lochkit.nessiebench;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.projectnessie.versioned.VersionStore;
import org.projectnessie.versioned.storage.versionstore.VersionStoreImpl;

/**
 * The {@code serve} mode: one command per stdin line, one JSON line per answer on stdout. The JVM
 * stays up between commands, so warm-up and measured rounds run in one JIT-compiled process.
 *
 * <pre>
 * info                                      -> {"nessie": ..., "storage": ..., "java": ...}
 * setup BRANCH KEYS                         -> {"ok": true, "seconds": ...}
 * measure BRANCH PUTS SECONDS on|off        -> {"commits": ..., "seconds": ..., "commits_per_s": ...,
 *                                               "p50_ms": ..., "p99_ms": ..., "mean_ms": ...}
 * erase                                     -> {"ok": true}  (drops the repository's rows)
 * reset                                     -> {"ok": true}  (drops them and initialises it again)
 * quit
 * </pre>
 *
 * A command that fails answers {"error": "..."} and the loop goes on.
 */
final class Serve {
  private final Storage storage;
  private final VersionStore plainStore;
  private final VersionStore cachedStore;
  private final Map<String, Workload> workloads = new HashMap<>();
  private final Map<String, Long> nextCommit = new HashMap<>();

  Serve(Storage storage, Options options) {
    this.storage = storage;
    this.plainStore = new VersionStoreImpl(storage.plain);
    this.cachedStore = new VersionStoreImpl(storage.cached);
  }

  void run(InputStream in, PrintStream out) throws Exception {
    BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    out.println("{\"ready\": true}");
    out.flush();
    String line;
    while ((line = reader.readLine()) != null) {
      String[] words = line.trim().split("\\s+");
      if (words.length == 0 || words[0].isEmpty()) {
        continue;
      }
      if (words[0].equals("quit")) {
        return;
      }
      String answer;
      try {
        answer = answer(words);
      } catch (Exception e) {
        answer = "{\"error\": " + Json.quote(e.toString()) + "}";
      }
      out.println(answer);
      out.flush();
    }
  }

  private String answer(String[] words) throws Exception {
    switch (words[0]) {
      case "info" -> {
        return "{\"nessie\": "
            + Json.quote(Versions.of(VersionStoreImpl.class))
            + ", \"storage\": "
            + Json.quote(storage.description())
            + ", \"java\": "
            + Json.quote(System.getProperty("java.version"))
            + "}";
      }
      case "setup" -> {
        expect(words, 3, "setup BRANCH KEYS");
        long start = System.nanoTime();
        Workload workload = new Workload(words[1]);
        workload.setUpTables(plainStore, Integer.parseInt(words[2]));
        workloads.put(words[1], workload);
        return "{\"ok\": true, \"seconds\": " + Latencies.ms((System.nanoTime() - start) / 1e9) + "}";
      }
      case "measure" -> {
        expect(words, 5, "measure BRANCH PUTS SECONDS on|off");
        Workload workload = workloads.get(words[1]);
        if (workload == null) {
          throw new IllegalArgumentException("branch " + words[1] + " was not set up");
        }
        int puts = Integer.parseInt(words[2]);
        double seconds = Double.parseDouble(words[3]);
        VersionStore store = words[4].equals("on") ? cachedStore : plainStore;
        return measure(store, workload, words[1], puts, seconds);
      }
      case "reset" -> {
        storage.reset();
        workloads.clear();
        return "{\"ok\": true}";
      }
      case "erase" -> {
        storage.plain.erase();
        workloads.clear();
        return "{\"ok\": true}";
      }
      default -> throw new IllegalArgumentException("unknown command " + words[0]);
    }
  }

  private String measure(VersionStore store, Workload workload, String branch, int puts, double seconds)
      throws Exception {
    Latencies latencies = new Latencies();
    long n = nextCommit.getOrDefault(branch, 0L);
    long start = System.nanoTime();
    long deadline = start + (long) (seconds * 1e9);
    long now = start;
    long total = 0;
    while (now < deadline) {
      long t0 = System.nanoTime();
      workload.update(store, n++, puts);
      now = System.nanoTime();
      latencies.add(now - t0);
      total += now - t0;
    }
    nextCommit.put(branch, n);
    double elapsed = (now - start) / 1e9;
    int commits = latencies.count();
    return String.format(
        Locale.ROOT,
        "{\"commits\": %d, \"seconds\": %.3f, \"commits_per_s\": %.1f, \"p50_ms\": %s, \"p99_ms\": %s,"
            + " \"mean_ms\": %s}",
        commits,
        elapsed,
        commits / elapsed,
        Latencies.ms(latencies.percentileMs(50)),
        Latencies.ms(latencies.percentileMs(99)),
        Latencies.ms(commits == 0 ? 0.0 : total / 1e6 / commits));
  }

  private static void expect(String[] words, int count, String usage) {
    if (words.length != count) {
      throw new IllegalArgumentException("usage: " + usage);
    }
  }
}
