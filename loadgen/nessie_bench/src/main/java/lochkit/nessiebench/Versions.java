package lochkit.nessiebench;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The version of the jar a class was loaded from, for reports. */
final class Versions {
  private static final Pattern JAR_VERSION = Pattern.compile("-(\\d+(?:\\.\\d+)+)\\.jar$");

  private Versions() {}

  static String of(Class<?> type) {
    String fromManifest = type.getPackage().getImplementationVersion();
    if (fromManifest != null) {
      return fromManifest;
    }
    try {
      String jar = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
      Matcher m = JAR_VERSION.matcher(jar);
      if (m.find()) {
        return m.group(1);
      }
    } catch (Exception ignored) {
      // no code source: report unknown
    }
    return "unknown";
  }
}
