package lochkit.nessiebench;

import static lochkit.nessiebench.JdbcBackend.OBJS;
import static lochkit.nessiebench.JdbcBackend.REFS;

import java.lang.reflect.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.projectnessie.versioned.storage.common.config.StoreConfig;
import org.projectnessie.versioned.storage.common.exceptions.ObjTooLargeException;
import org.projectnessie.versioned.storage.common.exceptions.RefAlreadyExistsException;
import org.projectnessie.versioned.storage.common.exceptions.RefConditionFailedException;
import org.projectnessie.versioned.storage.common.exceptions.RefNotFoundException;
import org.projectnessie.versioned.storage.common.objtypes.UpdateableObj;
import org.projectnessie.versioned.storage.common.persist.CloseableIterator;
import org.projectnessie.versioned.storage.common.persist.Obj;
import org.projectnessie.versioned.storage.common.persist.ObjId;
import org.projectnessie.versioned.storage.common.persist.ObjType;
import org.projectnessie.versioned.storage.common.persist.Persist;
import org.projectnessie.versioned.storage.common.persist.Reference;
import org.projectnessie.versioned.storage.serialize.ProtoSerialization;

/**
 * A Persist over PostgreSQL, written for this benchmark from the documented behaviour of Nessie's
 * jdbc2 module (Nessie does not publish that module): every call borrows a pooled connection and
 * runs one transaction, committed after writes; reads just return the connection. Reference
 * changes are one UPDATE or DELETE whose WHERE clause holds the whole expected row. Objects are
 * stored as Nessie's protobuf form with a batched INSERT ... ON CONFLICT DO NOTHING (flushed every
 * 50 rows), and existing ids get their "referenced" time refreshed in the same transaction.
 *
 * <p>Only what the version store's commit path, repository set-up and reads need is tuned; the
 * maintenance calls are simple but complete.
 */
final class JdbcPersist implements Persist {
  private static final int BATCH = 50;
  private static final String REF_COLUMNS = "ref_name, pointer, deleted, created_at, ext_info, prev_ptr";
  private static final String OBJ_COLUMNS = "obj_id, obj_type, obj_vers, obj_value, obj_ref";

  private final JdbcBackend backend;
  private final StoreConfig config;
  private final String repo;

  JdbcPersist(JdbcBackend backend, StoreConfig config) {
    this.backend = backend;
    this.config = config;
    this.repo = config.repositoryId();
  }

  @Override
  public String name() {
    return "lochkit-jdbc";
  }

  @Override
  public StoreConfig config() {
    return config;
  }

  // --- references -------------------------------------------------------------------------------

  @Override
  public Reference addReference(Reference reference) throws RefAlreadyExistsException {
    if (reference.deleted()) {
      throw new IllegalArgumentException("Deleted references must not be added");
    }
    int count =
        update(
            "INSERT INTO "
                + REFS
                + " (repo, "
                + REF_COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            ps -> {
              ps.setString(1, repo);
              ps.setString(2, reference.name());
              ps.setBytes(3, reference.pointer().asByteArray());
              ps.setBoolean(4, false);
              setCreatedAt(ps, 5, reference.createdAtMicros());
              setId(ps, 6, reference.extendedInfoObj());
              ps.setBytes(7, ProtoSerialization.serializePreviousPointers(reference.previousPointers()));
            });
    if (count != 1) {
      throw new RefAlreadyExistsException(fetchReference(reference.name()));
    }
    return reference;
  }

  @Override
  public Reference markReferenceAsDeleted(Reference reference)
      throws RefNotFoundException, RefConditionFailedException {
    int count =
        conditional("UPDATE " + REFS + " SET deleted = TRUE", reference, false, ps -> {}, 0);
    if (count != 1) {
      raiseChangeFailed(reference);
    }
    return reference.withDeleted(true);
  }

  @Override
  public void purgeReference(Reference reference)
      throws RefNotFoundException, RefConditionFailedException {
    int count = conditional("DELETE FROM " + REFS, reference, true, ps -> {}, 0);
    if (count != 1) {
      raiseChangeFailed(reference);
    }
  }

  @Override
  public Reference updateReferencePointer(Reference reference, ObjId newPointer)
      throws RefNotFoundException, RefConditionFailedException {
    Reference updated = reference.forNewPointer(newPointer, config);
    int count =
        conditional(
            "UPDATE " + REFS + " SET pointer = ?, prev_ptr = ?",
            reference,
            false,
            ps -> {
              ps.setBytes(1, newPointer.asByteArray());
              ps.setBytes(2, ProtoSerialization.serializePreviousPointers(updated.previousPointers()));
            },
            2);
    if (count != 1) {
      raiseChangeFailed(reference);
    }
    return updated;
  }

