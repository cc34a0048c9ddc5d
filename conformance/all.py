"""Every conformance suite as a collectable test class.

``from conformance.all import *`` in a test module runs the whole suite against the backend chosen
by ``--backend`` (or by your ``lochkit_backend_factory`` fixture).
"""

from conformance.suites.persist_concurrency import PersistConcurrencySuite
from conformance.suites.persist_conditional import PersistConditionalSuite
from conformance.suites.persist_objects import PersistObjectsSuite
from conformance.suites.persist_referenced import PersistReferencedSuite
from conformance.suites.persist_references import PersistReferencesSuite
from conformance.suites.persist_repositories import PersistRepositoriesSuite
from conformance.suites.persist_size_limits import PersistSizeLimitsSuite
from conformance.suites.persist_stateful import PersistStatefulSuite


class TestPersistObjects(PersistObjectsSuite):
    pass


class TestPersistReferenced(PersistReferencedSuite):
    pass


class TestPersistConditional(PersistConditionalSuite):
    pass


class TestPersistSizeLimits(PersistSizeLimitsSuite):
    pass


class TestPersistReferences(PersistReferencesSuite):
    pass


class TestPersistRepositories(PersistRepositoriesSuite):
    pass


class TestPersistStateful(PersistStatefulSuite):
    pass


class TestPersistConcurrency(PersistConcurrencySuite):
    pass


__all__ = [name for name in dir() if name.startswith("Test")]
