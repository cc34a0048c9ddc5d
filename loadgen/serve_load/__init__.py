"""``lochkit serve-load``: ``lochkit serve`` and the real Nessie server under Nessie's perf
simulations, side by side: the servers and their databases (:mod:`.servers`), the server's memory
and connections over time (:mod:`.sampling`), one target x users run and its figures
(:mod:`.cells`), and every cell with its table (:mod:`.comparison`)."""
