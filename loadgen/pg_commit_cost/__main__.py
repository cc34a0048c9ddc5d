"""``python -m loadgen.pg_commit_cost``."""

from loadgen.pg_commit_cost.cli import main

raise SystemExit(main())
