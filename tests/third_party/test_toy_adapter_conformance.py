"""The toy SQLite adapter gets the whole conformance suite through one import."""

from conformance.all import *  # noqa: F403
