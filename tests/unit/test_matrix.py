"""``python -m conformance.matrix``: the documentation's table from a report (also as a snippet, and
the report reduced to what the table shows), and a clear error (no traceback) for a file that is
not one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.matrix import render

REPORT = {
    "postgres": {
        "provisioning": {
            "method": "local-process",
            "server": "PostgreSQL 15.18 (Debian 15.18-0+deb12u1), local process from /usr/lib, fsync=off",
        },
        "areas": {
            "versionstore.commits": {"counts": {"passed": 36}},
            "cache": {"counts": {"passed": 62}},
            "persist.objects": {"counts": {"passed": 337, "skipped": 2}},
            "logic.commits": {"counts": {"passed": 33, "failed": 1}},
        },
    },
    "scylladb": {
        "provisioning": {"method": "none", "description": "is not available here: ScyllaDB cannot be..."},
        "areas": {"persist.objects": {"counts": {"skipped": 339}}, "cache": {"counts": {"skipped": 62}}},
    },
}


def test_columns_follow_the_suites_layers_and_cells_add_up() -> None:
    lines = render(REPORT, markdown=True).splitlines()
    assert lines[0] == "| backend | server | how | persist | logic | versionstore | cache | total |"
    assert lines[2] == (
        "| `postgres` | PostgreSQL 15.18 (Debian 15.18-0+deb12u1) | local process | 337 + 2s | 33 + 1F "
        "| 36 | 62 | 468 + 1F + 2s |"
    )
    assert lines[3] == "| `scylladb` | not available here | — | 0 + 339s | — | — | 0 + 62s | 0 + 401s |"


def _matrix(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.matrix", *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read"),
        ("not json {", "is not JSON"),
        ('{"postgres": 3}', "is JSON but not a conformance report"),
    ],
)
def test_a_file_that_is_not_a_report_is_a_usage_error_not_a_traceback(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "report.json"
    if content is not None:
        path.write_text(content)
    done = _matrix(str(path))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert expected in done.stderr.splitlines()[-1]


def test_a_report_renders_as_text_with_the_legend(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(REPORT))
    done = _matrix(str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split() == [
        "backend",
        "server",
        "how",
        "persist",
        "logic",
        "versionstore",
        "cache",
        "total",
    ]
    assert "A cell shows passed tests" in done.stdout


def test_markdown_out_writes_the_matrix_and_its_legend_as_a_snippet(tmp_path: Path) -> None:
    from conformance import snippets
    from conformance.matrix import LEGEND

    path = tmp_path / "report.json"
    path.write_text(json.dumps(REPORT))
    out = tmp_path / "matrix.md"
    done = _matrix(str(path), "--markdown-out", str(out))
    assert done.returncode == 0, done.stderr
    written = out.read_text()
    assert snippets.body(written) == render(REPORT, markdown=True) + "\n\n" + LEGEND
    assert snippets.command_of(written).startswith("python -m conformance.matrix ")


def test_the_kept_report_renders_the_same_matrix_without_paths_or_reasons(tmp_path: Path) -> None:
    from conformance.matrix import reduced

    full = json.loads(json.dumps(REPORT))
    full["postgres"]["areas"]["persist.objects"]["not_passed"] = {"t": {"outcome": "skipped", "reason": "r"}}
    small = reduced(full)
    assert render(small, markdown=True) == render(full, markdown=True)
    assert "/usr/lib" not in json.dumps(small)  # the server's label, not where it ran from
    assert "not_passed" not in json.dumps(small)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(full))
    kept = tmp_path / "kept.json"
    assert _matrix(str(path), "--keep-report", str(kept)).returncode == 0
    assert json.loads(kept.read_text()) == small


def test_a_snippet_destination_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(REPORT))
    done = _matrix(str(path), "--markdown-out", str(tmp_path / "missing" / "matrix.md"))
    assert done.returncode == 2
    assert "its directory does not exist" in done.stderr


def test_several_reports_make_one_matrix_and_a_backend_in_two_is_refused(tmp_path: Path) -> None:
    """A backend run apart (its extra is not in CI's install) joins CI's report in one table; the
    same backend in two reports would make one of them silently win, so it is a usage error."""
    first, second = tmp_path / "ci.json", tmp_path / "bigtable.json"
    first.write_text(json.dumps({"postgres": REPORT["postgres"]}))
    second.write_text(json.dumps({"scylladb": REPORT["scylladb"]}))
    done = _matrix(str(first), str(second), "--markdown")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(render(REPORT, markdown=True) + "\n")
    twice = _matrix(str(first), str(first))
    assert twice.returncode == 2
    assert "Traceback" not in twice.stderr
    assert f"postgres is in {first} and in {first}" in twice.stderr.splitlines()[-1]
