package lochkit.vectors;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A tiny JSON writer, so the output layout is fully under our control and stable between runs.
 *
 * <p>Values are {@code null}, {@link Boolean}, {@link Number}, {@link String}, {@link Map} (written
 * in its iteration order, so use a {@code LinkedHashMap}) and {@link List}. Lists that hold only
 * scalars are written on one line; everything else is indented by two spaces. Strings are written
 * as UTF-8; only the characters JSON requires (quote, backslash, controls) are escaped.
 */
final class Json {
  private Json() {}

  static void write(Path file, Object value) throws IOException {
    StringBuilder out = new StringBuilder();
    value(out, value, 0);
    out.append('\n');
    Files.writeString(file, out, StandardCharsets.UTF_8);
  }

  static String toJson(Object value) {
    StringBuilder out = new StringBuilder();
    value(out, value, 0);
    return out.toString();
  }

  private static void value(StringBuilder out, Object value, int indent) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long) {
      out.append(value);
    } else if (value instanceof String s) {
      string(out, s);
    } else if (value instanceof Map<?, ?> map) {
      object(out, map, indent);
    } else if (value instanceof List<?> list) {
      array(out, list, indent);
    } else {
      throw new IllegalArgumentException("Cannot write " + value.getClass() + " as JSON");
    }
  }

  private static void object(StringBuilder out, Map<?, ?> map, int indent) {
    if (map.isEmpty()) {
      out.append("{}");
      return;
    }
    out.append('{');
    boolean first = true;
    for (Map.Entry<?, ?> e : map.entrySet()) {
      out.append(first ? "\n" : ",\n");
      first = false;
      newline(out, indent + 1);
      string(out, (String) e.getKey());
      out.append(": ");
      value(out, e.getValue(), indent + 1);
    }
    out.append('\n');
    newline(out, indent);
    out.append('}');
  }

  private static void array(StringBuilder out, List<?> list, int indent) {
    boolean scalars = list.stream().noneMatch(v -> v instanceof Map || v instanceof List);
    if (scalars) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        out.append(i == 0 ? "" : ", ");
        value(out, list.get(i), indent);
      }
      out.append(']');
      return;
    }
    out.append('[');
    for (int i = 0; i < list.size(); i++) {
      out.append(i == 0 ? "\n" : ",\n");
      newline(out, indent + 1);
      value(out, list.get(i), indent + 1);
    }
    out.append('\n');
    newline(out, indent);
    out.append(']');
  }

  private static void newline(StringBuilder out, int indent) {
    out.append("  ".repeat(indent));
  }

  private static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\t' -> out.append("\\t");
        case '\r' -> out.append("\\r");
        default -> {
          if (c < 0x20 || c == 0x7f || Character.isSurrogate(c) && !validPair(s, i)) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** True if the surrogate at {@code i} is half of a well-formed pair (those are written as is). */
  private static boolean validPair(String s, int i) {
    char c = s.charAt(i);
    if (Character.isHighSurrogate(c)) {
      return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
    }
    return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
  }
}
