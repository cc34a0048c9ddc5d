"""lochkit's conformance suite: a pytest plugin plus suites any backend adapter can run.

Run it with ``lochkit conformance --backend NAME`` or ``pytest --backend NAME`` on a module that does
``from conformance.all import *``. A third-party adapter overrides the ``lochkit_backend_factory``
fixture (see docs/own-adapter.md).
"""

from conformance.harness import BackendUnderTest, PersistFactory
from conformance.suites.base import ConformanceSuite
from provisioning.base import Provisioned, ServerProvisioner

__all__ = ["BackendUnderTest", "ConformanceSuite", "PersistFactory", "Provisioned", "ServerProvisioner"]