  /** One UPDATE or DELETE whose WHERE clause holds the whole expected row. */
  private int conditional(
      String head, Reference expected, boolean deleted, Binder setValues, int valueCount) {
    String sql =
        head
            + " WHERE repo = ? AND ref_name = ? AND pointer = ? AND deleted = ? AND created_at"
            + (expected.createdAtMicros() == 0L ? " IS NULL" : " = ?")
            + " AND ext_info"
            + (expected.extendedInfoObj() == null ? " IS NULL" : " = ?");
    return update(
        sql,
        ps -> {
          setValues.bind(ps);
          int i = valueCount;
          ps.setString(++i, repo);
          ps.setString(++i, expected.name());
          ps.setBytes(++i, expected.pointer().asByteArray());
          ps.setBoolean(++i, deleted);
          if (expected.createdAtMicros() != 0L) {
            ps.setLong(++i, expected.createdAtMicros());
          }
          if (expected.extendedInfoObj() != null) {
            ps.setBytes(++i, expected.extendedInfoObj().asByteArray());
          }
        });
  }

  private void raiseChangeFailed(Reference reference)
      throws RefNotFoundException, RefConditionFailedException {
    Reference current = fetchReference(reference.name());
    if (current == null) {
      throw new RefNotFoundException(reference);
    }
    throw new RefConditionFailedException(current);
  }

  @Override
  public Reference fetchReference(String name) {
    return fetchReferences(new String[] {name})[0];
  }

  @Override
  public Reference[] fetchReferences(String[] names) {
    Map<String, Reference> found = new HashMap<>();
    List<String> wanted = new ArrayList<>();
    for (String n : names) {
      if (n != null) {
        wanted.add(n);
      }
    }
    if (!wanted.isEmpty()) {
      read(
          "SELECT " + REF_COLUMNS + " FROM " + REFS + " WHERE repo = ? AND ref_name IN (" + marks(wanted.size()) + ")",
          ps -> {
            ps.setString(1, repo);
            for (int i = 0; i < wanted.size(); i++) {
              ps.setString(i + 2, wanted.get(i));
            }
          },
          rs -> {
            byte[] ext = rs.getBytes(5);
            long created = rs.getLong(4);
            if (rs.wasNull()) {
              created = 0L;
            }
            Reference ref =
                Reference.reference(
                    rs.getString(1),
                    ObjId.objIdFromByteArray(rs.getBytes(2)),
                    rs.getBoolean(3),
                    created,
                    ext == null ? null : ObjId.objIdFromByteArray(ext),
                    ProtoSerialization.deserializePreviousPointers(rs.getBytes(6)));
            found.put(ref.name(), ref);
          });
    }
    Reference[] result = new Reference[names.length];
    for (int i = 0; i < names.length; i++) {
      result[i] = names[i] == null ? null : found.get(names[i]);
    }
    return result;
  }

  // --- objects ----------------------------------------------------------------------------------

  @Override
  @SuppressWarnings("unchecked")
  public <T extends Obj> T[] fetchTypedObjsIfExist(ObjId[] ids, ObjType type, Class<T> typeClass) {
    T[] result = (T[]) Array.newInstance(typeClass, ids.length);
    Map<ObjId, Obj> found = new HashMap<>();
    List<ObjId> wanted = new ArrayList<>();
    for (ObjId id : ids) {
      if (id != null) {
        wanted.add(id);
      }
    }
    if (!wanted.isEmpty()) {
      String sql =
          "SELECT " + OBJ_COLUMNS + " FROM " + OBJS + " WHERE repo = ? AND obj_id IN (" + marks(wanted.size()) + ")"
              + (type != null ? " AND obj_type = ?" : "");
      read(
          sql,
          ps -> {
            int i = 0;
            ps.setString(++i, repo);
            for (ObjId id : wanted) {
              ps.setBytes(++i, id.asByteArray());
            }
            if (type != null) {
              ps.setString(++i, type.shortName());
            }
          },
          rs -> {
            ObjId id = ObjId.objIdFromByteArray(rs.getBytes(1));
            long referenced = rs.getLong(5);
            Obj obj = ProtoSerialization.deserializeObj(id, referenced, rs.getBytes(4), rs.getString(3));
            found.put(id, obj);
          });
    }
    for (int i = 0; i < ids.length; i++) {
      Obj obj = ids[i] == null ? null : found.get(ids[i]);
      if (obj != null && typeClass.isInstance(obj)) {
        result[i] = (T) obj;
      }
    }
    return result;
  }

