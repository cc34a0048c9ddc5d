package lochkit.vectors;

import static lochkit.vectors.Util.hex;
import static lochkit.vectors.Util.obj;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.projectnessie.model.Content;
import org.projectnessie.model.IcebergTable;
import org.projectnessie.model.ImmutableDeltaLakeTable;
import org.projectnessie.model.ImmutableIcebergView;
import org.projectnessie.model.ImmutableNamespace;
import org.projectnessie.model.ImmutableUDF;
import org.projectnessie.nessie.relocated.protobuf.ByteString;
import org.projectnessie.versioned.storage.common.objtypes.ContentValueObj;
import org.projectnessie.versioned.store.DefaultStoreWorker;

/**
 * Content-value vectors: Nessie model content (all five types, optional fields set and unset,
 * extreme numbers, unicode, multi-entry namespace properties in a non-sorted insertion order),
 * serialised by {@code DefaultStoreWorker.toStoreOnReferenceState}, and the VALUE object id Nessie
 * derives from content id, payload and those bytes.
 */
final class ContentVectors {
  private ContentVectors() {}

  private static final String ID_A = "8b7a6c1e-52c4-4bd8-9a0f-3f2d1c0b9a87";
  private static final String ID_B = "00000000-0000-4000-8000-000000000001";
  private static final String ID_C = "ffffffff-ffff-4fff-bfff-ffffffffffff";

  static Map<String, Object> generate() {
    List<Object> vectors = new ArrayList<>();
    // Iceberg tables: the numbers are plain proto3 fields (left out at 0), the location is
    // optional but always set.
    table(vectors, "iceberg-table", "s3://bucket/db/t/metadata/00001.json", 42L, 1, 2, 3, ID_A);
    table(vectors, "iceberg-table-zeros", "s3://b/t.json", 0L, 0, 0, 0, ID_B);
    table(vectors, "iceberg-table-no-snapshot", "s3://b/t.json", -1L, -1, 0, -1, ID_A);
    table(
        vectors,
        "iceberg-table-extremes",
        "gs://b/t.json",
        Long.MAX_VALUE,
        Integer.MAX_VALUE,
        Integer.MIN_VALUE,
        1,
        ID_C);
    table(vectors, "iceberg-table-min-snapshot", "t.json", Long.MIN_VALUE, 7, 8, 9, ID_B);
    table(vectors, "iceberg-table-empty-location", "", 5L, 0, 0, 0, ID_A);
    table(vectors, "iceberg-table-unicode", "s3://bücket/tåble/💾/m.json", 1L, 0, 0, 0, ID_A);
    table(vectors, "iceberg-table-legacy-id", "s3://b/t.json", 1L, 0, 0, 0, "legacy content id");

    view(vectors, "iceberg-view", "s3://b/v/00001.json", 3L, 4, "select * from t", "spark", ID_A);
    view(vectors, "iceberg-view-no-sql", "s3://b/v.json", 1L, 0, null, null, ID_B);
    view(vectors, "iceberg-view-sql-only", "s3://b/v.json", 0L, 1, "select 1", null, ID_B);
    view(vectors, "iceberg-view-dialect-only", "s3://b/v.json", -5L, -2, null, "trino", ID_C);
    view(vectors, "iceberg-view-empty-strings", "", 0L, 0, "", "", ID_A);
    view(vectors, "iceberg-view-unicode", "s3://b/ü.json", 9L, 0, "select 'ΟΔΟΣ', '😀'", "spark", ID_A);

    delta(vectors, "delta-empty", List.of(), List.of(), null, ID_A);
    delta(vectors, "delta-full", List.of("m1", "m2", "m3"), List.of("c1", "c2"), "c2", ID_B);
    delta(vectors, "delta-empty-checkpoint", List.of("m"), List.of(), "", ID_C);
    delta(vectors, "delta-unicode", List.of("s3://ü/m", ""), List.of("😀"), null, ID_A);

    namespace(vectors, "namespace", List.of("db"), props(), ID_A);
    namespace(vectors, "namespace-nested", List.of("a", "b", "c"), props(), ID_B);
    namespace(
        vectors,
        "namespace-properties-insertion-order",
        List.of("db"),
        props("zeta", "1", "alpha", "2", "mid", "3", "Beta", "4", "0", "5"),
        ID_A);
    namespace(
        vectors,
        "namespace-properties-empty-strings",
        List.of("ns"),
        props("", "empty key", "empty value", ""),
        ID_C);
    namespace(
        vectors,
        "namespace-unicode",
        List.of("dätä", "😀"),
        props("ówner", "Zoë", "emoji", "🚀🚀", "ΟΔΟΣ", "οδος"),
        ID_B);
    Map<String, String> many = new LinkedHashMap<>();
    for (int i = 19; i >= 0; i--) {
      many.put(String.format("key-%02d", (i * 7) % 20), "value " + i);
    }
    namespace(vectors, "namespace-many-properties", List.of("x", "y"), many, ID_A);
    namespace(vectors, "namespace-no-elements", List.of(), props("k", "v"), ID_A);

    udf(vectors, "udf-empty", null, null, null, null, null, ID_A);
    udf(vectors, "udf-current", "s3://b/f.json", "v1", "sig-1", null, null, ID_B);
    udf(vectors, "udf-all", "s3://b/f.json", "v2", "sig-2", "select 1", "spark", ID_C);
    udf(vectors, "udf-deprecated-only", null, null, null, "return x + 1", "python", ID_A);
    udf(vectors, "udf-empty-strings", "", "", "", "", "", ID_A);
    udf(vectors, "udf-unicode", "s3://b/ƒ.json", "v😀", null, null, null, ID_B);

    return obj(
        "format", "lochkit nessie content vectors v1",
        "nessie_version", Util.NESSIE_VERSION,
        "vectors", vectors);
  }

