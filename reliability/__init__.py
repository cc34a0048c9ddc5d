"""The reliability campaign: what lochkit survives, and the tools that prove it.

- :mod:`reliability.linearizability` decides whether a history of compare-and-swaps is linearizable;
- :mod:`reliability.ledger` checks that every acknowledged commit is on its branch exactly once;
- crash injection, server faults, network faults (Toxiproxy) and fuzzing build on these, and
  :mod:`reliability.campaign` runs them all (``lochkit torture``), and checks every repository it
  wrote with :mod:`persist_spi.check` (the checker behind ``lochkit check``).

It uses :mod:`provisioning` to start the servers it restarts and breaks, the suite's sample objects
and the load tools' decoders (to fuzz them), ``persist_spi`` and the registered backends.
"""
