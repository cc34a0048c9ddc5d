"""Apache Cassandra and ScyllaDB backend through cassandra-driver.

``adapter`` holds the adapter, ``statements`` every CQL statement, ``schema`` the keyspace, the
tables and their checks, ``config`` URL parsing, ``errors`` the driver's errors mapped to
lochkit's, ``capabilities`` what the backend declares and ``factory`` the two entry points.
cassandra-driver is imported only when an adapter is created.
"""

from backends.cassandra.factory import CassandraBackendFactory, ScyllaBackendFactory

__all__ = ["CassandraBackendFactory", "ScyllaBackendFactory"]
