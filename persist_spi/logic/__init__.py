"""The logic every backend shares, built only on the Persist contract: indexes of commits, commits
(building, ids, conflicts, storing with index spilling), retries, references with crash recovery,
repository initialisation, log, diff and merge base."""
