"""What persist_spi.kernel says about the modules a compiled build compiles."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from persist_spi.kernel import COMPILED_MODULES, compiled_modules, describe

ROOT = Path(__file__).resolve().parents[2]


def test_every_listed_module_is_a_source_file_of_the_package_once() -> None:
    assert len(set(COMPILED_MODULES)) == len(COMPILED_MODULES)
    for name in COMPILED_MODULES:
        assert (ROOT / (name.replace(".", "/") + ".py")).is_file(), name
        assert importlib.util.find_spec(name) is not None, name


def test_the_description_follows_what_runs_compiled() -> None:
    compiled = compiled_modules()
    if not compiled:
        assert describe() == "pure Python"
    else:
        assert describe().endswith(f"({len(compiled)} modules)") or f"{len(compiled)} of" in describe()


def test_the_build_compiles_the_listed_modules() -> None:
    """setup.py reads the list without importing the package; it must find the same one."""
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    namespace: dict[str, object] = {"__file__": str(ROOT / "setup.py")}
    exec(compile(setup.split("\nsetup(")[0], "setup.py", "exec"), namespace)
    read = namespace["_compiled_modules"]
    assert callable(read)
    assert tuple(read()) == COMPILED_MODULES
