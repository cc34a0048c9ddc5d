"""docker-compose.yml must use exactly the images pinned in provisioning/servers/versions.py, and every
place that names the Nessie release takes it from the one constant there."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conformance import nessie_differences
from provisioning.servers import nessie
from provisioning.servers.versions import IMAGES, LOCAL, NESSIE_VERSION

COMPOSE = Path(__file__).parents[2] / "docker-compose.yml"


def _services() -> dict[str, str]:
    services: dict[str, str] = {}
    current = None
    for line in COMPOSE.read_text().splitlines():
        header = re.match(r"^  ([a-z0-9-]+):\s*$", line)
        if header:
            current = header.group(1)
        image = re.match(r"^    image:\s*(\S+)\s*$", line)
        if image and current:
            services[current] = image.group(1)
    return services


def test_compose_pins_the_same_images_as_the_provisioners() -> None:
    assert _services() == IMAGES


def test_the_nessie_image_runner_and_differences_name_the_one_pinned_release() -> None:
    image, tag = IMAGES["nessie"].rsplit(":", 1)
    group, artifact, runner_version, packaging, classifier = LOCAL["nessie"].split(":")
    assert (image, group, artifact, packaging, classifier) == (
        "ghcr.io/projectnessie/nessie",
        "org.projectnessie.nessie",
        "nessie-quarkus",
        "jar",
        "runner",
    )
    assert tag == runner_version == NESSIE_VERSION
    assert nessie.VERSION == NESSIE_VERSION  # the jar the launcher caches and its server string
    assert nessie_differences.NESSIE_VERSION == NESSIE_VERSION  # what the differences were checked on


def _service(name: str) -> tuple[str, list[str]]:
    """The comment line above service ``name`` (its URL) and the service's own lines."""
    lines = COMPOSE.read_text().splitlines()
    start = lines.index(f"  {name}:")
    rest = lines[start + 1 :]
    end = next((i for i, line in enumerate(rest) if re.match(r"^  \S", line)), len(rest))
    return lines[start - 1], rest[:end]


def _setting(lines: list[str], key: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in lines if line.strip().startswith(f"{key}:"))


def test_the_bigtable_service_starts_the_emulator_as_the_testcontainers_recipe_does() -> None:
    from provisioning.servers import bigtable

    comment, service = _service("bigtable")
    assert tuple(json.loads(_setting(service, "command"))) == bigtable.CONTAINER_COMMAND
    [published] = json.loads(_setting(service, "ports"))
    host_port, container_port = published.split(":")
    assert int(container_port) == bigtable.CONTAINER_PORT
    # The URL above the service is the one the recipe builds, on the published port.
    assert bigtable.emulator_url("127.0.0.1", host_port) in comment
