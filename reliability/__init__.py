"""The reliability campaign: what lochkit survives, and the tools that prove it.

- :mod:`reliability.consistency` checks a live repository (``lochkit check``);
- :mod:`reliability.linearizability` decides whether a history of compare-and-swaps is linearizable;
- :mod:`reliability.ledger` checks that every acknowledged commit is on its branch exactly once;
- crash injection, server faults, network faults (Toxiproxy) and fuzzing build on these, and
  :mod:`reliability.campaign` runs them all (``lochkit torture``).

It sits beside :mod:`conformance` (whose provisioning starts the servers it needs) and uses only
``persist_spi`` and the registered backends below it.
"""
