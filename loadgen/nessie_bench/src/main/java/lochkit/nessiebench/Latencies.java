package lochkit.nessiebench;

import java.util.Arrays;
import java.util.Locale;

/** Recorded durations (ns) and their percentiles, picked like lochkit's benchmark picks them. */
final class Latencies {
  private long[] values = new long[1024];
  private int count;

  void add(long nanos) {
    if (count == values.length) {
      values = Arrays.copyOf(values, count * 2);
    }
    values[count++] = nanos;
  }

  int count() {
    return count;
  }

  /** The p-th percentile in ms: the element at round(p/100 * (n-1)) of the sorted values. */
  double percentileMs(double p) {
    if (count == 0) {
      return 0.0;
    }
    long[] sorted = Arrays.copyOf(values, count);
    Arrays.sort(sorted);
    int at = (int) Math.min(count - 1, Math.round(p / 100.0 * (count - 1)));
    return sorted[at] / 1_000_000.0;
  }

  double maxMs() {
    long max = 0;
    for (int i = 0; i < count; i++) {
      max = Math.max(max, values[i]);
    }
    return max / 1_000_000.0;
  }

  static String ms(double value) {
    return String.format(Locale.ROOT, "%.3f", value);
  }
}
