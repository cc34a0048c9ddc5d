"""Building a server from the Go module proxy into the user's cache (FerretDB, Toxiproxy).

``go install module/cmd/x@version`` is avoided: it asks the proxy for the module's version list
(refused by restricted proxies) and builds without the files some projects generate before a
release. Instead the module is downloaded with ``go mod download``, copied out of the read-only
module cache, optionally prepared, and built with ``go build``. The binary is cached per version;
Go's module and build caches make a rebuild cheap.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from provisioning.base import ProvisioningFailed
from provisioning.servers.process import run_checked


def build_go_binary(
    *,
    backend: str,
    what: str,
    module: str,
    version: str,
    package: str,
    binary: Path,
    prepare: Callable[[Path], None] | None = None,
    ldflags: str | None = None,
    instead: str = "",
) -> Path:
    """Build ``module@version``'s ``package`` (e.g. ``./cmd/server``) into ``binary``.
    ``instead``: what the user can do without building (e.g. pass a running server's URL)."""
    go = shutil.which("go")
    if go is None:
        raise ProvisioningFailed(
            f"{backend}: building {what} needs the Go toolchain (1.24 or newer): install it "
            "(e.g. apt-get install golang-go, or https://go.dev/dl)" + (f" or {instead}" if instead else "")
        )
    source = _download_module(go, backend, module, version)
    binary.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{binary.name}-src-", dir=binary.parent.parent) as tmp:
        tree = Path(tmp) / "src"
        shutil.copytree(source, tree)
        _make_writable(tree)
        if prepare is not None:
            prepare(tree)
        partial = binary.with_name(f"{binary.name}.{os.getpid()}.partial")
        flags = ["-ldflags", ldflags] if ldflags else []
        run_checked(
            # -v names each package as it is compiled: the progress note of this long step.
            [go, "build", "-v", "-trimpath", "-buildvcs=false", *flags, "-o", str(partial), package],
            f"{backend}: building {what} {version} with go build",
            cwd=tree,
            timeout=1800,
        )
        partial.replace(binary)  # atomic: a concurrent run sees no binary or a whole one
    return binary


def binary_reports(binary: Path, flag: str, expected: str) -> bool:
    """True if ``binary`` exists and ``binary flag`` (its version option) exits 0 printing
    ``expected``: a cached build of the wanted version that starts."""
    if not binary.exists():
        return False
    try:
        done = subprocess.run([str(binary), flag], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and expected in done.stdout + done.stderr


def _download_module(go: str, backend: str, module: str, version: str) -> Path:
    out = run_checked(
        [go, "mod", "download", "-json", f"{module}@{version}"],
        f"{backend}: downloading {module}@{version} from the Go module proxy",
        timeout=600,
    )
    try:
        return Path(json.loads(out)["Dir"])
    except (ValueError, KeyError) as e:
        raise ProvisioningFailed(f"{backend}: unexpected output of go mod download: {out[:500]}") from e


def _make_writable(tree: Path) -> None:
    # The module cache is read-only; the copy must not be, or it cannot be changed nor removed.
    for path in [tree, *tree.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
