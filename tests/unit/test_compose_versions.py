"""docker-compose.yml must use exactly the images pinned in conformance/servers/versions.py."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.servers.versions import IMAGES

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
