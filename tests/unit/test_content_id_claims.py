"""Claiming a content id gives up, with a clear error, when the backend refuses every fresh id."""

from __future__ import annotations

import pytest

from persist_spi.objs import Obj
from persist_spi.versionstore.committing import MAX_CONTENT_ID_CLAIMS, claim_content_id
from persist_spi.versionstore.errors import ContentIdClaimFailed


class _Refusing:
    """A stand-in whose insert-if-absent says "already present" to everything (a broken backend)."""

    def __init__(self, accept_after: int | None = None) -> None:
        self.calls = 0
        self.accept_after = accept_after

    def store_obj(self, obj: Obj) -> bool:
        self.calls += 1
        return self.accept_after is not None and self.calls > self.accept_after


def test_a_backend_that_refuses_every_id_gets_a_clear_error() -> None:
    persist = _Refusing()
    with pytest.raises(ContentIdClaimFailed, match="check the adapter's insert_objs"):
        claim_content_id(persist)  # type: ignore[arg-type]
    assert persist.calls == MAX_CONTENT_ID_CLAIMS


def test_an_id_taken_by_chance_is_retried() -> None:
    persist = _Refusing(accept_after=2)
    assert len(claim_content_id(persist)) == 36  # type: ignore[arg-type]
    assert persist.calls == 3
