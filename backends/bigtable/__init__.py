"""Bigtable backend (Cloud Bigtable or Google's emulator) through Google's generated gRPC clients.

``adapter`` holds the adapter, ``statements`` the row keys and cells rows become, ``messages`` the
Data API requests and the merging of read streams, ``schema`` creating and checking the tables,
``config`` URL parsing and the clients, ``errors`` Google's API errors mapped to lochkit's,
``capabilities`` what the backend declares and ``factory`` the entry point. Only the adapter and
the modules it imports need the client library, and only the factory imports the adapter, when one
is created.
"""

from backends.bigtable.factory import BigtableBackendFactory

__all__ = ["BigtableBackendFactory"]
