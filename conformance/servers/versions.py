"""Server versions, pinned in one place. ``docker-compose.yml`` uses the same values (a unit test
checks that they agree)."""

from __future__ import annotations

from typing import Final

#: Container images for testcontainers and docker compose.
IMAGES: Final[dict[str, str]] = {}

#: What the local-process launchers install from the package registries.
LOCAL: Final[dict[str, str]] = {}
