"""What a load command drives: a :class:`Target` is a
:class:`~persist_spi.versionstore.api.VersionStoreApi` plus the facts a run records about it.

Two kinds: ``lochkit`` (the version store in-process, over any backend: :mod:`.in_process`) and
``nessie`` (any Nessie server through its REST API v2: :mod:`.nessie_rest`). Obtaining the database
or server (provisioning) is the CLI's job (``loadgen/targets/opening.py``); a target only wraps what it is
handed and releases it on :meth:`Target.close`.
"""

from loadgen.targets.target import Target, TargetConnection

__all__ = ["Target", "TargetConnection"]
