"""The lochkit pytest plugin: pick a backend, provision it, hand Persists to the suites, report.

Registered through the ``pytest11`` entry point, so pytest loads it wherever lochkit is installed.
It stays out of the way of sessions that do not run lochkit tests: it adds and checks its options,
and does nothing else until a session collects a conformance suite test or uses one of its fixtures
(see :mod:`conformance.session`).

Options: ``--backend NAME`` (repeatable, comma-separated, or ``all``; env ``LOCHKIT_BACKEND``; a
name may also be ``serve:BACKEND`` or ``nessie``, see :mod:`conformance.suite_targets`),
``--over-rest`` (adds ``serve:NAME`` for each backend; env ``LOCHKIT_OVER_REST=1``),
``--backend-url NAME=URL`` (env ``LOCHKIT_<NAME>_URL``), ``--provision METHOD`` (env
``LOCHKIT_PROVISION``), ``--lochkit-report FILE`` (JSON per backend and area), ``--lochkit-cache``
and ``--lochkit-cache-refs`` (every Persist wrapped in a ``CachingPersist``; env
``LOCHKIT_CACHE_PERSIST=1`` or ``refs``).

A third-party adapter overrides one fixture, ``lochkit_backend_factory``, in its ``conftest.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, Final, NoReturn

import pytest

from conformance import fail_fast, parallel
from conformance.backend_pool import BackendPool
from conformance.harness import BackendUnderTest, PersistFactory
from conformance.lockstep import source_files_of, turns_inside
from conformance.session import activate
from conformance.setup_failure import SetupFailure
from conformance.suite_targets import (
    CAPABILITIES,
    IN_PROCESS,
    LOCHKIT_SERVE,
    NESSIE,
    NESSIE_DEVIATIONS,
    SERVE_DEVIATIONS,
    STORAGE_ONLY_REASON,
    SuiteTarget,
    missing_backend_capability,
    missing_target_capability,
    parse_target,
    serve_name,
)
from conformance.suites.base import ConformanceSuite, deviation_reason
from persist_spi.adapter import BackendAdapter
from persist_spi.cache import CacheConfig, CachingPersist, ObjectCache
from persist_spi.config import StoreConfig
from persist_spi.errors import InputError
from persist_spi.logic.ownership import ExistingDataRefused
from persist_spi.persist import Persist
from persist_spi.registry import BackendFactory, UnknownBackend, backend_factory, discover_backends
from provisioning.base import METHODS, Provisioned

#: Backends selected only through ``--backend all``: if one cannot be provisioned here, its tests
#: are skipped with the reason instead of failing (naming a backend explicitly makes it required).
_IMPLICIT_KEY = pytest.StashKey[set[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lochkit", "lochkit conformance")
    group.addoption(
        "--backend",
        action="append",
        default=[],
        metavar="NAME",
        help="backend(s) to run the conformance suites against; repeatable, comma-separated, or "
        "'all' for every installed backend (default: $LOCHKIT_BACKEND, else inmemory)",
    )
    group.addoption(
        "--backend-url",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="use an already running server for NAME instead of provisioning one (also $LOCHKIT_<NAME>_URL)",
    )
    group.addoption(
        "--provision",
        default=os.environ.get("LOCHKIT_PROVISION", "auto"),
        choices=METHODS,
        help="how to obtain servers: auto (external address, else testcontainers when Docker "
        "answers, else a local process), or force one method",
    )
    group.addoption(
        "--over-rest",
        action="store_true",
        default=os.environ.get("LOCHKIT_OVER_REST", "") in ("1", "true"),
        help="also run the version-store suites over REST: for each selected backend NAME, add "
        "serve:NAME (lochkit serve over NAME, driven through lochkit's Nessie REST client); "
        "also $LOCHKIT_OVER_REST=1",
    )
    group.addoption(
        "--lochkit-allow-existing-data",
        action="store_true",
        default=os.environ.get("LOCHKIT_ALLOW_EXISTING_DATA", "") in ("1", "true"),
        help="run in a database given by address even when it holds repositories lochkit's test and "
        "load commands did not create (refused otherwise); the suites still write only into "
        "scratch repositories of their own; also $LOCHKIT_ALLOW_EXISTING_DATA=1",
    )
    group.addoption(
        "--lochkit-layout",
        choices=["lochkit", "nessie"],
        default=os.environ.get("LOCHKIT_LAYOUT") or "lochkit",
        help="the storage layout every backend is opened with (its URL option layout=): lochkit's "
        "own, or a Nessie server's (layout=nessie); also $LOCHKIT_LAYOUT",
    )
    group.addoption("--lochkit-report", metavar="FILE", help="write per-backend, per-area results as JSON")
    group.addoption(
        "--lochkit-cache",
        action="store_true",
        default=os.environ.get("LOCHKIT_CACHE_PERSIST", "") in ("1", "true", "refs"),
        help="run every suite through a CachingPersist (a fresh 1 MiB object cache per test, "
        "reference caching off); also $LOCHKIT_CACHE_PERSIST=1",
    )
    group.addoption(
        "--lochkit-cache-refs",
        action="store_true",
        default=os.environ.get("LOCHKIT_CACHE_PERSIST", "") == "refs",
        help="like --lochkit-cache, with reference caching on (TTL 60 s, negative TTL 60 s); "
        "also $LOCHKIT_CACHE_PERSIST=refs",
    )
    fail_fast.add_options(group)


def pytest_configure(config: pytest.Config) -> None:
    """Markers and a check of the options: nothing that a session without lochkit tests notices."""
    config.addinivalue_line(
        "markers", "lochkit_requires(*capabilities): skip unless the backend declares them"
    )
    config.addinivalue_line("markers", "store_config(**changes): StoreConfig overrides for `persist`")
    fail_fast.check_options(config)
    _check_backend_names(config)
    parallel.configure(
        config,
        lambda: [*selected_backends(config), OWN_FACTORY],
        names_backends=bool(config.getoption("--backend"))
        or "LOCHKIT_BACKEND" in os.environ
        or config.getoption("--over-rest", False),
    )


def _check_backend_names(config: pytest.Config) -> None:
    """A misspelt ``--backend`` is a usage error, said once, not an error in every test."""
    if not config.getoption("--backend") and "LOCHKIT_BACKEND" not in os.environ:
        return  # the default; a conftest may override the factory without naming a backend
    for name in selected_backends(config):
        try:
            target = parse_target(name)
            if target.backend is not None:
                backend_factory(target.backend)
        except (UnknownBackend, InputError) as e:
            raise pytest.UsageError(str(e)) from None


def selected_backends(config: pytest.Config) -> list[str]:
    raw: list[str] = list(config.getoption("--backend") or [])
    if not raw:
        raw = [os.environ.get("LOCHKIT_BACKEND", "inmemory")]
    names: list[str] = []
    from_all: set[str] = set()
    named: set[str] = set()
    for item in raw:
        for name in (n.strip() for n in item.split(",")):
            if name == "all":
                found = [n for n, e in discover_backends().items() if e.installed]
                names.extend(found)
                from_all.update(found)
            elif name:
                names.append(name)
                named.add(name)
    if config.getoption("--over-rest", False):
        # Each serve: target right after its backend, so both share one provisioned server.
        names = [n for name in names for n in (name, *_served(name))]
        from_all |= {serve_name(n) for n in from_all}
    config.stash[_IMPLICIT_KEY] = from_all - named
    return list(dict.fromkeys(names))


def _served(name: str) -> list[str]:
    target = parse_target(name)
    return [serve_name(name)] if target.transport == IN_PROCESS else []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Every fixture of the plugin that reaches a backend depends on this one: a test whose fixtures
    # include it is a lochkit test (a project's own fixture of the same name as one of ours, such
    # as ``persist``, does not).
    if "lochkit_backend_name" in metafunc.fixturenames:
        activate(metafunc.config)
        names = selected_backends(metafunc.config)
        if not getattr(metafunc.cls, "runs_over_rest", False):
            # Only the version-store suites run over REST. When nothing else is selected, the
            # REST targets stay, and the gate skips these tests with the reason.
            names = [n for n in names if not parse_target(n).over_rest] or names
        if _factory_overridden(metafunc):
            # The suites run against the conftest's own factory, whatever --backend names: one
            # in-process run, not one identical run per selected name.
            names = [OWN_FACTORY]
        metafunc.parametrize("lochkit_backend_name", names, indirect=True, scope="session", ids=names)


#: The target name the suites get when a conftest overrides ``lochkit_backend_factory``.
OWN_FACTORY: Final = "own-factory"


def _factory_overridden(metafunc: pytest.Metafunc) -> bool:
    # The version-store suites reach the factory through getfixturevalue, so it is not in the
    # test's static closure: ask the fixture manager what that name resolves to at this node.
    manager = metafunc.definition.session._fixturemanager
    definitions = manager.getfixturedefs("lochkit_backend_factory", metafunc.definition) or ()
    return bool(definitions) and getattr(definitions[-1].func, "__module__", __name__) != __name__


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A conformance suite test makes the session a lochkit one. Record backend and area of
    REST-target tests now: a storage fixture may skip them before the gate runs (in-process tests
    are recorded by the gate, under their factory's name)."""
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is None or not issubclass(cls, ConformanceSuite):
            continue
        info = activate(config).test_info
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("lochkit_backend_name") if callspec is not None else None
        if isinstance(name, str) and parse_target(name).over_rest:
            info[item.nodeid] = (name, cls.area)


