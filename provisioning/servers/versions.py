"""Server versions, pinned in one place. ``docker-compose.yml`` uses the same images (a unit test
checks that they agree). Each provisioner reads its entries from here."""

from __future__ import annotations

from typing import Final

#: The Nessie release lochkit starts (image and runner jar alike) and checks itself against
#: (conformance/nessie_differences.py); change it here only.
NESSIE_VERSION: Final = "0.99.0"

#: Container images for testcontainers and docker compose (official images).
IMAGES: Final[dict[str, str]] = {
    "postgres": "postgres:17.6",
    "cockroachdb": "cockroachdb/cockroach:v25.2.4",
    "mariadb": "mariadb:10.11.14",
    "mongodb": "mongo:8.0.13",
    "cassandra": "cassandra:5.0.9",
    "scylladb": "scylladb/scylla:6.2.3",
    "dynamodb": "amazon/dynamodb-local:2.6.1",
    # Google's Cloud SDK image with its emulators (the Bigtable one is the same Go emulator).
    "bigtable": "gcr.io/google.com/cloudsdktool/google-cloud-cli:546.0.0-emulators",
    "nessie": f"ghcr.io/projectnessie/nessie:{NESSIE_VERSION}",
}

#: What the local-process launchers install from the package registries this project reaches.
LOCAL: Final[dict[str, str]] = {
    "postgres": "Debian package postgresql (15.x on Debian 12)",
    "mariadb": "Debian package mariadb-server (10.11.x on Debian 12)",
    "cassandra": "org.apache.cassandra:cassandra-all:5.0.9",
    "dynamodb": "com.amazonaws:DynamoDBLocal:2.6.1",
    "mongodb": "github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2",
    # The newest nessie-quarkus runner Maven Central serves (0.10x answers 404); needs Java 21+.
    "nessie": f"org.projectnessie.nessie:nessie-quarkus:{NESSIE_VERSION}:jar:runner",
    # Google's emulator (cmd/emulator over the in-memory bttest server); needs Go 1.26+.
    "bigtable": "cloud.google.com/go/bigtable/cmd/emulator@v1.58.0",
    # Not a database: the fault-injecting TCP proxy of the reliability campaign.
    "toxiproxy": "github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0",
}
