"""Build hook: everything else is in pyproject.toml.

``LOCHKIT_COMPILE=1`` compiles the commit path's modules with mypyc (see persist_spi/kernel.py);
mypy and a C compiler must then be present, so build without isolation:

    LOCHKIT_COMPILE=1 pip wheel --no-build-isolation --no-deps -w dist .

Without it the package is pure Python, as a plain ``pip install`` gives it.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

from setuptools import setup

HERE = Path(__file__).resolve().parent


def _compiled_modules() -> list[str]:
    """COMPILED_MODULES, read from persist_spi/kernel.py without importing the package."""
    tree = ast.parse((HERE / "persist_spi" / "kernel.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "COMPILED_MODULES":
            assert node.value is not None
            return list(ast.literal_eval(node.value))
    raise SystemExit("persist_spi/kernel.py defines no COMPILED_MODULES")


def _ext_modules() -> list[Any]:
    if os.environ.get("LOCHKIT_COMPILE", "") != "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        raise SystemExit(
            "LOCHKIT_COMPILE=1 needs mypy (pip install mypy) and a build without isolation: "
            "pip wheel --no-build-isolation --no-deps -w dist ."
        ) from None
    paths = [name.replace(".", "/") + ".py" for name in _compiled_modules()]
    # pyproject.toml's mypy overrides name optional libraries the build does not read.
    return list(mypycify(["--no-warn-unused-configs", *paths], opt_level="3"))


setup(ext_modules=_ext_modules())
