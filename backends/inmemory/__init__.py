"""A thread-safe in-memory backend: the reference for how small an adapter can be.

``adapter`` holds the adapter, ``capabilities`` what it declares, ``factory`` the entry point.
"""

from backends.inmemory.factory import InMemoryBackendFactory

__all__ = ["InMemoryBackendFactory"]
