package lochkit.nessiebench;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.nio.file.Path;
import org.projectnessie.versioned.storage.cache.CacheBackend;
import org.projectnessie.versioned.storage.cache.CacheConfig;
import org.projectnessie.versioned.storage.cache.PersistCaches;
import org.projectnessie.versioned.storage.common.config.StoreConfig;
import org.projectnessie.versioned.storage.common.logic.Logics;
import org.projectnessie.versioned.storage.common.logic.RepositoryLogic;
import org.projectnessie.versioned.storage.common.persist.Backend;
import org.projectnessie.versioned.storage.common.persist.Persist;
import org.projectnessie.versioned.storage.inmemory.InmemoryBackendFactory;
import org.projectnessie.versioned.storage.mongodb2.MongoDB2BackendConfig;
import org.projectnessie.versioned.storage.mongodb2.MongoDB2BackendFactory;
import org.projectnessie.versioned.storage.rocksdb.RocksDBBackendConfig;
import org.projectnessie.versioned.storage.rocksdb.RocksDBBackendFactory;

/**
 * One Nessie backend and its Persist, plain and through Nessie's object cache (as Nessie's server
 * runs it). Both see the same repository, so a branch set up through one is visible to the other.
 */
final class Storage implements AutoCloseable {
  private final Backend backend;
  private final MongoClient mongo;
  private final String description;
  final Persist plain;
  final Persist cached;

  private Storage(Backend backend, MongoClient mongo, String description, String repository, long cacheMb) {
    this.backend = backend;
    this.mongo = mongo;
    this.description = description;
    backend.setupSchema();
    StoreConfig config = StoreConfig.Adjustable.empty().withRepositoryId(repository);
    this.plain = backend.createFactory().newPersist(config);
    CacheBackend cache =
        PersistCaches.newBackend(
            CacheConfig.builder().capacityMb(cacheMb).cacheCapacityOvershoot(0.1d).build());
    this.cached = cache.wrap(plain);
    RepositoryLogic repositoryLogic = Logics.repositoryLogic(plain);
    if (!repositoryLogic.repositoryExists()) {
      try {
        repositoryLogic.initialize("main");
      } catch (RuntimeException e) {
        // Another process initialised it at the same moment; fine if it exists now.
        if (!repositoryLogic.repositoryExists()) {
          throw e;
        }
      }
    }
  }

  /**
   * Drops the repository (through the cache, which forgets it too) and initialises it again: an
   * in-memory store keeps every commit on the heap, so long runs reset it between measurements.
   */
  void reset() {
    cached.erase();
    Logics.repositoryLogic(cached).initialize("main");
  }

  static Storage open(Options options) {
    String url = options.url();
    String repository = options.repository();
    long cacheMb = options.cacheMb();
    return switch (options.backend()) {
      case "inmemory" -> {
        InmemoryBackendFactory factory = new InmemoryBackendFactory();
        yield new Storage(
            factory.buildBackend(factory.newConfigInstance()),
            null,
            "nessie-versioned-storage-inmemory " + Versions.of(InmemoryBackendFactory.class),
            repository,
            cacheMb);
      }
      case "rocksdb" ->
          new Storage(
              new RocksDBBackendFactory()
                  .buildBackend(RocksDBBackendConfig.builder().databasePath(Path.of(url)).build()),
              null,
              "nessie-versioned-storage-rocksdb " + Versions.of(RocksDBBackendFactory.class),
              repository,
              cacheMb);
      case "mongodb" -> {
        ConnectionString connection = new ConnectionString(url);
        MongoClient client = MongoClients.create(connection);
        String database = connection.getDatabase() != null ? connection.getDatabase() : "nessie";
        yield new Storage(
            new MongoDB2BackendFactory()
                .buildBackend(
                    MongoDB2BackendConfig.builder().client(client).databaseName(database).build()),
            client,
            "nessie-versioned-storage-mongodb2 " + Versions.of(MongoDB2BackendFactory.class),
            repository,
            cacheMb);
      }
      case "postgres" ->
          new Storage(
              new JdbcBackend(url),
              null,
              "lochkit JdbcPersist (Nessie publishes no JDBC module) on nessie-versioned-storage-common "
                  + Versions.of(Persist.class),
              repository,
              cacheMb);
      default -> throw new IllegalArgumentException("unknown backend " + options.backend());
    };
  }

  /** Which Nessie storage module (and version) runs the backend. */
  String description() {
    return description;
  }

  Persist persist(boolean cache) {
    return cache ? cached : plain;
  }

  @Override
  public void close() throws Exception {
    backend.close();
    if (mongo != null) {
      mongo.close();
    }
  }
}
