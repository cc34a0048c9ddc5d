package lochkit.nessiebench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.projectnessie.versioned.storage.common.persist.Persist;

/**
 * Sees the attempts of Nessie's commit retry loop from outside: a Persist proxy on which every
 * attempt ends with exactly one compare-and-swap ({@code updateReferencePointer}), won or lost.
 * An attempt starts at the first Persist call after the previous one ended, on the same thread.
 * Per thread: the attempts of the current commit and the duration of each.
 */
final class AttemptTracker {
  private static final class PerThread {
    long attemptStart;
    int attempts;
    Latencies first = new Latencies();
    Latencies retries = new Latencies();
  }

  private final ThreadLocal<PerThread> state = ThreadLocal.withInitial(PerThread::new);

  Persist wrap(Persist delegate) {
    InvocationHandler handler =
        (proxy, method, args) -> {
          PerThread s = state.get();
          if (s.attemptStart == 0L) {
            s.attemptStart = System.nanoTime();
          }
          boolean swap = method.getName().equals("updateReferencePointer");
          try {
            return method.invoke(delegate, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          } finally {
            if (swap) {
              long took = System.nanoTime() - s.attemptStart;
              (s.attempts == 0 ? s.first : s.retries).add(took);
              s.attempts++;
              s.attemptStart = 0L;
            }
          }
        };
    return (Persist)
        Proxy.newProxyInstance(Persist.class.getClassLoader(), new Class<?>[] {Persist.class}, handler);
  }

  /** Starts counting the attempts of a new commit on this thread. */
  void beginCommit() {
    PerThread s = state.get();
    s.attempts = 0;
    s.attemptStart = 0L;
  }

  /** Forgets this thread's attempt durations so far (e.g. those of a warm-up). */
  void resetLatencies() {
    PerThread s = state.get();
    s.first = new Latencies();
    s.retries = new Latencies();
  }

  /** Attempts the current commit on this thread made so far. */
  int attempts() {
    return state.get().attempts;
  }

  Latencies firstAttempts() {
    return state.get().first;
  }

  Latencies retries() {
    return state.get().retries;
  }
}
