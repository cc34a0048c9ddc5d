package lochkit.nessiebench;

import java.net.URI;
import java.util.Map;
import org.projectnessie.versioned.storage.common.persist.ObjId;
import org.projectnessie.versioned.storage.serialize.ProtoSerialization;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;

/**
 * The full scan's reader for Nessie's DynamoDB store (dynamodb2) on a local endpoint such as
 * DynamoDB Local, read with the AWS SDK: every item of the objects and references tables whose key
 * {@code k} starts with the repository id and {@code ':'}, as Nessie scans them. Objects: {@code y}
 * the short type name, {@code z} the referenced time (decimal µs), {@code V} the version token,
 * {@code v} the ObjProto. References: {@code p} pointer, {@code d} deleted, {@code c} created time
 * (decimal µs), {@code e} extended info, {@code h} the history; absent attributes mean none. Nessie
 * publishes no DynamoDB module.
 *
 * <p>The address is lochkit's URL, {@code dynamodb://HOST:PORT?region=R&table_prefix=X}: the
 * tables are {@code X_objs} and {@code X_refs}, or {@code objs} and {@code refs} without a prefix.
 * A local endpoint takes any credentials, so fixed ones are sent.
 */
final class DynamoScan {
  private DynamoScan() {}

  static void scan(FullScan scan, String address, String repository) {
    URI uri = URI.create(address);
    if (uri.getHost() == null || uri.getPort() < 0) {
      throw new IllegalArgumentException(
          "the full scan reads DynamoDB on a local endpoint only: dynamodb://HOST:PORT?..., not "
              + address);
    }
    Map<String, String> options = UrlOptions.parse(uri.getRawQuery());
    String prefix = options.getOrDefault("table_prefix", "");
    String keyPrefix = repository + ":";
    try (DynamoDbClient client =
        DynamoDbClient.builder()
            .endpointOverride(URI.create("http://" + uri.getHost() + ":" + uri.getPort()))
            .region(Region.of(options.getOrDefault("region", "us-west-2")))
            .credentialsProvider(
                StaticCredentialsProvider.create(AwsBasicCredentials.create("lochkit", "lochkit")))
            .httpClient(UrlConnectionHttpClient.create())
            .build()) {
      for (Map<String, AttributeValue> item : items(client, table(prefix, "objs"), keyPrefix)) {
        ObjId id = ObjId.objIdFromString(item.get("k").s().substring(keyPrefix.length()));
        AttributeValue referenced = item.get("z");
        AttributeValue token = item.get("V");
        AttributeValue type = item.get("y");
        scan.counted(
            ProtoSerialization.deserializeObj(
                id,
                referenced == null ? 0L : Long.parseLong(referenced.s()),
                required(item, "v").asByteArray(),
                token == null ? null : token.s()),
            type == null ? null : type.s());
      }
      for (Map<String, AttributeValue> item : items(client, table(prefix, "refs"), keyPrefix)) {
        AttributeValue created = item.get("c");
        AttributeValue deleted = item.get("d");
        SdkBytes extInfo = bytes(item, "e");
        SdkBytes history = bytes(item, "h");
        scan.reference(
            FullScan.columnsReference(
                item.get("k").s().substring(keyPrefix.length()),
                required(item, "p").asByteArray(),
                deleted != null && deleted.bool(),
                created == null ? 0L : Long.parseLong(created.s()),
                extInfo == null ? null : extInfo.asByteArray(),
                history == null ? null : history.asByteArray()));
      }
    }
  }

  /** The table's items of one repository: a full-table scan filtered on the key's prefix. */
  private static Iterable<Map<String, AttributeValue>> items(
      DynamoDbClient client, String table, String keyPrefix) {
    return client
        .scanPaginator(
            ScanRequest.builder()
                .tableName(table)
                .consistentRead(true)
                .filterExpression("begins_with(k, :prefix)")
                .expressionAttributeValues(
                    Map.of(":prefix", AttributeValue.builder().s(keyPrefix).build()))
                .build())
        .items();
  }

  private static String table(String prefix, String name) {
    return prefix.isEmpty() ? name : prefix + "_" + name;
  }

  private static SdkBytes bytes(Map<String, AttributeValue> item, String name) {
    AttributeValue value = item.get(name);
    return value == null ? null : value.b();
  }

  private static SdkBytes required(Map<String, AttributeValue> item, String name) {
    SdkBytes value = bytes(item, name);
    if (value == null) {
      throw new IllegalStateException("item " + item.get("k").s() + " has no attribute " + name);
    }
    return value;
  }
}
