package lochkit.nessiebench;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** The options of an address's query ({@code ?a=1&b=2}), percent-decoded. */
final class UrlOptions {
  private UrlOptions() {}

  /** Every option of {@code rawQuery} (null: none), in order; an option without a value is "". */
  static Map<String, String> parse(String rawQuery) {
    Map<String, String> options = new LinkedHashMap<>();
    if (rawQuery == null) {
      return options;
    }
    for (String option : rawQuery.split("&")) {
      if (option.isEmpty()) {
        continue;
      }
      int eq = option.indexOf('=');
      options.put(
          decode(eq < 0 ? option : option.substring(0, eq)),
          eq < 0 ? "" : decode(option.substring(eq + 1)));
    }
    return options;
  }

  static String decode(String text) {
    return URLDecoder.decode(text, StandardCharsets.UTF_8);
  }
}
