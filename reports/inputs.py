"""Finding the report's inputs under the paths or URIs a user gives, and checking each one can be
read, before any table is computed.

A directory holding ``run.json`` is a load run, one holding ``inventory.json`` a storage inventory; a
``*.json`` file is a conformance report when it has a report's shape. Other directories are searched,
a few levels deep, so ``lochkit report .lochkit`` finds everything a working directory has collected.
JSON files found there that are no conformance report are left out (and named on the page); one given
by name is an error.

Local paths (and ``file:`` URIs) are read with plain Python (:class:`LocalFs`), so a bad input is
reported before Spark starts; any other URI (``hdfs:``, ``s3a:``...) through Hadoop's FileSystem API
(:class:`HadoopFs`) once Spark runs. Both answer the same few calls (:class:`FileSystem`).

Hook for the consistency checker: when ``lochkit check`` writes its Parquet output, give it a marker
file and add a branch to :func:`_classify_directory` that collects it into :attr:`Inputs.checks`;
the report's storage section can then join it by repository.
"""

from __future__ import annotations

import json
import os
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from conformance.matrix import is_report
from persist_spi.errors import InputError as LochkitInputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RUN_JSON: Final = "run.json"
EVENTS: Final = "events.parquet"
INVENTORY_JSON: Final = "inventory.json"
INVENTORY_TABLES: Final = ("objects", "references", "commits", "links")
#: Where ``lochkit generate --inventory`` puts the inventory inside a run directory.
RUN_INVENTORY_DIR: Final = "inventory"
#: How deep directories are searched below each input for runs, inventories and reports.
MAX_DEPTH: Final = 6
#: Directories never searched: Spark's and the report's own output, hidden tool directories.
SKIPPED_DIRS: Final = ("tables", "node_modules", "site-packages")
#: Versions this job reads.
RUN_FORMAT_VERSIONS: Final = (1,)
EVENT_SCHEMA_VERSIONS: Final = ("1",)
INVENTORY_VERSIONS: Final = (1,)
EVENTS_VERSION_KEY: Final = "lochkit.events.schema_version"
#: What the job takes, for error messages.
ACCEPTED: Final = (
    "give run directories (holding run.json), inventory directories (holding inventory.json), "
    "conformance reports (the JSON `lochkit conformance --report FILE` writes), or directories holding them"
)


class InputError(LochkitInputError):
    """An input cannot be used; the message names it and says what to do."""


@dataclass(frozen=True)
class Found:
    """One input: ``uri`` is an absolute local path or a fully qualified URI (``hdfs://...``),
    ``modified`` is the modification time in ms since the epoch."""

    uri: str
    name: str
    modified: int


@dataclass
class Inputs:
    runs: list[Found] = field(default_factory=list)
    inventories: list[Found] = field(default_factory=list)
    reports: list[Found] = field(default_factory=list)
    #: JSON files found in a searched directory that are no conformance report.
    ignored: list[Found] = field(default_factory=list)
    #: Consistency-checker output; nothing produces it yet.
    checks: list[Found] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"{len(self.runs)} load run(s), {len(self.inventories)} inventory(ies), "
            f"{len(self.reports)} conformance report(s)"
        )

    def extend(self, other: Inputs) -> None:
        self.runs += other.runs
        self.inventories += other.inventories
        self.reports += other.reports
        self.ignored += other.ignored
        self.checks += other.checks

    def empty(self) -> bool:
        return not (self.runs or self.inventories or self.reports)


@dataclass(frozen=True)
class Entry:
    """A file or directory as a :class:`FileSystem` lists it."""

    uri: str
    name: str
    is_dir: bool
    modified: int

    def found(self, name: str | None = None) -> Found:
        return Found(self.uri, name or self.name, self.modified)


