"""docker-compose.yml must use exactly the images pinned in provisioning/servers/versions.py, and every
place that names the Nessie release takes it from the one constant there."""

from __future__ import annotations

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
