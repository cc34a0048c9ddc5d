"""PostgreSQL backend, and CockroachDB (which speaks PostgreSQL's protocol), through psycopg 3.

``adapter`` holds the adapter, ``statements`` the dialects and every SQL statement, ``schema``
creating and checking the tables, ``config`` URL and option parsing, ``errors`` the driver errors
mapped to lochkit's, ``connections`` and ``watchdog`` reusing healthy connections and cutting off
stalled statements, ``capabilities`` what the backend declares and ``factory`` the two entry
points. psycopg is imported only when an adapter is created.
"""

from backends.postgres.factory import CockroachBackendFactory, PostgresBackendFactory

__all__ = ["CockroachBackendFactory", "PostgresBackendFactory"]
