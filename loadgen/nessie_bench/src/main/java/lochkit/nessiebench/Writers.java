package lochkit.nessiebench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import org.projectnessie.versioned.ReferenceConflictException;
import org.projectnessie.versioned.ReferenceRetryFailureException;
import org.projectnessie.versioned.VersionStore;
import org.projectnessie.versioned.storage.versionstore.VersionStoreImpl;

/**
 * The {@code writers} mode: writers (threads) commit to one branch at once, as fast as they can,
 * each with its own number of puts per commit, through Nessie's own commit retry loop (default
 * retry settings). Several processes can join one run: give them the same branch and
 * {@code --start-at-millis}, and distinct writer names.
 *
 * <p>Prints one JSON document: per writer its commits, commits/s, share of all commits of this
 * process, attempts per commit (mean, p99, max), retry timeouts, other conflicts, errors, commit
 * latency (p50, p99, max) and attempt latency of first attempts and of retries (p50, p99).
 */
final class Writers {
  private static final int MAX_ERRORS_IN_A_ROW = 20;

  private Writers() {}

  private static final class Stats {
    final String name;
    final int puts;
    long commits;
    long timeouts;
    long conflicts;
    long errors;
    String lastError;
    final List<Integer> attempts = new ArrayList<>();
    final Latencies latency = new Latencies();
    Latencies firstAttempts;
    Latencies retries;

    Stats(String name, int puts) {
      this.name = name;
      this.puts = puts;
    }
  }

  static String run(Storage storage, Options options) throws Exception {
    AttemptTracker tracker = new AttemptTracker();
    VersionStore store = new VersionStoreImpl(tracker.wrap(storage.persist(options.cache())));
    String branch = options.branch();
    Workload shared = new Workload(branch);
    if (options.shape().equals("updates")) {
      shared.setUpTables(store, 100);
    } else {
      Workload.createBranch(store, branch);
    }
    int count = options.writers().size();
    List<Stats> stats = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      stats.add(new Stats(options.names().get(i), options.writers().get(i)));
    }
    if (options.startAtMillis() > 0) {
      long wait = options.startAtMillis() - System.currentTimeMillis();
      if (wait > 0) {
        Thread.sleep(wait);
      }
    }
    CountDownLatch ready = new CountDownLatch(count);
    long[] window = new long[2];
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Stats s = stats.get(i);
      Thread t =
          new Thread(
              () -> {
                ready.countDown();
                try {
                  ready.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  return;
                }
                write(store, tracker, shared, options, s, window);
              },
              s.name);
      threads.add(t);
    }
    long start = System.nanoTime();
    long measureFrom = start + (long) (options.warmupSeconds() * 1e9);
    window[0] = measureFrom;
    window[1] = measureFrom + (long) (options.seconds() * 1e9);
    for (Thread t : threads) {
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    return report(storage, options, stats);
  }

  private static void write(
      VersionStore store, AttemptTracker tracker, Workload workload, Options options, Stats s, long[] window) {
    long n = 0;
    int errorsInARow = 0;
    boolean measuring = false;
    while (true) {
      long now = System.nanoTime();
      if (now >= window[1]) {
        break;
      }
      if (!measuring && now >= window[0]) {
        measuring = true;
        tracker.resetLatencies(); // the warm-up's attempts are not measured
      }
      tracker.beginCommit();
      long t0 = System.nanoTime();
      String outcome = "ok";
      try {
        if (options.shape().equals("updates")) {
          workload.update(store, n, s.puts);
        } else {
          workload.newTables(store, s.name, n, s.puts);
        }
        errorsInARow = 0;
      } catch (ReferenceRetryFailureException e) {
        outcome = "timeout";
      } catch (ReferenceConflictException e) {
        outcome = "conflict";
      } catch (Exception e) {
        outcome = "error";
        s.lastError = e.toString();
        errorsInARow++;
      }
      long took = System.nanoTime() - t0;
      int attempts = Math.max(1, tracker.attempts());
      if (measuring) {
        switch (outcome) {
          case "ok" -> {
            s.commits++;
            s.latency.add(took);
            s.attempts.add(attempts);
          }
          case "timeout" -> {
            s.timeouts++;
            s.attempts.add(attempts);
          }
          case "conflict" -> s.conflicts++;
          default -> s.errors++;
        }
      }
      if (errorsInARow >= MAX_ERRORS_IN_A_ROW) {
        break;
      }
      n++;
    }
    if (!measuring) {
      tracker.resetLatencies();
    }
    // This thread's attempt durations since the measured window began.
    s.firstAttempts = tracker.firstAttempts();
    s.retries = tracker.retries();
  }

  private static String report(Storage storage, Options options, List<Stats> stats) {
    long total = stats.stream().mapToLong(s -> s.commits).sum();
    double seconds = options.seconds();
    StringBuilder sb = new StringBuilder();
    sb.append("{\"nessie\": ").append(Json.quote(Versions.of(VersionStoreImpl.class)));
    sb.append(", \"storage\": ").append(Json.quote(storage.description()));
    sb.append(", \"branch\": ").append(Json.quote(options.branch()));
    sb.append(", \"shape\": ").append(Json.quote(options.shape()));
    sb.append(", \"cache\": ").append(options.cache());
    sb.append(String.format(Locale.ROOT, ", \"seconds\": %.3f", seconds));
    sb.append(", \"writers\": [");
    for (int i = 0; i < stats.size(); i++) {
      Stats s = stats.get(i);
      int[] attempts = s.attempts.stream().mapToInt(Integer::intValue).sorted().toArray();
      double mean = attempts.length == 0 ? 0 : java.util.Arrays.stream(attempts).average().orElse(0);
      int p99 = attempts.length == 0 ? 0 : attempts[(int) Math.min(attempts.length - 1, Math.round(0.99 * (attempts.length - 1)))];
      int max = attempts.length == 0 ? 0 : attempts[attempts.length - 1];
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(
          String.format(
              Locale.ROOT,
              "{\"writer\": %s, \"puts_per_commit\": %d, \"commits\": %d, \"commits_per_s\": %.1f,"
                  + " \"share\": %.4f, \"attempts_mean\": %.2f, \"attempts_p99\": %d,"
                  + " \"attempts_max\": %d, \"timeouts\": %d, \"conflicts\": %d, \"errors\": %d,"
                  + " \"p50_ms\": %s, \"p99_ms\": %s, \"max_ms\": %s,"
                  + " \"first_attempt_p50_ms\": %s, \"first_attempt_p99_ms\": %s,"
                  + " \"retry_attempts\": %d, \"retry_p50_ms\": %s, \"retry_p99_ms\": %s%s}",
              Json.quote(s.name),
              s.puts,
              s.commits,
              s.commits / seconds,
              total == 0 ? 0.0 : (double) s.commits / total,
              mean,
              p99,
              max,
              s.timeouts,
              s.conflicts,
              s.errors,
              Latencies.ms(s.latency.percentileMs(50)),
              Latencies.ms(s.latency.percentileMs(99)),
              Latencies.ms(s.latency.maxMs()),
              Latencies.ms(s.firstAttempts.percentileMs(50)),
              Latencies.ms(s.firstAttempts.percentileMs(99)),
              s.retries.count(),
              Latencies.ms(s.retries.percentileMs(50)),
              Latencies.ms(s.retries.percentileMs(99)),
              s.lastError == null ? "" : ", \"last_error\": " + Json.quote(s.lastError)));
    }
    sb.append("]}");
    return sb.toString();
  }
}
