"""lochkit's own conformance run: every suite against each backend named by ``--backend``."""

from conformance.all import *  # noqa: F403
