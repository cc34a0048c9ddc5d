"""The content generator's other subcommands: reads (commits, refs, entries, content) and bulk
maintenance (content-refresh, delete, copy, create-missing-namespaces), as Nessie's tool does them."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO, TypeVar

from loadgen.contentgen.progress import Progress
from loadgen.contentgen.recording import Recorder
from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.content import Content, ContentKey, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Delete, Operation, Put
from persist_spi.versionstore.refs import NamedRef, ReferenceInfo, RefKind, branch
from persist_spi.versionstore.results import KeyEntry, LogEntry

T = TypeVar("T")
Out = Callable[[str], None]
COMMIT = "commitMultipleOperations"


def resolve_hash(api: VersionStoreApi, ref: NamedRef, spec: str | None) -> ObjId:
    """A commit on ``ref`` from ``-H``: a hash, optionally followed by relative parts ``~N`` (N-th
    predecessor) and ``^N`` (N-th parent); a spec starting with ``~``/``^`` is relative to the head."""
    head = api.reference(ref).hash
    if not spec:
        return head
    cut = min([i for i in (spec.find("~"), spec.find("^")) if i >= 0], default=len(spec))
    base, relative = spec[:cut], spec[cut:]
    try:
        current = api.hash_on_reference(ref, ObjId.from_hex(base)) if base else head
    except InputError:
        raise InputError(f"--hash '{spec}' is not a commit hash (hex) with optional ~N or ^N parts") from None
    for op, count in _relative_parts(relative, spec):
        for _ in range(count if op == "~" else 1):
            entries = itertools.islice(api.get_commits(current), 2)
            log = list(entries)
            if op == "~":
                if len(log) < 2:
                    raise InputError(f"--hash '{spec}': the history is shorter than that")
                current = log[1].hash
            else:
                parents = [ObjId.from_hex(p) for p in log[0].meta.parent_hashes] or [log[0].parent]
                if count < 1 or count > len(parents):
                    raise InputError(f"--hash '{spec}': commit {current} has no parent number {count}")
                current = parents[count - 1]
    return current


def _relative_parts(relative: str, spec: str) -> Iterator[tuple[str, int]]:
    i = 0
    while i < len(relative):
        op = relative[i]
        j = i + 1
        while j < len(relative) and relative[j].isdigit():
            j += 1
        if op not in "~^" or j == i + 1:
            raise InputError(f"--hash '{spec}': relative parts are ~N or ^N")
        yield op, int(relative[i + 1 : j])
        i = j


def _commit_of(api: VersionStoreApi, ref: str, hash_: str | None) -> tuple[NamedRef, ObjId]:
    """The reference ``-r`` names and the commit ``-H`` selects on it (its head by default)."""
    named = api.named_ref(ref).named_ref
    return named, resolve_hash(api, named, hash_)


def _limited(items: Iterable[T], limit: int) -> Iterable[T]:
    """At most ``limit`` items; ``limit <= 0`` means all, as in Nessie's ``-L``."""
    return itertools.islice(items, limit) if limit > 0 else items


def read_commits(
    api: VersionStoreApi, ref: str, hash_: str | None, limit: int, verbose: bool, out: Out
) -> None:
    _, start = _commit_of(api, ref, hash_)
    out(f"Reading commits for ref '{ref}'\n")
    entries: Iterable[LogEntry] = _limited(api.get_commits(start, with_operations=verbose), limit)
    for entry in entries:
        meta = entry.meta
        author = ", ".join(meta.authors)
        when = meta.author_time.isoformat() if meta.author_time else ""
        out(f"{entry.hash}\t{when}\t{meta.message} [{author}]")
        for op in entry.operations or ():
            out(f"  {_describe_op(op)}")
            if verbose:
                for i, element in enumerate(op.key.elements):
                    out(f"    key[{i}]: {element}")
    out(f"\nDone reading commits for ref '{ref}'\n")


def _describe_op(op: Operation) -> str:
    if isinstance(op, Put):
        return f"Put{{key={op.key}, content={op.content}}}"
    return f"{type(op).__name__}{{key={op.key}}}"


