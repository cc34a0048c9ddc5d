"""The shared-database test: a real Nessie server and lochkit (``layout=nessie``) on one database.

- :mod:`~reliability.shared_db.steps`: the writes, over any version store API (REST or in-process);
- :mod:`~reliability.shared_db.facts`: what each side reads, gathered alike for comparison;
- :mod:`~reliability.shared_db.database`: one database both open, and how each side opens it;
- :mod:`~reliability.shared_db.scenario`: the directions (Nessie -> lochkit, lochkit -> Nessie,
  reverse order, concurrent) and their outcomes;
- :mod:`~reliability.shared_db.runner`: provisions a backend and runs them (``lochkit shared-db``).
"""
