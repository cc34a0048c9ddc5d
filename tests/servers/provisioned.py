"""A server of one backend for the tests of one module, obtained as ``LOCHKIT_PROVISION`` says
and stopped afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from persist_spi.registry import BackendFactory
from provisioning.base import Provisioned
from provisioning.registry import provision
from provisioning.workdir import workdir


@contextmanager
def provisioned_server(backend: str, factory: BackendFactory, label: str) -> Iterator[Provisioned]:
    """``backend``'s server in a work directory named after ``label``."""
    method = os.environ.get("LOCHKIT_PROVISION", "auto")
    with workdir(label) as where:
        provisioned = provision(backend, factory, urls={}, method=method, workdir=where)
        try:
            yield provisioned
        finally:
            provisioned.stop()
