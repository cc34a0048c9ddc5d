"""The compiled kernel: the commit path's modules, compiled from their own source by mypyc.

lochkit installs as pure Python. A build with ``LOCHKIT_COMPILE=1`` (``setup.py``) also compiles
:data:`COMPILED_MODULES` with mypyc into C extensions that sit beside their ``.py`` files, and
Python then imports the extension. The source is the same, so the Python code stays the one to
read and the reference the compiled modules are tested against (``tests/kernel``: the same bytes
for every object, on Nessie's vectors and on random histories).

Left out, each for a reason mypyc gives:

* ``persist.py`` and ``forwarding.py``: ``Persist`` and ``ForwardingPersist`` are subclassed by
  interpreted classes (adapters' wrappers, tests); compiled and opened to interpreted subclasses,
  they crashed the garbage collector in the byte-for-byte tests. ``AdapterPersist`` is therefore
  compiled as a plain Python class (a compiled class over an interpreted base crashes it too), and
  ``cache.py`` is left out (mypyc fails on the lambdas of such a class);
* ``adapter.py`` and ``objtypes.py``: adapters and object types users write subclass them;
* ``objs.py`` and ``versionstore/content.py``: their dataclasses set class attributes at run time
  (mypyc makes a class with a class decorator a non-native one, which native subclasses cannot
  extend; moving the registration after the class still failed: mypyc took the ``TYPE`` class
  variable of ``Obj`` for a keyword argument of the generated ``__init__``);
* ``indexes/action.py``: an ``Enum`` that computes its members' attributes in ``__init__``;
* ``logic/errors.py``: classes deriving from a built-in exception beside ``LochkitError``;
* ``ids.py`` (``ObjId`` is a ``bytes`` subclass) and ``logic/retry.py`` (a generic class mypyc
  cannot build here).

The records a commit builds (the version store's request and result, the builder's inputs, a
reference and its history entries, the content-value writer) write their ``__init__`` out instead
of letting ``dataclasses`` generate it. A generated ``__init__`` is made at run time, so it runs
interpreted even in a compiled module: for a frozen dataclass about six times the cost of a
written-out one, compiled. Behaviour is the same either way (the class stays a dataclass: equality,
hashing, ``replace`` and the frozen check for interpreted callers are unchanged).
"""

from __future__ import annotations

import importlib
import importlib.machinery
from typing import Final

#: The modules a compiled build compiles: every module a commit runs through, less those above.
COMPILED_MODULES: Final = (
    "persist_spi.adapter_persist",
    "persist_spi.cache_store",
    "persist_spi.cache_weight",
    "persist_spi.clock",
    "persist_spi.codec",
    "persist_spi.hashing",
    "persist_spi.headers",
    "persist_spi.indexes.elements",
    "persist_spi.indexes.store_index",
    "persist_spi.indexes.varint",
    "persist_spi.java_order",
    "persist_spi.keys",
    "persist_spi.logic.commit_builder",
    "persist_spi.logic.commit_logic",
    "persist_spi.logic.conflicts",
    "persist_spi.logic.create_commit",
    "persist_spi.logic.indexes",
    "persist_spi.protowire",
    "persist_spi.references",
    "persist_spi.versionstore.commit_helper",
    "persist_spi.versionstore.committing",
    "persist_spi.versionstore.content_proto",
    "persist_spi.versionstore.keymap",
    "persist_spi.versionstore.known_heads",
    "persist_spi.versionstore.meta",
    "persist_spi.versionstore.namespaces",
    "persist_spi.versionstore.operations",
    "persist_spi.versionstore.policies.base",
    "persist_spi.versionstore.policies.optimistic",
    "persist_spi.versionstore.results",
    "persist_spi.versionstore.sources",
    "persist_spi.versionstore.store",
)


def compiled_modules() -> tuple[str, ...]:
    """The modules of :data:`COMPILED_MODULES` this process runs compiled."""
    compiled = []
    for name in COMPILED_MODULES:
        module = importlib.import_module(name)
        if isinstance(getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader):
            compiled.append(name)
    return tuple(compiled)


def describe() -> str:
    """One line for benchmark output: which kernel measured the figures."""
    compiled = len(compiled_modules())
    if compiled == 0:
        return "pure Python"
    if compiled == len(COMPILED_MODULES):
        return f"compiled with mypyc ({compiled} modules)"
    return f"partly compiled with mypyc ({compiled} of {len(COMPILED_MODULES)} modules)"
