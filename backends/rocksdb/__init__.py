"""RocksDB backend (embedded, durable) through rocksdict.

``adapter`` holds the adapter, ``statements`` the key and value layout, ``config`` the URL,
``schema`` what makes a directory a lochkit store, ``capabilities`` what the backend declares and
``factory`` the entry point. rocksdict is imported only when an adapter is created.
"""

from backends.rocksdb.factory import RocksDBBackendFactory

__all__ = ["RocksDBBackendFactory"]