@pytest.fixture(scope="session")
def lochkit_backend_name(request: pytest.FixtureRequest) -> str:
    activate(request.config)
    param = getattr(request, "param", None)
    return str(param) if param is not None else selected_backends(request.config)[0]


@pytest.fixture(scope="session")
def lochkit_target(lochkit_backend_name: str) -> SuiteTarget:
    """What the suites drive: a backend in-process, lochkit serve over it, or a Nessie server."""
    if lochkit_backend_name == OWN_FACTORY:
        return SuiteTarget(OWN_FACTORY, OWN_FACTORY, IN_PROCESS)  # the conftest's factory, in-process
    return parse_target(lochkit_backend_name)


@pytest.fixture(scope="session")
def lochkit_backend_factory(request: pytest.FixtureRequest, lochkit_target: SuiteTarget) -> BackendFactory:
    """Override this fixture to run the suites against your own adapter."""
    if lochkit_target.backend is None:
        reason = CAPABILITIES[lochkit_target.transport].reasons["storage_access"]
        activate(request.config).failures.skip_backend_wide(
            lochkit_target.name,
            f"{lochkit_target.name} does not declare capability 'storage_access': {reason}",
        )
    return backend_factory(lochkit_target.backend)


def _report_name(target: SuiteTarget, factory: BackendFactory) -> str:
    return serve_name(factory.name) if target.transport == LOCHKIT_SERVE else factory.name