  @Override
  public boolean storeObj(Obj obj, boolean ignoreSoftSizeRestrictions) throws ObjTooLargeException {
    return store(new Obj[] {obj}, ignoreSoftSizeRestrictions)[0];
  }

  @Override
  public boolean[] storeObjs(Obj[] objs) throws ObjTooLargeException {
    return store(objs, false);
  }

  private boolean[] store(Obj[] objs, boolean ignoreSoftSizeRestrictions) throws ObjTooLargeException {
    int incrementalLimit = ignoreSoftSizeRestrictions ? Integer.MAX_VALUE : effectiveIncrementalIndexSizeLimit();
    int indexLimit = ignoreSoftSizeRestrictions ? Integer.MAX_VALUE : effectiveIndexSegmentSizeLimit();
    long now = config.currentTimeMicros();
    byte[][] serialized = new byte[objs.length][];
    for (int i = 0; i < objs.length; i++) {
      if (objs[i] != null) {
        serialized[i] = ProtoSerialization.serializeObj(objs[i], incrementalLimit, indexLimit, false);
      }
    }
    boolean[] created = new boolean[objs.length];
    try (Connection conn = backend.connection()) {
      try {
        List<Integer> existing = new ArrayList<>();
        try (PreparedStatement ps =
            conn.prepareStatement(
                "INSERT INTO " + OBJS + " (repo, " + OBJ_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")) {
          List<Integer> batch = new ArrayList<>();
          for (int i = 0; i < objs.length; i++) {
            Obj obj = objs[i];
            if (obj == null) {
              continue;
            }
            ps.setString(1, repo);
            ps.setBytes(2, obj.id().asByteArray());
            ps.setString(3, obj.type().shortName());
            String token = UpdateableObj.extractVersionToken(obj).orElse(null);
            if (token != null) {
              ps.setString(4, token);
            } else {
              ps.setNull(4, Types.VARCHAR);
            }
            ps.setBytes(5, serialized[i]);
            ps.setLong(6, now);
            ps.addBatch();
            batch.add(i);
            if (batch.size() == BATCH) {
              flushInserts(ps, batch, created, existing);
            }
          }
          flushInserts(ps, batch, created, existing);
        }
        if (!existing.isEmpty()) {
          try (PreparedStatement ps =
              conn.prepareStatement("UPDATE " + OBJS + " SET obj_ref = ? WHERE repo = ? AND obj_id = ?")) {
            for (int i : existing) {
              ps.setLong(1, now);
              ps.setString(2, repo);
              ps.setBytes(3, objs[i].id().asByteArray());
              ps.addBatch();
            }
            ps.executeBatch();
          }
        }
        conn.commit();
      } catch (SQLException e) {
        conn.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
    return created;
  }

  private static void flushInserts(
      PreparedStatement ps, List<Integer> batch, boolean[] created, List<Integer> existing)
      throws SQLException {
    if (batch.isEmpty()) {
      return;
    }
    int[] counts = ps.executeBatch();
    for (int j = 0; j < counts.length; j++) {
      if (counts[j] == 1) {
        created[batch.get(j)] = true;
      } else {
        existing.add(batch.get(j));
      }
    }
    batch.clear();
  }

  @Override
  public void deleteObj(ObjId id) {
    deleteObjs(new ObjId[] {id});
  }

  @Override
  public void deleteObjs(ObjId[] ids) {
    List<ObjId> wanted = Arrays.stream(ids).filter(i -> i != null).toList();
    if (wanted.isEmpty()) {
      return;
    }
    update(
        "DELETE FROM " + OBJS + " WHERE repo = ? AND obj_id IN (" + marks(wanted.size()) + ")",
        ps -> {
          ps.setString(1, repo);
          for (int i = 0; i < wanted.size(); i++) {
            ps.setBytes(i + 2, wanted.get(i).asByteArray());
          }
        });
  }

  @Override
  public boolean deleteWithReferenced(Obj obj) {
    return update(
            "DELETE FROM " + OBJS + " WHERE repo = ? AND obj_id = ? AND obj_ref = ?",
            ps -> {
              ps.setString(1, repo);
              ps.setBytes(2, obj.id().asByteArray());
              ps.setLong(3, obj.referenced());
            })
        == 1;
  }

  @Override
  public boolean deleteConditional(UpdateableObj obj) {
    return update(
            "DELETE FROM " + OBJS + " WHERE repo = ? AND obj_id = ? AND obj_type = ? AND obj_vers = ?",
            ps -> {
              ps.setString(1, repo);
              ps.setBytes(2, obj.id().asByteArray());
              ps.setString(3, obj.type().shortName());
              ps.setString(4, obj.versionToken());
            })
        == 1;
  }

  @Override
  public boolean updateConditional(UpdateableObj expected, UpdateableObj newValue)
      throws ObjTooLargeException {
    byte[] data =
        ProtoSerialization.serializeObj(
            newValue, effectiveIncrementalIndexSizeLimit(), effectiveIndexSegmentSizeLimit(), false);
    return update(
            "UPDATE " + OBJS + " SET obj_type = ?, obj_vers = ?, obj_value = ?, obj_ref = ?"
                + " WHERE repo = ? AND obj_id = ? AND obj_type = ? AND obj_vers = ?",
            ps -> {
              ps.setString(1, newValue.type().shortName());
              ps.setString(2, newValue.versionToken());
              ps.setBytes(3, data);
              ps.setLong(4, config.currentTimeMicros());
              ps.setString(5, repo);
              ps.setBytes(6, expected.id().asByteArray());
              ps.setString(7, expected.type().shortName());
              ps.setString(8, expected.versionToken());
            })
        == 1;
  }

  @Override
  public void upsertObj(Obj obj) throws ObjTooLargeException {
    upsertObjs(new Obj[] {obj});
  }

  @Override
  public void upsertObjs(Obj[] objs) throws ObjTooLargeException {
    for (Obj obj : objs) {
      if (obj == null) {
        continue;
      }
      byte[] data =
          ProtoSerialization.serializeObj(
              obj, effectiveIncrementalIndexSizeLimit(), effectiveIndexSegmentSizeLimit(), false);
      update(
          "INSERT INTO " + OBJS + " (repo, " + OBJ_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?)"
              + " ON CONFLICT (repo, obj_id) DO UPDATE SET obj_type = EXCLUDED.obj_type,"
              + " obj_vers = EXCLUDED.obj_vers, obj_value = EXCLUDED.obj_value, obj_ref = EXCLUDED.obj_ref",
          ps -> {
            ps.setString(1, repo);
            ps.setBytes(2, obj.id().asByteArray());
            ps.setString(3, obj.type().shortName());
            ps.setString(4, UpdateableObj.extractVersionToken(obj).orElse(null));
            ps.setBytes(5, data);
            ps.setLong(6, config.currentTimeMicros());
          });
    }
  }

  @Override
  public CloseableIterator<Obj> scanAllObjects(Set<ObjType> returnedObjTypes) {
    List<Obj> all = new ArrayList<>();
    read(
        "SELECT " + OBJ_COLUMNS + " FROM " + OBJS + " WHERE repo = ?",
        ps -> ps.setString(1, repo),
        rs -> {
          Obj obj =
              ProtoSerialization.deserializeObj(
                  ObjId.objIdFromByteArray(rs.getBytes(1)), rs.getLong(5), rs.getBytes(4), rs.getString(3));
          if (returnedObjTypes.isEmpty() || returnedObjTypes.contains(obj.type())) {
            all.add(obj);
          }
        });
    Iterator<Obj> it = all.iterator();
    return new CloseableIterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public Obj next() {
        return it.next();
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public void erase() {
    backend.eraseRepositories(Set.of(repo));
  }

  // --- JDBC plumbing ----------------------------------------------------------------------------

  @FunctionalInterface
  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  @FunctionalInterface
  private interface RowReader {
    void read(ResultSet rs) throws SQLException;
  }

  /** One statement in its own committed transaction; the number of rows it touched. */
  private int update(String sql, Binder binder) {
    try (Connection conn = backend.connection()) {
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        binder.bind(ps);
        int count = ps.executeUpdate();
        conn.commit();
        return count;
      } catch (SQLException e) {
        conn.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  /** A read: the connection goes back to the pool without a commit. */
  private void read(String sql, Binder binder, RowReader reader) {
    try (Connection conn = backend.connection();
        PreparedStatement ps = conn.prepareStatement(sql)) {
      binder.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          reader.read(rs);
        }
      }
    } catch (SQLException e) {
      throw new RuntimeException(e);
    }
  }

  private static void setCreatedAt(PreparedStatement ps, int index, long micros) throws SQLException {
    if (micros == 0L) {
      ps.setNull(index, Types.BIGINT);
    } else {
      ps.setLong(index, micros);
    }
  }

  private static void setId(PreparedStatement ps, int index, ObjId id) throws SQLException {
    if (id == null) {
      ps.setNull(index, Types.BINARY);
    } else {
      ps.setBytes(index, id.asByteArray());
    }
  }

  private static String marks(int n) {
    return String.join(", ", java.util.Collections.nCopies(n, "?"));
  }
}
