"""A reimplementation of Nessie's content generator (``nessie-content-generator``) over any
:class:`~persist_spi.versionstore.api.VersionStoreApi`: ``generate`` (synthetic commit load) and
the read and maintenance subcommands. The CLI lives in ``lochkit/commands/content_generator.py``."""