@pytest.fixture(scope="session")
def _lochkit_pool(request: pytest.FixtureRequest) -> Iterator[BackendPool]:
    activate(request.config)
    urls = dict(_split_url(u) for u in request.config.getoption("--backend-url") or [])
    pool = BackendPool(
        urls,
        request.config.getoption("--provision"),
        allow_existing_data=bool(request.config.getoption("--lochkit-allow-existing-data")),
        layout=str(request.config.getoption("--lochkit-layout")),
    )
    try:
        yield pool
    finally:
        with fail_fast.not_limited(request.config):  # stopping a server is no test's time
            pool.close()


@pytest.fixture
def lochkit_backend(
    request: pytest.FixtureRequest,
    _lochkit_pool: BackendPool,
    lochkit_backend_factory: BackendFactory,
) -> Iterator[BackendUnderTest]:
    """The backend under test, started once and kept while consecutive tests use the same factory.
    With --lochkit-cache, every Persist the harness makes in this test goes through one fresh cache
    (per test, so repositories reused across tests and backends never see old entries)."""
    # Asked for here, not as a parameter: a third-party factory must not make its tests
    # parametrised by --backend.
    lochkit_target: SuiteTarget = request.getfixturevalue("lochkit_target")
    name = _report_name(lochkit_target, lochkit_backend_factory)
    # Starting a server and creating its schema may take minutes: not part of the test's time.
    with fail_fast.not_limited(request.config):
        outcome = _lochkit_pool.get(lochkit_backend_factory)
        if not isinstance(outcome, SetupFailure):
            embedded = outcome[1]["method"] == "embedded" and lochkit_target.transport == IN_PROCESS
            fail_fast.note_backend(request.config, embedded=embedded)
    if isinstance(outcome, SetupFailure):
        _unusable(request, name, outcome)
    backend, facts = outcome
    if lochkit_target.transport == LOCHKIT_SERVE:
        facts = {**facts, "description": f"lochkit serve (HTTP on loopback) over {facts['description']}"}
    activate(request.config).report.provisioning[name] = facts
    backend.persist_wrapper = _cache_wrapper(request.config)
    try:
        yield backend
    finally:
        backend.persist_wrapper = None


