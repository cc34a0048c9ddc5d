"""``python -m reliability.fuzz.atheris_main TARGET [libFuzzer flags] CORPUS``: one target under
atheris. lochkit's modules are imported inside ``instrument_imports`` so libFuzzer sees their
coverage; libFuzzer ends the process."""

from __future__ import annotations

import sys


def main() -> None:
    import atheris
    from atheris.import_hook import instrument_imports

    with instrument_imports(include=["persist_spi", "backends"]):
        from reliability.fuzz.targets import TARGETS

    target = TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target.check)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
