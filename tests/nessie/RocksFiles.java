// Opens a RocksDB directory the way a Nessie server's ROCKSDB store does (column families default,
// nessie_refs, nessie_objects, universal compaction, a TransactionDB) with the RocksDB Java binding
// bundled in Nessie's runner jar, to check that the files lochkit's RocksDB writes and the files
// Nessie's writes can be read by the other. Run by tests/nessie/test_rocksdb_files.py as a
// single-file program: java -cp nessie-quarkus-VERSION-runner.jar RocksFiles.java MODE DIR ...
//
//   dump DIR                           prints "version X.Y.Z", then "CF<TAB>key hex<TAB>value hex"
//                                      for every key of every column family
//   write DIR CF KEY VALUE [...]       puts each (column family, hex key, hex value), flushes them
//                                      into table files and closes
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.TransactionDB;
import org.rocksdb.TransactionDBOptions;

public class RocksFiles {
  private static final List<String> FAMILIES = List.of("default", "nessie_refs", "nessie_objects");

  public static void main(String[] args) throws Exception {
    RocksDB.loadLibrary();
    HexFormat hex = HexFormat.of();
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    for (String family : FAMILIES) {
      ColumnFamilyOptions options = new ColumnFamilyOptions().optimizeUniversalStyleCompaction();
      descriptors.add(new ColumnFamilyDescriptor(family.getBytes(StandardCharsets.UTF_8), options));
    }
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    DBOptions dbOptions = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
    try (TransactionDB db =
        TransactionDB.open(dbOptions, new TransactionDBOptions(), args[1], descriptors, handles)) {
      System.out.println("version " + RocksDB.rocksdbVersion());
      if (args[0].equals("write")) {
        for (int i = 2; i + 2 < args.length; i += 3) {
          ColumnFamilyHandle family = handles.get(FAMILIES.indexOf(args[i]));
          db.put(family, hex.parseHex(args[i + 1]), hex.parseHex(args[i + 2]));
        }
        db.flush(new FlushOptions().setWaitForFlush(true), handles);
      } else {
        for (int i = 0; i < FAMILIES.size(); i++) {
          try (RocksIterator it = db.newIterator(handles.get(i))) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
              System.out.println(
                  FAMILIES.get(i) + "\t" + hex.formatHex(it.key()) + "\t" + hex.formatHex(it.value()));
            }
          }
        }
      }
      for (ColumnFamilyHandle handle : handles) {
        handle.close();
      }
    }
  }
}