def _cache_wrapper(config: pytest.Config) -> Callable[[Persist], Persist] | None:
    refs = bool(config.getoption("--lochkit-cache-refs"))
    if not (refs or config.getoption("--lochkit-cache")):
        return None
    ttl = 60.0 if refs else None
    cache = ObjectCache(
        CacheConfig(capacity_bytes=1024 * 1024, reference_ttl_seconds=ttl, reference_negative_ttl_seconds=ttl)
    )
    return lambda persist: CachingPersist(persist, cache)


def _unusable(request: pytest.FixtureRequest, name: str, failure: SetupFailure) -> NoReturn:
    """Ends a test whose backend or server ``name`` cannot be used: skipped when it came only
    through ``--backend all`` and is not available here, failed otherwise (see SetupFailures)."""
    session = activate(request.config)
    session.report.provisioning.setdefault(
        name, {"description": f"{failure.state}: {failure.first_line}", "method": "none", "server": ""}
    )
    failures = session.failures
    if failure.skippable and name in request.config.stash.get(_IMPLICIT_KEY, set()):
        failures.skip(failure)
    failures.fail(request.node, failure)


@pytest.fixture
def persist_factory(
    request: pytest.FixtureRequest, lochkit_backend: BackendUnderTest
) -> Iterator[PersistFactory]:
    """Makes Persists on fresh scratch repositories (random ids unless named); erases them afterwards."""
    factory = PersistFactory(lochkit_backend, _store_config(request))
    try:
        yield factory
    finally:
        factory.erase_all()


@pytest.fixture
def persist(request: pytest.FixtureRequest, persist_factory: PersistFactory) -> Persist:
    """A Persist on a fresh scratch repository (``store_config(repository_id=...)`` names it under
    the factory's scratch prefix)."""
    config = _store_config(request)
    return persist_factory(config.repository_id)


@pytest.fixture
def _lochkit_gate(request: pytest.FixtureRequest) -> None:
    """For suite tests (:class:`ConformanceSuite` uses it): record backend and area, apply declared
    deviations and capability needs (the target's, then the backend's)."""
    cls = request.cls
    if cls is None or not issubclass(cls, ConformanceSuite):
        return
    session = activate(request.config)
    node = request.node
    target: SuiteTarget = request.getfixturevalue("lochkit_target")
    if target.over_rest and not getattr(cls, "runs_over_rest", False):
        session.failures.skip_backend_wide(target.name, f"{target.name}: {STORAGE_ONLY_REASON}")
    needed = [c for marker in node.iter_markers("lochkit_requires") for c in marker.args]
    skip = missing_target_capability(target, needed)
    if skip is not None:
        pytest.skip(skip)
    deviations: dict[str, str] = {}
    if target.transport == NESSIE:
        deviations.update(NESSIE_DEVIATIONS)
    else:
        factory: BackendFactory = request.getfixturevalue("lochkit_backend_factory")
        name = _report_name(target, factory)
        session.test_info[node.nodeid] = (name, cls.area)
        backend: BackendUnderTest = request.getfixturevalue("lochkit_backend")
        caps = backend.capabilities
        skip = missing_backend_capability(backend.name, caps, needed)
        if skip is not None:
            pytest.skip(skip)
        deviations.update(caps.deviations)
        if target.transport == LOCHKIT_SERVE:
            deviations.update(SERVE_DEVIATIONS)
    reason = deviation_reason(deviations, cls, node.originalname)
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"declared deviation: {reason}"))