def read_refs(api: VersionStoreApi, limit: int, out: Out) -> None:
    out("Reading all references\n")
    refs: Iterable[ReferenceInfo] = _limited(api.list_references(), limit)
    for info in refs:
        kind = "Branch" if info.named_ref.kind is RefKind.BRANCH else "Tag"
        out(f"{kind}{{name={info.named_ref.name}, hash={info.hash}}}")
    out("\nDone reading all references\n")


def read_entries(
    api: VersionStoreApi, ref: str, hash_: str | None, with_content: bool, limit: int, verbose: bool, out: Out
) -> None:
    _, at = _commit_of(api, ref, hash_)
    out(f"Listing entries for reference '{ref}'.\n")
    entries: Iterable[KeyEntry] = _limited(api.get_entries(at, with_content=with_content), limit)
    for entry in entries:
        out(f"Key: {entry.key}")
        if verbose:
            for i, element in enumerate(entry.key.elements):
                out(f"  key[{i}]: {element}")
        from persist_spi.versionstore.nessie_json import content_type_name

        out(f"Type: {content_type_name(entry.payload)}")
        out(f"Content ID: {entry.content_id}")
        if entry.content is not None:
            out(f"Value: {entry.content}")
        out("")
    out("Done listing entries.")


def read_content(
    api: VersionStoreApi, ref: str, hash_: str | None, key: ContentKey, verbose: bool, out: Out
) -> None:
    named, at = _commit_of(api, ref, hash_)
    out(f"Reading content for key '{key}'\n")
    read = api.get_contents(at, [key])
    out(f"Content at '{named.name}@{read.hash}'")
    for found, content in read.contents.items():
        out(f"Key: {found}")
        if verbose:
            for i, element in enumerate(found.elements):
                out(f"  key[{i}]: {element}")
        out(f"Value: {content}")
    out(f"\nDone reading content for key '{key}'\n")


# --- bulk commands -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """Nessie's branch and key selectors for content-refresh and delete."""

    all_branches: bool = False
    ref: str | None = None
    key: tuple[str, ...] = ()
    recursive: bool = False
    input_file: Path | None = None
    input_format: str | None = None  # CSV_KEYS or CONTENT_INFO_JSON
    separator: str | None = None
    batch: int = 100


def _branch(api: VersionStoreApi, name: str | None) -> NamedRef:
    if name is None:
        return branch(api.default_branch())
    named = api.named_ref(name).named_ref
    if named.kind is not RefKind.BRANCH:
        raise InputError(f"Content can only be committed to branches: {name}")
    return named


def _batches(keys: Iterable[ContentKey], size: int) -> Iterator[list[ContentKey]]:
    iterator = iter(keys)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def selected_batches(
    api: VersionStoreApi, selection: Selection, reverse: bool
) -> Iterator[tuple[NamedRef, list[ContentKey]]]:
    """(branch, keys) batches the selectors name. ``reverse`` sorts listed keys in reverse first
    (children before their namespaces, for delete); that holds the whole listing in memory."""
    if selection.batch < 1:
        raise InputError("--batch must be at least 1")
    if selection.input_file is not None:
        yield from _file_batches(api, selection)
        return
    if selection.all_branches:
        branches = [r.named_ref for r in api.list_references((RefKind.BRANCH,))]
    else:
        branches = [_branch(api, selection.ref)]
    for target in branches:
        if selection.key and not selection.recursive:
            yield target, [ContentKey(selection.key)]
            continue
        prefix = ContentKey(selection.key) if selection.key else None
        keys: Iterable[ContentKey] = (e.key for e in api.get_entries(target, prefix_key=prefix))
        if reverse:
            keys = sorted(keys, reverse=True)
        for batch in _batches(keys, selection.batch):
            yield target, batch


def check_input(selection: Selection) -> None:
    """ValueError for an ``--input`` file this selection cannot read (missing, not UTF-8, a key or
    entry that does not parse), found by reading it once before anything is opened or recorded."""
    if selection.input_format == "CSV_KEYS":
        with _opened(selection) as lines:
            for _ in _csv_keys(lines, selection):
                pass
    else:
        _content_info(selection)