  private static Map<String, String> props(String... keysAndValues) {
    Map<String, String> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put(keysAndValues[i], keysAndValues[i + 1]);
    }
    return map;
  }

  private static void table(
      List<Object> out,
      String name,
      String location,
      long snapshotId,
      int schemaId,
      int specId,
      int sortOrderId,
      String id) {
    Content content = IcebergTable.of(location, snapshotId, schemaId, specId, sortOrderId, id);
    Map<String, Object> json =
        obj(
            "type", "ICEBERG_TABLE",
            "id", id,
            "metadataLocation", location,
            "snapshotId", snapshotId,
            "schemaId", schemaId,
            "specId", specId,
            "sortOrderId", sortOrderId);
    add(out, name, content, json);
  }

  private static void view(
      List<Object> out,
      String name,
      String location,
      long versionId,
      int schemaId,
      String sqlText,
      String dialect,
      String id) {
    Content content =
        ImmutableIcebergView.builder()
            .id(id)
            .metadataLocation(location)
            .versionId(versionId)
            .schemaId(schemaId)
            .sqlText(sqlText)
            .dialect(dialect)
            .build();
    Map<String, Object> json =
        obj(
            "type", "ICEBERG_VIEW",
            "id", id,
            "metadataLocation", location,
            "versionId", versionId,
            "schemaId", schemaId);
    putIfSet(json, "sqlText", sqlText);
    putIfSet(json, "dialect", dialect);
    add(out, name, content, json);
  }

  private static void delta(
      List<Object> out,
      String name,
      List<String> metadataHistory,
      List<String> checkpointHistory,
      String lastCheckpoint,
      String id) {
    Content content =
        ImmutableDeltaLakeTable.builder()
            .id(id)
            .metadataLocationHistory(metadataHistory)
            .checkpointLocationHistory(checkpointHistory)
            .lastCheckpoint(lastCheckpoint)
            .build();
    Map<String, Object> json =
        obj(
            "type", "DELTA_LAKE_TABLE",
            "id", id,
            "metadataLocationHistory", metadataHistory,
            "checkpointLocationHistory", checkpointHistory);
    putIfSet(json, "lastCheckpoint", lastCheckpoint);
    add(out, name, content, json);
  }

  private static void namespace(
      List<Object> out,
      String name,
      List<String> elements,
      Map<String, String> properties,
      String id) {
    Content content =
        ImmutableNamespace.builder().id(id).elements(elements).properties(properties).build();
    Map<String, Object> json =
        obj("type", "NAMESPACE", "id", id, "elements", elements, "properties", properties);
    add(out, name, content, json);
  }

  @SuppressWarnings("deprecation")
  private static void udf(
      List<Object> out,
      String name,
      String metadataLocation,
      String versionId,
      String signatureId,
      String sqlText,
      String dialect,
      String id) {
    Content content =
        ImmutableUDF.builder()
            .id(id)
            .metadataLocation(metadataLocation)
            .versionId(versionId)
            .signatureId(signatureId)
            .sqlText(sqlText)
            .dialect(dialect)
            .build();
    Map<String, Object> json = obj("type", "UDF", "id", id);
    putIfSet(json, "metadataLocation", metadataLocation);
    putIfSet(json, "versionId", versionId);
    putIfSet(json, "signatureId", signatureId);
    putIfSet(json, "sqlText", sqlText);
    putIfSet(json, "dialect", dialect);
    add(out, name, content, json);
  }

  private static void putIfSet(Map<String, Object> json, String field, String value) {
    if (value != null) {
      json.put(field, value);
    }
  }

  private static void add(List<Object> out, String name, Content content, Map<String, Object> json) {
    int payload = DefaultStoreWorker.payloadForContent(content);
    ByteString data = DefaultStoreWorker.instance().toStoreOnReferenceState(content);
    // What Nessie reads back must be what went in, or the vector would pin a lossy mapping.
    Content back = DefaultStoreWorker.instance().valueFromStore(payload, data);
    if (!back.equals(content)) {
      throw new IllegalStateException(name + ": read back as " + back + ", not " + content);
    }
    ContentValueObj value = ContentValueObj.contentValue(content.getId(), payload, data);
    out.add(
        obj(
            "name", name,
            "content", json,
            "payload", payload,
            "data_hex", hex(data),
            "value_id", hex(value.id())));
  }
}
