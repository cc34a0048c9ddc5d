"""Content values are JSON built by the C accelerator's encoder, made once: its bytes must be
exactly those of ``json.JSONEncoder(sort_keys=True, separators=(",", ":"))``, which content ids
and stored values were defined with."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from persist_spi.versionstore.content import _encode_json

_REFERENCE = json.JSONEncoder(sort_keys=True, separators=(",", ":"))

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_documents = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), _documents, max_size=8))
def test_the_reused_encoder_writes_what_the_reference_encoder_writes(doc: dict[str, Any]) -> None:
    assert _encode_json(doc) == _REFERENCE.encode(doc)


def test_non_ascii_and_control_characters_are_escaped_as_before() -> None:
    doc = {"z": "é\n\x00\u2028", "a": [1.5, None, True]}
    assert _encode_json(doc) == '{"a":[1.5,null,true],"z":"\\u00e9\\n\\u0000\\u2028"}'