@pytest.fixture
def _lochkit_turns(request: pytest.FixtureRequest) -> Iterator[None]:
    """For suite tests (:class:`ConformanceSuite` uses it): threads a suite test starts yield to
    each other at every line of the adapter's own code (see :mod:`conformance.lockstep`), so a
    concurrency test meets a check-then-act window between two statements of the adapter instead
    of missing it by luck."""
    cls = request.cls
    if cls is None or not issubclass(cls, ConformanceSuite):
        yield
        return
    target: SuiteTarget = request.getfixturevalue("lochkit_target")
    if target.transport == NESSIE:  # no adapter in this process
        yield
        return
    backend: BackendUnderTest = request.getfixturevalue("lochkit_backend")
    with turns_inside(source_files_of(backend.adapter, stop_at=BackendAdapter)):
        yield


@pytest.fixture
def lochkit_version_store(request: pytest.FixtureRequest, lochkit_target: SuiteTarget) -> Iterator[Any]:
    """The version store the suites drive, over a repository with an empty ``main`` branch: the
    in-process VersionStore, or lochkit's Nessie REST client talking to ``lochkit serve`` over
    that store, or to a Nessie server (see :mod:`conformance.suite_targets`)."""
    from persist_spi.logic.repository_logic import RepositoryLogic
    from persist_spi.versionstore.store import VersionStore

    if lochkit_target.transport == NESSIE:
        # Only REST targets need the REST client (and its HTTP library, in the loadgen/serve extras).
        from conformance.rest_harness import reset_nessie
        from nessie_client import NessieRestClient

        uri = request.getfixturevalue("_lochkit_nessie_uri")
        with NessieRestClient(uri) as client:
            reset_nessie(client)
            yield client
        return
    persist: Persist = request.getfixturevalue("persist")
    RepositoryLogic(persist).initialize("main")
    store = VersionStore(persist)
    if lochkit_target.transport == IN_PROCESS:
        yield store
        return
    harness = request.getfixturevalue("_lochkit_serve")
    with harness.client_for(store) as client:
        yield client


@pytest.fixture(scope="session")
def _lochkit_serve(request: pytest.FixtureRequest) -> Iterator[Any]:
    from conformance.rest_harness import ServeHarness

    with fail_fast.not_limited(request.config):  # starting and stopping a server: no test's time
        harness = ServeHarness()
    try:
        yield harness
    finally:
        with fail_fast.not_limited(request.config):
            harness.close()


@pytest.fixture
def _lochkit_nessie_uri(request: pytest.FixtureRequest, _lochkit_pool: BackendPool) -> str:
    """The REST API v2 base of the Nessie server (provisioned once, kept while tests use it)."""
    with fail_fast.not_limited(request.config):  # starting Nessie is no test's time
        outcome = _lochkit_pool.get_server(NESSIE)
        fail_fast.note_backend(request.config, embedded=False)
    if isinstance(outcome, SetupFailure):
        _unusable(request, NESSIE, outcome)
    if not outcome.started_here:
        _refuse_a_nessie_server_with_data(request, outcome)
    activate(request.config).report.provisioning[NESSIE] = {
        "description": outcome.describe(),
        "method": outcome.method,
        "server": outcome.server,
    }
    return outcome.url or ""


def _refuse_a_nessie_server_with_data(request: pytest.FixtureRequest, server: Provisioned) -> None:
    """The suites put a Nessie server's one repository back to empty before every test, so a
    server given by address must hold nothing when the run starts (checked once per run; no
    opt-in: that would be erasing someone's branches)."""
    from conformance.rest_harness import holds_data
    from nessie_client import NessieRestClient

    checked = activate(request.config).nessie_checked
    url = server.url or ""
    if url not in checked:
        with NessieRestClient(url) as client:
            checked[url] = holds_data(client)
    found = checked[url]
    if found:
        failure = SetupFailure.refused(
            NESSIE,
            ExistingDataRefused(
                f"refusing to run the suites against the Nessie server at {server.describe()}: it holds "
                f"{found}, and the suites reset its repository before every test. Give them a Nessie "
                "server of their own (leave out its address and they start one)"
            ),
        )
        _unusable(request, NESSIE, failure)


def _store_config(request: pytest.FixtureRequest) -> StoreConfig:
    changes: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers("store_config"))):
        changes.update(marker.kwargs)
    return StoreConfig().with_changes(**changes) if changes else StoreConfig()


def _split_url(value: str) -> tuple[str, str]:
    name, sep, url = value.partition("=")
    if not sep or not name or not url:
        raise pytest.UsageError(f"--backend-url expects NAME=URL, got '{value}'")
    return name, url
