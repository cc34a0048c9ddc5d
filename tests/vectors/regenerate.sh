#!/usr/bin/env bash
# Regenerates the Nessie test vectors (nessie-*.json next to this script) with Nessie's published
# jars: builds the small Java generator in generator/ with Maven, then runs it with plain `java`.
# Needs Java 17+ and Maven; the first run downloads Nessie and its dependencies from Maven Central,
# later runs work offline from the local Maven repository (~/.m2, or -Dmaven.repo.local in
# MAVEN_OPTS). The output is deterministic: running it again must leave the files unchanged.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
generator="$here/generator"

echo "Building the vector generator (Maven)..." >&2
# Maven 3.8 prints stray colour-reset codes even in batch mode; drop them (pipefail keeps its status).
mvn -f "$generator/pom.xml" -B -q compile dependency:build-classpath 2>&1 | sed 's/\x1b\[0m//g' >&2

classpath="$generator/target/classes:$(cat "$generator/target/classpath.txt")"

# Write to a scratch directory first so a failed run never leaves half-written vector files.
out="$(mktemp -d "$generator/target/vectors.XXXXXX")"
trap 'rm -rf "$out"' EXIT

echo "Generating vectors with Nessie's jars..." >&2
java -cp "$classpath" lochkit.vectors.GenerateVectors "$out"

for f in nessie-object-ids.json nessie-index.json nessie-commit-ids.json nessie-content.json nessie-version-store.json nessie-objproto.json \
    nessie-key-order.json nessie-smile.json; do
  test -s "$out/$f" || { echo "generator did not write $f" >&2; exit 1; }
  cp "$out/$f" "$here/$f"
done
echo "Wrote the nessie-*.json vectors in $here" >&2
