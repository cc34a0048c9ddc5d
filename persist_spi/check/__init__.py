"""Is a live repository consistent? The checker behind ``lochkit check``, beside the logic it
checks: every reference's commit chain, every index, stripe, segment and value they point to, the
internal references against the reference rows, commit leases, and half-done reference changes
(which it can finish with the reads' own recovery).

- :mod:`persist_spi.check.consistency`: :class:`~persist_spi.check.consistency.RepositoryChecker`;
- :mod:`persist_spi.check.chains`: walking commit chains and their indexes;
- :mod:`persist_spi.check.findings`: what a check found, its report and exit codes;
- :mod:`persist_spi.check.probe`: reading objects so that an undecodable one is a finding.
"""
