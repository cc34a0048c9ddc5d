package lochkit.nessiebench;

import java.util.ArrayList;
import java.util.List;

/** Command-line options. Unknown or malformed options are refused with a message. */
record Options(
    String mode,
    String backend,
    String url,
    String repository,
    long cacheMb,
    String branch,
    List<Integer> writers,
    List<String> names,
    double seconds,
    double warmupSeconds,
    String shape,
    boolean cache,
    long startAtMillis) {

  static final String USAGE =
      String.join(
          "\n",
          "usage: nessie-bench serve|writers --backend inmemory|rocksdb|postgres|mongodb [options]",
          "  (database address in the environment variable NESSIE_BENCH_URL)",
          "  --repository ID        repository id (default nessie-bench)",
          "  --cache-mb N           object cache capacity in MB (default 64)",
          "writers mode:",
          "  --branch NAME          branch all writers commit to (created if missing)",
          "  --writers 1,10         puts per commit, one writer each",
          "  --names a,b            writer names (default w0-1put, w1-10put, ...)",
          "  --seconds S            measured duration (default 15)",
          "  --warmup S             warm-up before measuring, not counted (default 0)",
          "  --shape new-tables|updates  what each put does (default new-tables)",
          "  --cache on|off         through Nessie's object cache (default on)",
          "  --start-at-millis T    wait until this epoch time before starting (several processes)");

  static Options parse(String[] args) {
    if (args.length == 0 || !(args[0].equals("serve") || args[0].equals("writers"))) {
      throw new IllegalArgumentException("the first argument must be 'serve' or 'writers'");
    }
    String mode = args[0];
    String backend = null;
    String repository = "nessie-bench";
    long cacheMb = 64;
    String branch = null;
    List<Integer> writers = List.of(1, 10);
    List<String> names = null;
    double seconds = 15;
    double warmup = 0;
    String shape = "new-tables";
    boolean cache = true;
    long startAt = 0;
    for (int i = 1; i < args.length; i++) {
      String name = args[i];
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("option " + name + " needs a value");
      }
      String value = args[++i];
      switch (name) {
        case "--backend" -> backend = value;
        case "--repository" -> repository = value;
        case "--cache-mb" -> cacheMb = positiveLong(name, value);
        case "--branch" -> branch = value;
        case "--writers" -> writers = positiveInts(name, value);
        case "--names" -> names = List.of(value.split(","));
        case "--seconds" -> seconds = positiveDouble(name, value);
        case "--warmup" -> warmup = nonNegativeDouble(name, value);
        case "--shape" -> shape = oneOf(name, value, "new-tables", "updates");
        case "--cache" -> cache = oneOf(name, value, "on", "off").equals("on");
        case "--start-at-millis" -> startAt = positiveLong(name, value);
        default -> throw new IllegalArgumentException("unknown option " + name);
      }
    }
    if (backend == null) {
      throw new IllegalArgumentException("--backend is required");
    }
    oneOf("--backend", backend, "inmemory", "rocksdb", "postgres", "mongodb");
    String url = System.getenv("NESSIE_BENCH_URL");
    if (!backend.equals("inmemory") && (url == null || url.isEmpty())) {
      throw new IllegalArgumentException(
          "backend " + backend + " needs its address in the environment variable NESSIE_BENCH_URL");
    }
    if (mode.equals("writers")) {
      if (branch == null) {
        throw new IllegalArgumentException("writers mode needs --branch");
      }
      if (names == null) {
        names = new ArrayList<>();
        for (int i = 0; i < writers.size(); i++) {
          names.add("w" + i + "-" + writers.get(i) + "put");
        }
      }
      if (names.size() != writers.size()) {
        throw new IllegalArgumentException("--names must name as many writers as --writers lists");
      }
    }
    return new Options(
        mode, backend, url, repository, cacheMb, branch, writers, names, seconds, warmup, shape,
        cache, startAt);
  }

  private static String oneOf(String name, String value, String... allowed) {
    for (String a : allowed) {
      if (a.equals(value)) {
        return value;
      }
    }
    throw new IllegalArgumentException(
        name + " " + value + ": must be one of " + String.join(", ", allowed));
  }

  private static long positiveLong(String name, String value) {
    try {
      long v = Long.parseLong(value);
      if (v > 0) {
        return v;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new IllegalArgumentException(name + " " + value + ": must be a positive whole number");
  }

  private static double positiveDouble(String name, String value) {
    double v = nonNegativeDouble(name, value);
    if (v <= 0) {
      throw new IllegalArgumentException(name + " " + value + ": must be greater than zero");
    }
    return v;
  }

  private static double nonNegativeDouble(String name, String value) {
    try {
      double v = Double.parseDouble(value);
      if (v >= 0 && Double.isFinite(v)) {
        return v;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new IllegalArgumentException(name + " " + value + ": must be a number of seconds");
  }

  private static List<Integer> positiveInts(String name, String value) {
    List<Integer> result = new ArrayList<>();
    for (String part : value.split(",")) {
      result.add((int) positiveLong(name, part.trim()));
    }
    return result;
  }
}
