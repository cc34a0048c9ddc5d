"""Finding the report's inputs under the paths or URIs a user gives, through Hadoop's FileSystem API
(so ``file:``, ``hdfs:``, ``s3a:`` and anything else Spark reads work alike).

A directory holding ``run.json`` is a load run, one holding ``inventory.json`` a storage inventory; any
other ``*.json`` file is a candidate conformance report (kept only if it parses as one). Other
directories are searched, a few levels deep, so ``lochkit report .lochkit`` finds everything a
working directory has collected.

Hook for the consistency checker (issue 14): when ``lochkit check`` writes its Parquet output, give
it a marker file and add a branch to :func:`_classify_directory` that collects it into
:attr:`Inputs.checks`; the report's storage section can then join it by repository.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RUN_JSON: Final = "run.json"
EVENTS: Final = "events.parquet"
INVENTORY_JSON: Final = "inventory.json"
#: Where ``lochkit generate --inventory`` puts the inventory inside a run directory.
RUN_INVENTORY_DIR: Final = "inventory"
#: How deep directories are searched below each input for runs, inventories and reports.
MAX_DEPTH: Final = 6
#: Directories never searched: Spark's and the report's own output, hidden tool directories.
SKIPPED_DIRS: Final = ("tables", "node_modules", "site-packages")


class InputError(ValueError):
    """An input cannot be used; the message names it and says what to do."""


@dataclass(frozen=True)
class Found:
    """One input: ``uri`` is fully qualified (``file:/...``, ``hdfs://...``), ``modified`` is the
    modification time in ms since the epoch."""

    uri: str
    name: str
    modified: int


@dataclass
class Inputs:
    runs: list[Found] = field(default_factory=list)
    inventories: list[Found] = field(default_factory=list)
    reports: list[Found] = field(default_factory=list)
    #: Consistency-checker output (issue 14); nothing produces it yet.
    checks: list[Found] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"{len(self.runs)} load run(s), {len(self.inventories)} inventory(ies), "
            f"{len(self.reports)} candidate conformance report(s)"
        )


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


def _found(status: Any) -> Found:
    path = status.getPath()
    return Found(str(path.toString()), str(path.getName()), int(status.getModificationTime()))


def discover(spark: SparkSession, paths: list[str]) -> Inputs:
    """Every run, inventory and candidate conformance report under ``paths``."""
    hfs = HadoopFs(spark)
    inputs = Inputs()
    for given in paths:
        status = hfs.status(given)
        if status is None:
            raise InputError(
                f"Input {given} does not exist; give a run directory, an inventory, a "
                "conformance report (.json) or a directory holding them"
            )
        if status.isDirectory():
            _classify_directory(hfs, status, inputs, depth=0)
        else:
            _classify_file(given, _found(status), inputs)
    return inputs


def _classify_file(given: str, found: Found, inputs: Inputs) -> None:
    if found.name in (RUN_JSON, INVENTORY_JSON):
        raise InputError(f"Input {given}: give the directory that holds {found.name}, not the file")
    if found.name.endswith(".json"):
        inputs.reports.append(found)
        return
    raise InputError(
        f"Input {given} is not a run directory, an inventory directory or a conformance report (.json)"
    )


def _classify_directory(hfs: HadoopFs, status: Any, inputs: Inputs, depth: int) -> None:
    entries = hfs.children(status.getPath())
    names = {str(e.getPath().getName()) for e in entries}
    if RUN_JSON in names:
        inputs.runs.append(_found(status))
        # `lochkit generate --inventory` leaves the repository's inventory inside the run directory.
        for entry in entries:
            if entry.isDirectory() and str(entry.getPath().getName()) == RUN_INVENTORY_DIR:
                inside = {str(e.getPath().getName()) for e in hfs.children(entry.getPath())}
                if INVENTORY_JSON in inside:
                    found = _found(entry)
                    run_name = str(status.getPath().getName())
                    inputs.inventories.append(Found(found.uri, f"{run_name}-inventory", found.modified))
        return
    if INVENTORY_JSON in names:
        inputs.inventories.append(_found(status))
        return
    if depth >= MAX_DEPTH:
        return
    for entry in sorted(entries, key=lambda e: str(e.getPath().getName())):
        name = str(entry.getPath().getName())
        if entry.isDirectory():
            if name not in SKIPPED_DIRS and not name.startswith((".", "_")):
                _classify_directory(hfs, entry, inputs, depth + 1)
        elif name.endswith(".json"):
            inputs.reports.append(_found(entry))
