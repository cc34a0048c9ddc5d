package lochkit.vectors;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes lochkit's Nessie test vectors.
 *
 * <p>Usage: {@code GenerateVectors <output directory>}; writes {@code nessie-object-ids.json},
 * {@code nessie-index.json} and {@code nessie-commit-ids.json}. Every random value comes from a
 * fixed seed, so running it again gives byte-identical files.
 */
public final class GenerateVectors {
  private GenerateVectors() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: GenerateVectors <output directory>");
      System.exit(2);
    }
    SeededRandomUuids.install(); // before anything in this JVM draws a random UUID
    Path out = Path.of(args[0]);
    Files.createDirectories(out);
    Json.write(out.resolve("nessie-object-ids.json"), ObjectIdVectors.generate());
    Json.write(out.resolve("nessie-index.json"), IndexVectors.generate());
    Json.write(out.resolve("nessie-commit-ids.json"), CommitVectors.generate());
    Json.write(out.resolve("nessie-content.json"), ContentVectors.generate());
    Json.write(out.resolve("nessie-version-store.json"), VersionStoreVectors.generate());
    Json.write(out.resolve("nessie-objproto.json"), ObjProtoVectors.generate());
    Json.write(out.resolve("nessie-key-order.json"), KeyOrderVectors.generate());
    Json.write(out.resolve("nessie-smile.json"), SmileVectors.generate());
  }
}
