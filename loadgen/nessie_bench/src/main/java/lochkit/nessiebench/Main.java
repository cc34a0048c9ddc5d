package lochkit.nessiebench;

import java.io.PrintStream;

/**
 * Nessie's side of lochkit's side-by-side commit benchmark.
 *
 * <p>Two modes, both over Nessie's own {@code VersionStoreImpl} on the chosen backend:
 *
 * <ul>
 *   <li>{@code serve}: reads commands from stdin, one per line, and answers each with one JSON
 *       line on stdout, so that lochkit can alternate rounds between Nessie and itself while the
 *       JVM stays warm. See {@link Serve}.
 *   <li>{@code writers}: N writers commit to one branch at once for a duration, each with its own
 *       puts per commit, and one JSON document with per-writer figures is printed. See {@link
 *       Writers}.
 * </ul>
 *
 * <p>The database address comes from the environment variable {@code NESSIE_BENCH_URL} (a JDBC
 * URL, a MongoDB connection string or a RocksDB directory), so that passwords never show in a
 * process listing.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    PrintStream out = System.out;
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("nessie-bench: " + e.getMessage());
      System.err.println(Options.USAGE);
      System.exit(2);
      return;
    }
    try (Storage storage = Storage.open(options)) {
      if (options.mode().equals("serve")) {
        new Serve(storage, options).run(System.in, out);
      } else {
        try {
          out.println(Writers.run(storage, options));
        } finally {
          // The writers' repository is a scratch one lochkit named for this run: leave nothing.
          storage.plain.erase();
        }
      }
      out.flush();
    } catch (Exception e) {
      System.err.println("nessie-bench: " + e);
      e.printStackTrace(System.err);
      System.exit(1);
    }
  }
}
