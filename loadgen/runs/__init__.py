"""Run output: the directory every load command leaves behind (``run.json`` + ``events.parquet``).

The format is a contract other tools read (the Spark reports, the locust scenarios); it is
documented, with its version, in ``docs/run-format.md``. Change it only together with that document
and :data:`SCHEMA_VERSION`.
"""

from loadgen.runs.events import EVENT_SCHEMA, Event, EventWriter
from loadgen.runs.run_dir import SCHEMA_VERSION, RunDirectory, default_run_dir, machine_facts

__all__ = [
    "EVENT_SCHEMA",
    "SCHEMA_VERSION",
    "Event",
    "EventWriter",
    "RunDirectory",
    "default_run_dir",
    "machine_facts",
]