@contextlib.contextmanager
def _opened(selection: Selection) -> Iterator[TextIO]:
    path = selection.input_file
    assert path is not None
    if not path.exists():
        raise InputError(f"--input {path}: no such file")
    try:
        with path.open() as lines:
            yield lines
    except UnicodeDecodeError as e:
        raise InputError(f"--input {path}: not UTF-8 text ({e})") from None


def _csv_keys(lines: Iterable[str], selection: Selection) -> Iterator[ContentKey]:
    separator = selection.separator
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        text = line.rstrip("\n")
        try:
            yield ContentKey(tuple(text.split(separator))) if separator else ContentKey.from_path_string(text)
        except InputError as e:
            raise InputError(f"--input {selection.input_file} line {number}: {e}") from None


def _content_info(selection: Selection) -> list[tuple[str, ContentKey]]:
    if selection.input_format != "CONTENT_INFO_JSON":
        raise InputError("--format must be CSV_KEYS or CONTENT_INFO_JSON")
    with _opened(selection) as lines:
        text = lines.read()
    return content_info_entries(text, f"--input {selection.input_file}", selection.ref)


def _file_batches(api: VersionStoreApi, selection: Selection) -> Iterator[tuple[NamedRef, list[ContentKey]]]:
    if selection.input_format == "CSV_KEYS":
        with _opened(selection) as lines:
            target = _branch(api, selection.ref)
            for batch in _batches(_csv_keys(lines, selection), selection.batch):
                yield target, batch
        return
    entries = _content_info(selection)
    for chunk in [entries[i : i + selection.batch] for i in range(0, len(entries), selection.batch)]:
        per_ref: dict[str, list[ContentKey]] = {}
        for ref, key in chunk:
            per_ref.setdefault(ref, []).append(key)
        for ref, ref_keys in per_ref.items():
            named = api.named_ref(ref).named_ref
            if named.kind is RefKind.BRANCH:  # tags are skipped, as Nessie does
                yield named, ref_keys


