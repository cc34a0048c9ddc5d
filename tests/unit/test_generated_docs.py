"""Figures and counts in the documentation come from the commands that measure or count them:
every snippet in docs/generated says which command wrote it, every page includes only snippets that
exist, and each snippet is what its generator makes of its input now (rendered again where the input
is in the repository, or checked for the generator's format where the input was a measuring run)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import snippets
from conformance.matrix import load, snippet
from conformance.mutants import MUTANTS
from conformance.nessie_differences import summary_list
from loadgen.experiments.figures import read_kept, tables

from .doc_pages import DOCS, ROOT

GENERATED = DOCS / "generated"
INCLUDE = re.compile(r'^\s*--8<-- "([^"]+)"', re.M)


def _snippet(name: str) -> str:
    return (GENERATED / name).read_text()


def _includes() -> dict[str, list[str]]:
    """Snippet file -> the pages that include it."""
    found: dict[str, list[str]] = {}
    for page in DOCS.rglob("*.md"):
        if page.parent == GENERATED:
            continue
        for include in INCLUDE.findall(page.read_text()):
            found.setdefault(include.split(":")[0], []).append(str(page.relative_to(DOCS)))
    return found


@pytest.mark.parametrize("path", sorted(GENERATED.glob("*.md")), ids=lambda p: p.name)
def test_every_snippet_says_which_command_wrote_it_when_and_where(path: Path) -> None:
    text = path.read_text()
    command = snippets.command_of(text)
    assert (
        f"--markdown-out docs/generated/{path.name}" in command
        or f"-out docs/generated/{path.name}" in command
    )
    written = text.strip().splitlines()[-1]
    assert written.startswith(f"{snippets.WRITTEN_BY}`{command}` on ")
    assert re.search(r" on \d{4}-\d\d-\d\d \d\d:\d\d UTC, .+ cores", written), written
    assert snippets.body(text), "no figures"


def test_every_snippet_is_included_and_every_include_exists() -> None:
    includes = _includes()
    on_disk = {p.relative_to(DOCS).as_posix() for p in GENERATED.glob("*.md")}
    assert set(includes) == on_disk


def test_the_matrix_is_rendered_from_the_kept_report() -> None:
    kept = ROOT / "tests" / "unit" / "data" / "conformance-report.json"
    assert snippets.body(_snippet("conformance-matrix.md")) == snippet(load(kept))


def test_the_short_list_of_differences_is_rendered_from_the_registry() -> None:
    assert snippets.body(_snippet("nessie-differences-summary.md")) == summary_list().strip()


def test_the_asymmetric_figures_are_rendered_from_the_kept_rows() -> None:
    measured, rows = read_kept(DOCS / "asymmetric-figures.json")
    text = _snippet("asymmetric-figures.md")
    assert snippets.body(text) == tables(rows)
    assert f"measured by `{measured['command']}` on {measured['date']}" in text


def test_the_suites_size_is_counted_now() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance.suite_size"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert snippets.body(_snippet("suite-size.md")) == done.stdout.strip(), (
        "docs/generated/suite-size.md is out of date: run " + snippets.command_of(_snippet("suite-size.md"))
    )


def _header(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith("|"))


def test_a_conformance_run_snippet_is_a_row_of_the_matrix() -> None:
    body = snippets.body(_snippet("conformance-rocksdb.md"))
    kept = ROOT / "tests" / "unit" / "data" / "conformance-report.json"
    assert _header(body) == _header(snippet(load(kept)))
    assert re.search(r"^\| `rocksdb` \| .+ \| embedded \|", body, re.M)


def test_the_self_check_snippet_names_every_broken_adapter_and_its_verdict() -> None:
    body = snippets.body(_snippet("self-check.md"))
    named = set(re.findall(r"^\| `([a-z0-9-]+)` \|", body, re.M))
    assert named == {m.name for m in MUTANTS}
    assert re.search(rf"^- \d+ of {len(MUTANTS)} broken adapters caught", body, re.M)


def test_the_torture_snippet_has_the_campaigns_tables() -> None:
    from reliability.figures import CampaignReport, markdown

    body = snippets.body(_snippet("torture-ci.md"))
    assert _header(body) == _header(markdown(CampaignReport(profile="ci", seed=1)))
    assert re.search(r"^\| `rocksdb` \|", body, re.M)
    assert "| decoder | engine | inputs | crashes |" in body


#: The benchmark tables commit-cost-figures.md includes.
BENCH_BACKENDS = (
    "inmemory",
    "rocksdb",
    "postgres",
    "mariadb",
    "bigtable",
    "cassandra",
    "dynamodb",
    "mongodb",
)


@pytest.mark.parametrize("name", [f"bench-{b}.md" for b in BENCH_BACKENDS])
def test_the_benchmark_snippets_have_the_benchmarks_table(name: str) -> None:
    body = snippets.body(_snippet(name))
    backend = name.removeprefix("bench-").removesuffix(".md")
    assert _header(body).startswith(f"| scenario | {backend}, cache: commits/s (p50 / p99 ms) |")
    assert re.search(r"^\| 1-put commits \| [\d,]+ \(", body, re.M)
    # Measured with the database's floor beside it.
    assert "% of CAS floor" in body


def test_the_side_by_side_snippet_has_the_comparisons_table() -> None:
    body = snippets.body(_snippet("commit-cost-vs-nessie.md"))
    assert _header(body) == (
        "| backend | scenario | object cache | Nessie commits/s | lochkit commits/s | lochkit / Nessie |"
    )
    assert "Medians of " in body


def test_the_postgres_breakdown_has_a_table_per_operation_and_setting() -> None:
    body = snippets.body(_snippet("pg-commit-cost.md"))
    for operation in ("commit 1 put", "commit 10 puts", "floor cas", "floor put"):
        assert f"### {operation}\n" in body
    assert body.count("| per operation | bench | bench+sync | durable | durable-async |") == 4
    assert re.search(r"^\| server CPU ms \| [\d.]+", body, re.M)


@pytest.mark.parametrize("backend", ["inmemory", "rocksdb"])
def test_the_instruction_counts_come_pure_and_compiled(backend: str) -> None:
    pure, compiled = _snippet(f"instructions-{backend}.md"), _snippet(f"instructions-compiled-{backend}.md")
    for text in (pure, compiled):
        header = _header(snippets.body(text))
        assert header.startswith("| backend | puts per commit | instructions per commit (millions) |")
    # The provenance line names the kernel that was counted.
    assert "lochkit pure Python._" in pure
    assert "compiled with mypyc (" in compiled


def test_the_report_scale_snippet_has_the_benchmarks_table() -> None:
    body = snippets.body(_snippet("report-scale.md"))
    assert _header(body).startswith("| events | runs | report s | events/s |")


def test_the_kept_asymmetric_rows_say_when_and_where_they_were_measured() -> None:
    kept = json.loads((DOCS / "asymmetric-figures.json").read_text())
    assert set(kept["measured"]) >= {"command", "date", "machine"}


def test_the_long_torture_tables_are_rendered_from_the_kept_runs() -> None:
    """The long campaign's runs are kept in docs/torture-long: the page is what --combine makes of
    them now (a changed run, or a figure typed by hand, shows up here)."""
    from lochkit.commands.torture import LOCAL_BACKENDS
    from reliability.combine import combine, combined_tables, load_report

    text = _snippet("torture-long.md")
    runs = re.findall(r"--combine (\S+)", snippets.command_of(text))
    assert runs, "the long campaign's snippet names no run"
    loaded = [(ROOT / run, load_report(ROOT / run)) for run in runs]
    assert all(run.startswith("docs/torture-long/") for run in runs), runs
    expected = combined_tables([r for _, r in loaded], combine(loaded), LOCAL_BACKENDS)
    assert snippets.body(text) == expected