class FileSystem(Protocol):
    def entry(self, uri: str) -> Entry | None:
        """The file or directory at ``uri``; None when there is none."""

    def entries(self, uri: str) -> list[Entry]:
        """The directory's children."""

    def read_text(self, uri: str) -> str: ...

    def parquet_metadata(self, uri: str) -> dict[str, str]:
        """The key-value metadata in a Parquet file's footer."""


def is_local(given: str) -> bool:
    """A path, or a ``file:`` URI (read without Spark)."""
    return urllib.parse.urlparse(given).scheme in ("", "file")


class LocalFs:
    """Local files, read with plain Python: an absolute path is an entry's uri."""

    @staticmethod
    def _path(uri: str) -> str:
        parsed = urllib.parse.urlparse(uri)
        if parsed.scheme == "file":
            return urllib.request.url2pathname(parsed.path)
        return os.path.abspath(uri)

    def _entry(self, path: str, stat: os.stat_result, is_dir: bool) -> Entry:
        return Entry(path, os.path.basename(path.rstrip(os.sep)) or path, is_dir, int(stat.st_mtime * 1000))

    def entry(self, uri: str) -> Entry | None:
        path = self._path(uri)
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise InputError(f"Cannot read {uri}: {e.strerror or e}") from None
        return self._entry(path, stat, os.path.isdir(path))

    def entries(self, uri: str) -> list[Entry]:
        path = self._path(uri)
        try:
            with os.scandir(path) as listing:
                return [self._entry(e.path, e.stat(), e.is_dir()) for e in listing]
        except OSError as e:
            raise InputError(f"Cannot list {uri}: {e.strerror or e}") from None

    def read_text(self, uri: str) -> str:
        with open(self._path(uri), encoding="utf-8") as f:
            return f.read()

    def parquet_metadata(self, uri: str) -> dict[str, str]:
        import pyarrow.parquet as pq

        metadata = pq.read_metadata(self._path(uri)).metadata or {}
        return {k.decode(): v.decode() for k, v in metadata.items()}


