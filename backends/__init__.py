"""Backend adapters shipped with lochkit: one package per database, each registering its factory
under the ``lochkit.backends`` entry point group (see ``pyproject.toml``).

Every package uses the same module names for the same jobs: ``adapter`` (the
:class:`~persist_spi.adapter.BackendAdapter`), ``capabilities`` (what it declares, importable
without the database's driver), ``factory`` (the entry point, re-exported by the package),
``config`` (URL and options), ``errors`` (driver errors to lochkit's), ``schema`` (tables or
collections, created and checked) and ``statements`` (what is sent for a row: statement text, or
the key, document or item a row becomes). A package has only the modules its database needs.
"""
