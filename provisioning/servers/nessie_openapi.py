"""Nessie's own description of its REST API: the OpenAPI document inside Nessie's model jar.

Nessie publishes the document in ``org.projectnessie.nessie:nessie-model`` on Maven Central (under
``META-INF/openapi/``). It is fetched with Maven on first use into ``~/.cache/lochkit/nessie/VERSION``
(``$LOCHKIT_CACHE`` moves it) and read from there afterwards; lochkit does not ship Nessie's file.
The version is the Nessie release lochkit checks itself against.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, Final

from provisioning.base import ProvisioningFailed
from provisioning.servers.process import cache_dir, cache_path, run_checked
from provisioning.servers.versions import NESSIE_VERSION

MODEL_COORDINATES: Final = f"org.projectnessie.nessie:nessie-model:{NESSIE_VERSION}:jar"
#: Where the jar keeps the document (a JSON and a YAML copy of the same description).
MEMBER: Final = "META-INF/openapi/openapi.json"
DOCUMENT_NAME: Final = f"nessie-openapi-{NESSIE_VERSION}.json"


def cached_document_path() -> Path:
    """Where the document is kept once fetched (it may not exist yet)."""
    return cache_path("nessie", NESSIE_VERSION) / DOCUMENT_NAME


def nessie_openapi_document() -> dict[str, Any]:
    """Nessie's OpenAPI document, fetched on first use; :class:`ProvisioningFailed` saying what
    went wrong and what to do when it cannot be had."""
    path = cached_document_path()
    if not path.exists():
        _fetch(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ProvisioningFailed(
            f"Nessie's OpenAPI document in {path} cannot be read ({e}); delete the file and it is "
            "fetched again"
        ) from None
    if not isinstance(document, dict) or "paths" not in document:
        raise ProvisioningFailed(
            f"{path} is not an OpenAPI document (no 'paths'); delete it and it is fetched again"
        )
    return document


def _fetch(path: Path) -> None:
    dest = cache_dir("nessie", NESSIE_VERSION)
    jar = dest / f"nessie-model-{NESSIE_VERSION}.jar"
    if not jar.exists():
        try:
            run_checked(
                [
                    "mvn",
                    "-q",
                    "-B",
                    "dependency:copy",
                    f"-Dartifact={MODEL_COORDINATES}",
                    f"-DoutputDirectory={dest}",
                ],
                f"downloading Nessie's OpenAPI document ({MODEL_COORDINATES}, about 1 MB) from Maven Central",
                cwd=dest,
                timeout=300,
            )
        except ProvisioningFailed as e:
            raise ProvisioningFailed(
                f"cannot fetch Nessie's OpenAPI document: {e}\nIt comes from Maven Central "
                f"({MODEL_COORDINATES}), fetched with Maven ('mvn' on PATH, network access to Maven "
                f"Central); or put the jar there yourself as {jar}"
            ) from None
    if not jar.exists():
        raise ProvisioningFailed(f"Maven finished but {jar} is missing")
    try:
        with zipfile.ZipFile(jar) as archive:
            text = archive.read(MEMBER)
    except (OSError, zipfile.BadZipFile, KeyError) as e:
        raise ProvisioningFailed(
            f"{jar} holds no OpenAPI document at {MEMBER} ({e}); delete the jar and it is fetched again"
        ) from None
    partial = path.with_suffix(".partial")
    partial.write_bytes(text)
    partial.replace(path)


__all__ = ["MODEL_COORDINATES", "cached_document_path", "nessie_openapi_document"]
