"""The command's two failures: one it refuses before starting anything, one of the server's."""

from __future__ import annotations

from persist_spi.errors import InputError, LochkitError


class CannotMeasure(InputError):
    """This command line or this machine cannot run the measurement; nothing was started."""


class MeasurementFailed(LochkitError):
    """The server did not do what the measurement set it up to do."""
