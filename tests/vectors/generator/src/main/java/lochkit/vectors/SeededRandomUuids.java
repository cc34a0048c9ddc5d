package lochkit.vectors;

import java.security.Provider;
import java.security.Security;
import java.security.SecureRandomSpi;
import java.util.Random;

/**
 * Makes {@code UUID.randomUUID()} reproducible in this JVM: Nessie's version store draws new content
 * ids from it, and they enter commit ids, so the version-store vectors need the same ids every run.
 * A provider placed first in the security provider list is what {@code new SecureRandom()} (and so
 * {@code UUID}'s generator, made on first use) takes; it must therefore be installed before anything
 * in the JVM asks for a random UUID.
 */
public final class SeededRandomUuids {
  private SeededRandomUuids() {}

  private static final long SEED = 281280517L;

  static void install() {
    Security.insertProviderAt(new SeededProvider(), 1);
  }

  /** The provider offering the seeded generator. */
  public static final class SeededProvider extends Provider {
    private static final long serialVersionUID = 1L;

    public SeededProvider() {
      super("LochkitSeededRandom", "1", "Seeded randomness for reproducible test vectors");
      putService(
          new Provider.Service(
              this, "SecureRandom", "LochkitSeeded", Spi.class.getName(), null, null));
    }
  }

  /** A deterministic stream from one fixed seed, shared by every instance. */
  public static final class Spi extends SecureRandomSpi {
    private static final long serialVersionUID = 1L;
    private static final Random RANDOM = new Random(SEED);

    public Spi() {}

    @Override
    protected void engineSetSeed(byte[] seed) {}

    @Override
    protected void engineNextBytes(byte[] bytes) {
      synchronized (RANDOM) {
        RANDOM.nextBytes(bytes);
      }
    }

    @Override
    protected byte[] engineGenerateSeed(int numBytes) {
      byte[] bytes = new byte[numBytes];
      engineNextBytes(bytes);
      return bytes;
    }
  }
}
