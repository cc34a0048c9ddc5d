"""End to end: short real load runs on RocksDB (``lochkit generate``, and two writers racing on
one branch), an inventory of the same repository, a real conformance report, then ``lochkit
report``; the page is opened in headless Chromium (Debian's chromium and chromium-driver), checked
for its sections and figures, and a screenshot is kept under ``.lochkit/`` as a CI artifact."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lochkit.cli import main as lochkit

from .real_load import run_load

SCREENSHOT = Path(".lochkit") / "report-screenshot.png"
SECTIONS = ("Load runs", "Comparison across runs", "Storage", "Conformance", "Tables")


@pytest.fixture(scope="module")
def report_dir(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("e2e")
    db = root / "rocksdb"
    inputs = root / "inputs"
    generate = ["generate", "--backend", "rocksdb", "--url", str(db), "-n", "120", "-t", "40"]
    generate += [
        "--puts-per-commit",
        "3",
        "--seed",
        "10",
        "--out",
        str(inputs / "runs" / "generate"),
        "--inventory",
    ]
    assert lochkit(generate) == 0
    run_load("rocksdb", str(db), inputs / "runs" / "race", commits_per_writer=40)
    assert (
        lochkit(["inventory", "--backend", "rocksdb", "--url", str(db), "--out", str(inputs / "inventory")])
        == 0
    )
    conformance = subprocess.run(
        [
            sys.executable,
            "-m",
            "lochkit",
            "conformance",
            "--backend",
            "inmemory",
            "-k",
            "TestLogicCommits",
            "--report",
            str(inputs / "conformance.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert conformance.returncode == 0, conformance.stdout[-2000:] + conformance.stderr[-2000:]
    out = root / "report"
    code = lochkit(
        ["report", str(inputs), "--out", str(out), "--project", "10/s:30d", "--baseline", "generate"]
    )
    assert code == 0
    return out


def test_every_table_is_written_as_parquet_and_csv(report_dir: Path) -> None:
    tables = report_dir / "tables"
    names = {p.name.rsplit(".", 1)[0] for p in tables.iterdir()}
    expected = {
        "runs",
        "writers",
        "throughput",
        "latency",
        "latency_cdf",
        "attempts",
        "comparison",
        "comparison_groups",
        "runs_vs_baseline",
        "inventories",
        "objects_by_type",
        "commit_additions",
        "per_commit_by_type",
        "index_spills",
        "growth",
        "projection",
        "conformance_matrix",
        "conformance_history",
        "conformance_fixed_deviations",
    }
    assert expected <= names
    for name in expected:
        assert (tables / f"{name}.csv").is_file()
        assert (tables / f"{name}.parquet").is_file()


def test_the_tables_agree_with_the_load_that_ran(report_dir: Path) -> None:
    runs = {r["run_id"]: r for r in pq.read_table(report_dir / "tables" / "runs.parquet").to_pylist()}
    assert set(runs) == {"generate", "race"}
    assert all(run["backend"] == "rocksdb" for run in runs.values())
    assert (runs["generate"]["commits"], runs["generate"]["writers"]) == (120, 1)
    assert runs["generate"]["scenario"] == "generate"
    assert (runs["race"]["commits"], runs["race"]["writers"]) == (80, 2)  # none lost on an embedded store
    assert 0.5 <= runs["race"]["jain_index"] <= 1.0
    summaries = {
        r["inventory_id"]: r
        for r in pq.read_table(report_dir / "tables" / "commit_summary.parquet").to_pylist()
    }
    assert summaries["generate-inventory"]["commits"] == 120  # taken by generate --inventory, after its run
    assert summaries["inventory"]["commits"] == 200  # every acknowledged commit of both runs landed
    per_type = {
        (r["inventory_id"], r["obj_type"]): r
        for r in pq.read_table(report_dir / "tables" / "per_commit_by_type.parquet").to_pylist()
    }
    assert per_type[("inventory", "COMMIT")]["objects_per_commit"] >= 1.0
    # Every put of the race run and of generate's first commit creates a table: a content-id claim.
    assert per_type[("inventory", "UNIQUE")]["objects_per_commit"] > 0
    objects = pq.read_table(report_dir / "tables" / "objects_by_type.parquet").to_pylist()
    for row in pq.read_table(report_dir / "tables" / "projection.parquet").to_pylist():
        measured = sum(o["objects"] for o in objects if o["inventory_id"] == row["inventory_id"])
        assert row["measured_objects"] == measured
        # At the measured number of landed commits, the projection is the inventory itself.
        assert row["fixed_objects"] + row["objects_per_commit"] * row["measured_commits"] == pytest.approx(
            measured
        )
    matrix = pq.read_table(report_dir / "tables" / "conformance_matrix.parquet").to_pylist()
    assert [(r["backend"], r["area"], r["failed"]) for r in matrix] == [("inmemory", "logic.commits", 0)]


def _browser(profile: Path) -> Any:
    """Headless Chromium with its profile in ``profile`` (under the test's tmp_path, so removed)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        message = "Debian's chromium and chromium-driver are needed: apt-get install chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


#: Rendered size of figure text on the page (CSS px): the page's table text is 12.5 px.
FIGURE_TEXT_PX = (10.0, 16.0)


def _check_layout(browser: Any) -> None:
    """At 1280 px: nothing wider than the window or hidden in a horizontal scroll, figure text of
    one legible size, no figure text on top of another."""
    width = browser.execute_script("return document.documentElement.clientWidth")
    assert width >= 1200  # the window is 1280 px wide, less a scroll bar
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    too_wide = browser.execute_script(
        """
        const width = document.documentElement.clientWidth;
        return [...document.querySelectorAll('body *')]
          .filter(e => e.getBoundingClientRect().right > width + 0.5
                       || (['auto', 'scroll'].includes(getComputedStyle(e).overflowX)
                           && e.scrollWidth > e.clientWidth + 1))
          .map(e => e.tagName + ' ' + (e.closest('section') || {}).id + ' ' + e.textContent.slice(0, 60));
        """
    )
    assert too_wide == []
    # Text size as rendered: the font size in the SVG's units times the scale the page draws it at.
    sizes = browser.execute_script(
        """
        return [...document.querySelectorAll('figure svg text')].map(t => {
          const m = t.getScreenCTM();
          return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
        });
        """
    )
    assert sizes
    assert min(sizes) >= FIGURE_TEXT_PX[0], sizes
    assert max(sizes) <= FIGURE_TEXT_PX[1], sizes
    assert max(sizes) / min(sizes) <= 1.2
    overlapping = browser.execute_script(
        """
        const found = [];
        for (const svg of document.querySelectorAll('figure svg')) {
          const boxes = [...svg.querySelectorAll('text')]
            .map(t => [t.textContent, t.getBoundingClientRect()]).filter(([_, r]) => r.width > 0);
          for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
            const [a, r] = boxes[i], [b, q] = boxes[j];
            if (Math.min(r.right, q.right) - Math.max(r.left, q.left) > 1
                && Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top) > 1) found.push([a, b]);
          }
        }
        return found;
        """
    )
    assert overlapping == []


def test_the_page_opens_in_a_browser_with_its_sections_and_figures(report_dir: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    browser = _browser(tmp_path / "chromium-profile")
    try:
        browser.get((report_dir / "report.html").resolve().as_uri())
        headings = [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
        assert list(SECTIONS) == headings

        def figures(section: str) -> int:
            return len(browser.find_elements(By.CSS_SELECTOR, f"section#{section} figure svg"))

        assert figures("runs") == 6  # two runs x (throughput, latency CDF, attempts)
        assert figures("comparison") == 1
        assert figures("storage") == 2  # growth, projection
        matrix = browser.find_element(By.CSS_SELECTOR, "section#conformance table.matrix")
        assert "logic.commits" in matrix.text
        for svg in browser.find_elements(By.CSS_SELECTOR, "figure svg"):
            size = svg.size
            assert size["width"] > 300
            assert size["height"] > 100
        page_text = browser.find_element(By.TAG_NAME, "body").text
        assert "commits/s" in page_text
        assert "p99 (ms)" in page_text
        _check_layout(browser)
        height = browser.execute_script("return document.body.scrollHeight")
        browser.set_window_size(1280, min(int(height) + 100, 16000))
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(SCREENSHOT))
    finally:
        browser.quit()
    assert SCREENSHOT.stat().st_size > 10_000