def content_info_entries(text: str, source: str, ref: str | None = None) -> list[tuple[str, ContentKey]]:
    """The (reference, key) pairs of a CONTENT_INFO_JSON input (``--format``): a JSON array of
    Nessie's ContentInfoEntry objects, each with ``key.elements`` and ``reference`` (``ref``, when
    given, overrides every entry's). Raises ValueError naming ``source`` for anything else."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise InputError(f"{source}: not JSON ({e})") from None
    if not isinstance(doc, list):
        raise InputError(f"{source}: input data should be a JSON array of 'ContentInfoEntry' objects")
    entries = []
    for entry in doc:
        try:
            elements = entry["key"]["elements"]
            reference = ref or entry["reference"]
        except (KeyError, TypeError, IndexError):
            raise InputError(
                f"{source}: every entry needs key.elements and reference, got {entry!r}"
            ) from None
        if not isinstance(elements, list) or not all(isinstance(e, str) for e in elements):
            raise InputError(f"{source}: key.elements must be a list of strings, got {elements!r}")
        if not isinstance(reference, str) or not reference:
            raise InputError(f"{source}: reference must be a reference name, got {reference!r}")
        try:
            entries.append((reference, ContentKey(tuple(elements))))
        except InputError as e:
            raise InputError(f"{source}: {e}") from None
    return entries


def refresh(
    api: VersionStoreApi,
    selection: Selection,
    message: str | None,
    author: str | None,
    rec: Recorder,
    out: Out,
    progress: Progress | None = None,
) -> None:
    for target, keys in selected_batches(api, selection, reverse=False):
        read = api.get_contents(target, keys)
        if progress is not None:
            progress.advance(len(keys))
        if not read.contents:
            continue
        text = message or f"Refresh {len(read.contents)} key(s)"
        ops: list[Operation] = [Put(k, c) for k, c in read.contents.items()]
        with rec.measure(COMMIT, target.name, puts=len(ops)) as measured:
            result = api.commit(target, read.hash, _meta(text, author), ops)
            measured.commit_hash = str(result.hash)
        out(f"Refreshed {len(read.contents)} keys in {target.name} at commit {result.hash}")


def delete(
    api: VersionStoreApi,
    selection: Selection,
    message: str | None,
    author: str | None,
    rec: Recorder,
    out: Out,
    progress: Progress | None = None,
) -> None:
    for target, keys in selected_batches(api, selection, reverse=True):
        text = message or f"Delete {len(keys)} key(s)"
        ops: list[Operation] = [Delete(k) for k in keys]
        with rec.measure(COMMIT, target.name, puts=len(ops)) as measured:
            result = api.commit(target, None, _meta(text, author), ops)
            measured.commit_hash = str(result.hash)
        out(f"Deleted {len(keys)} keys in {target.name} at commit {result.hash}")
        if progress is not None:
            progress.advance(len(keys))


def copy(
    api: VersionStoreApi,
    ref: str | None,
    copies: int,
    source: ContentKey,
    patterns: Sequence[str],
    author: str | None,
    rec: Recorder,
    out: Out,
    progress: Progress | None = None,
) -> None:
    if copies < 1:
        raise InputError("--num-copies must be positive")
    target = _branch(api, ref)
    read = api.get_contents(target, [source])
    content = read.contents.get(source)
    if content is None:
        raise InputError(f"Key '{source}' not found on {target.name}")
    head = read.hash
    for i in range(copies):
        key = ContentKey(tuple(_format(p, i) for p in patterns))
        with rec.measure(COMMIT, target.name, puts=1) as measured:
            result = api.commit(target, head, _meta(f"Copy {i}", author), [Put(key, _without_id(content))])
            measured.commit_hash = str(result.hash)
        head = result.hash
        out(f"Created {key} at {head}")
        if progress is not None:
            progress.advance()


def _format(pattern: str, i: int) -> str:
    return pattern.replace("%d", str(i), 1) if "%d" in pattern else pattern


def _without_id(content: Content) -> Content:
    import dataclasses

    return dataclasses.replace(content, id=None)


def create_missing_namespaces(
    api: VersionStoreApi,
    branches: Sequence[str],
    author: str | None,
    verbose: bool,
    rec: Recorder,
    out: Out,
    err: Out,
) -> int:
    wanted = set(branches)
    not_found = set(branches)
    results: list[tuple[str, int, Exception | None]] = []
    for info in api.list_references((RefKind.BRANCH,)):
        name = info.named_ref.name
        if wanted and name not in wanted:
            continue
        not_found.discard(name)
        if verbose:
            out(f"  processing branch {name}...")
        try:
            existing: set[ContentKey] = set()
            parents: set[ContentKey] = set()
            for entry in api.get_entries(info.named_ref):
                if entry.payload == Namespace.PAYLOAD:
                    existing.add(entry.key)
                parents.update(ContentKey(entry.key.elements[:i]) for i in range(1, len(entry.key.elements)))
            missing = sorted(parents - existing)
            if missing:
                text = "Create namespaces " + ", ".join(str(k) for k in missing)
                ops: list[Operation] = [Put(k, Namespace(elements=k.elements)) for k in missing]
                with rec.measure(COMMIT, name, puts=len(ops)) as measured:
                    result = api.commit(info.named_ref, info.hash, _meta(text, author), ops)
                    measured.commit_hash = str(result.hash)
                if verbose:
                    out(f"    created {len(missing)} namespaces: {', '.join(map(str, missing))}")
            results.append((name, len(missing), None))
        except Exception as e:
            results.append((name, 0, e))
    failed = 0
    for name, _, error in sorted(results, key=lambda r: r[0]):
        if error is not None:
            failed += 1
            err(f"Failed to handle missing namespaces for branch {name}: {error}")
    created = sum(n for _, n, _ in results)
    status = 0
    if not_found:
        err(f"Could not find branch(es) {', '.join(sorted(not_found))} specified as command line arguments.")
        status = 1
    if failed:
        err(f"Processed {len(results)} branches, {failed} branches failed, created {created} namespaces.")
        return 1
    out(f"Successfully processed {len(results)} branches, created {created} namespaces.")
    return status


def _meta(message: str, author: str | None) -> CommitMeta:
    return CommitMeta(message, authors=(author,) if author else ())
