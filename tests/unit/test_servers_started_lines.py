"""What ``lochkit servers start`` prints: a ready-to-paste conformance command only when the URL
works as printed (nothing in it was masked)."""

from __future__ import annotations

from pathlib import Path

from lochkit.commands.servers import _started_lines
from provisioning.base import Provisioned


def test_a_masked_password_gives_no_command_to_paste(tmp_path: Path) -> None:
    provisioned = Provisioned("mariadb", "mariadb://lochkit:s3cret@127.0.0.1:3306/lochkit", "local-process")
    text = "\n".join(_started_lines(provisioned, tmp_path, show_secrets=False))
    assert "s3cret" not in text
    assert "URL: mariadb://lochkit:***@127.0.0.1:3306/lochkit" in text
    assert "lochkit conformance --backend mariadb --url" not in text
    assert "LOCHKIT_MARIADB_URL" in text


def test_a_url_without_secrets_gives_the_command(tmp_path: Path) -> None:
    provisioned = Provisioned("dynamodb", "dynamodb://127.0.0.1:8000?region=us-west-2", "local-process")
    text = "\n".join(_started_lines(provisioned, tmp_path, show_secrets=False))
    assert "lochkit conformance --backend dynamodb --url 'dynamodb://127.0.0.1:8000?region=us-west-2'" in text
