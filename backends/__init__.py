"""Backend adapters shipped with lochkit. Each module is one database; each registers a factory
under the ``lochkit.backends`` entry point group (see ``pyproject.toml``)."""