class HadoopFs:
    """The few FileSystem calls the job needs, through the session's JVM."""

    def __init__(self, spark: SparkSession) -> None:
        self._jvm: Any = spark._jvm
        self._conf: Any = spark._jsc.hadoopConfiguration()

    def path(self, uri: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(uri)

    def fs(self, path: Any) -> Any:
        return path.getFileSystem(self._conf)

    def status(self, uri: str) -> Any | None:
        path = self.path(uri)
        fs = self.fs(path)
        try:
            return fs.getFileStatus(path)
        except Exception as e:  # py4j wraps java.io.FileNotFoundException
            if "FileNotFoundException" in str(e):
                return None
            raise InputError(f"Cannot read {uri}: {_java_message(e)}") from None

    def children(self, path: Any) -> list[Any]:
        return list(self.fs(path).listStatus(path))

    @staticmethod
    def _entry(status: Any) -> Entry:
        path = status.getPath()
        return Entry(
            str(path.toString()),
            str(path.getName()),
            bool(status.isDirectory()),
            int(status.getModificationTime()),
        )

    def entry(self, uri: str) -> Entry | None:
        status = self.status(uri)
        return None if status is None else self._entry(status)

    def entries(self, uri: str) -> list[Entry]:
        return [self._entry(s) for s in self.children(self.path(uri))]

    def qualified(self, uri: str) -> str:
        path = self.path(uri)
        return str(self.fs(path).makeQualified(path).toString())

    def read_text(self, uri: str) -> str:
        path = self.path(uri)
        stream = self.fs(path).open(path)
        try:
            reader = self._jvm.java.io.BufferedReader(self._jvm.java.io.InputStreamReader(stream, "UTF-8"))
            return "\n".join(iter(reader.readLine, None))
        finally:
            stream.close()

    def write_text(self, uri: str, text: str) -> None:
        path = self.path(uri)
        stream = self.fs(path).create(path, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def delete(self, uri: str) -> None:
        path = self.path(uri)
        self.fs(path).delete(path, True)

    def rename(self, source: str, target: str) -> None:
        src = self.path(source)
        fs = self.fs(src)
        dst = self.path(target)
        fs.delete(dst, True)
        if not fs.rename(src, dst):
            raise OSError(f"Could not move {source} to {target}")

    def parquet_metadata(self, uri: str) -> dict[str, str]:
        """The key-value metadata in a Parquet file's footer."""
        jvm = self._jvm
        hadoop_file = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(self.path(uri), self._conf)
        reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(hadoop_file)
        try:
            return dict(reader.getFooter().getFileMetaData().getKeyValueMetaData())
        finally:
            reader.close()


def _java_message(error: Exception) -> str:
    text = str(error)
    for line in text.splitlines():
        if "Exception:" in line:
            return line.split("Exception:", 1)[1].strip() or line.strip()
    return text.splitlines()[0] if text else type(error).__name__


def discover(fs: FileSystem, paths: list[str]) -> Inputs:
    """Every run, inventory and conformance report under ``paths``, each checked (see
    :func:`check_run`, :func:`check_inventory`, :func:`report_problem`)."""
    inputs = Inputs()
    for given in paths:
        entry = fs.entry(given)
        if entry is None:
            raise InputError(f"Input {given} does not exist; {ACCEPTED}")
        if entry.is_dir:
            _classify_directory(fs, entry, inputs, depth=0)
        else:
            _classify_file(fs, given, entry, inputs)
    return inputs


def require_some(inputs: Inputs, paths: list[str]) -> None:
    """An :class:`InputError` when ``inputs`` holds nothing to report on."""
    if not inputs.empty():
        return
    ignored = ""
    if inputs.ignored:
        names = ", ".join(f.name for f in inputs.ignored[:5]) + (", ..." if len(inputs.ignored) > 5 else "")
        ignored = f" ({len(inputs.ignored)} JSON file(s) there are no conformance report: {names})"
    raise InputError(
        f"No load run, inventory or conformance report under {', '.join(paths)}{ignored}; a run "
        f"directory holds run.json, an inventory inventory.json; {ACCEPTED}"
    )


def _classify_file(fs: FileSystem, given: str, entry: Entry, inputs: Inputs) -> None:
    if entry.name in (RUN_JSON, INVENTORY_JSON):
        raise InputError(f"Input {given}: give the directory that holds {entry.name}, not the file")
    if entry.name.endswith(".json"):
        problem = report_problem(fs, entry.uri)
        if problem:
            raise InputError(f"Input {given} is not a conformance report: {problem}; {ACCEPTED}")
        inputs.reports.append(entry.found())
        return
    raise InputError(
        f"Input {given} is not a run directory, an inventory directory or a JSON file; {ACCEPTED}"
    )


def _classify_directory(fs: FileSystem, directory: Entry, inputs: Inputs, depth: int) -> None:
    entries = fs.entries(directory.uri)
    names = {e.name for e in entries}
    if RUN_JSON in names:
        check_run(fs, directory.uri)
        inputs.runs.append(directory.found())
        # `lochkit generate --inventory` leaves the repository's inventory inside the run directory.
        for entry in entries:
            if (
                entry.is_dir
                and entry.name == RUN_INVENTORY_DIR
                and INVENTORY_JSON in {e.name for e in fs.entries(entry.uri)}
            ):
                check_inventory(fs, entry.uri)
                inputs.inventories.append(entry.found(f"{directory.name}-inventory"))
        return
    if INVENTORY_JSON in names:
        check_inventory(fs, directory.uri)
        inputs.inventories.append(directory.found())
        return
    if depth >= MAX_DEPTH:
        return
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.is_dir:
            if entry.name not in SKIPPED_DIRS and not entry.name.startswith((".", "_")):
                _classify_directory(fs, entry, inputs, depth + 1)
        elif entry.name.endswith(".json"):
            (inputs.ignored if report_problem(fs, entry.uri) else inputs.reports).append(entry.found())


def _json(fs: FileSystem, uri: str) -> Any:
    """The parsed document; an :class:`InputError` (with the reason) when it is not JSON."""
    try:
        return json.loads(fs.read_text(uri))
    except UnicodeDecodeError as e:
        raise InputError(f"not text ({e.reason})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON ({e.msg}, line {e.lineno})") from None


def _schema_version(fs: FileSystem, directory: str, name: str, what: str, remedy: str) -> object:
    """``schema_version`` of the JSON document ``name`` in ``directory`` (None when it has none);
    an :class:`InputError` naming ``what`` and the ``remedy`` when it is no JSON."""
    try:
        doc = _json(fs, f"{directory}/{name}")
    except InputError as e:
        raise InputError(f"{what}: {name} is {e}; {remedy}") from None
    return doc.get("schema_version") if isinstance(doc, dict) else None


def report_problem(fs: FileSystem, uri: str) -> str | None:
    """Why the JSON file at ``uri`` is no conformance report, or None when it is one."""
    try:
        doc = _json(fs, uri)
    except InputError as e:
        return str(e)
    if isinstance(doc, dict) and doc and is_report(doc):
        return None
    kind = "an object" if isinstance(doc, dict) else "a list" if isinstance(doc, list) else type(doc).__name__
    return (
        f"it holds {kind}"
        + (" with no backend" if doc == {} else "")
        + ", a conformance report maps each backend to its areas ({backend: {areas: ...}})"
    )


def check_run(fs: FileSystem, run: str) -> None:
    """The run directory's run.json and events.parquet are versions this job reads."""
    version = _schema_version(fs, run, RUN_JSON, f"Run {run}", "the run directory is damaged")
    if version not in RUN_FORMAT_VERSIONS:
        raise InputError(
            f"Run {run}: run.json has schema_version {version!r}, this lochkit reads "
            f"{', '.join(map(str, RUN_FORMAT_VERSIONS))}. Use the lochkit version that wrote the run "
            "(its lochkit_version field says which), or upgrade lochkit"
        )
    events = f"{run}/{EVENTS}"
    if fs.entry(events) is None:
        raise InputError(f"Run {run} has no {EVENTS}; it was not written by a load command")
    try:
        events_version = fs.parquet_metadata(events).get(EVENTS_VERSION_KEY)
    except Exception as e:  # pyarrow's or Hadoop's own error for a file that is no Parquet
        raise InputError(f"Run {run}: {EVENTS} is not a readable Parquet file ({e})") from None
    if events_version not in EVENT_SCHEMA_VERSIONS:
        raise InputError(
            f"Run {run}: {EVENTS} has event schema version {events_version!r} "
            f"({EVENTS_VERSION_KEY} in its Parquet metadata), this lochkit reads "
            f"{', '.join(EVENT_SCHEMA_VERSIONS)}; upgrade lochkit"
        )


def check_inventory(fs: FileSystem, inventory: str) -> None:
    """The inventory's inventory.json is a version this job reads, and its tables are there."""
    version = _schema_version(
        fs, inventory, INVENTORY_JSON, f"Inventory {inventory}", "run `lochkit inventory` again"
    )
    if version not in INVENTORY_VERSIONS:
        raise InputError(
            f"Inventory {inventory}: inventory.json has schema_version {version!r}, this lochkit "
            f"reads {', '.join(map(str, INVENTORY_VERSIONS))}; run `lochkit inventory` again with "
            "this version, or upgrade lochkit"
        )
    missing = [t for t in INVENTORY_TABLES if fs.entry(f"{inventory}/{t}.parquet") is None]
    if missing:
        raise InputError(
            f"Inventory {inventory} has no {', '.join(f'{t}.parquet' for t in missing)}; "
            "run `lochkit inventory` again"
        )
