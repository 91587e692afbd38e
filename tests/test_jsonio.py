"""The bounded JSON parser's nesting bound (issue 14 item 10): the depth is measured on the
parsed document, a level of containers at a time, and a document deeper than the
interpreter can parse is refused in the same words."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudecide.errors import InputError
from gpudecide.jsonio import MAX_DEPTH, _deeper_than, loads_bounded


def _depth(doc: Any) -> int:
    """The reference: nesting depth by recursion (fine for the small documents drawn)."""
    if isinstance(doc, dict):
        return 1 + max(map(_depth, doc.values()), default=0)
    if isinstance(doc, list):
        return 1 + max(map(_depth, doc), default=0)
    return 0


def _nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize("depth", [0, 1, MAX_DEPTH - 1, MAX_DEPTH])
def test_a_document_as_deep_as_the_bound_is_read(depth: int) -> None:
    doc = loads_bounded(_nested(depth), "f.json")
    assert _depth(doc) == depth


@pytest.mark.parametrize(
    "text",
    [
        _nested(MAX_DEPTH + 1),
        _nested(MAX_DEPTH + 1, ""),
        '{"a": ' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1),
        # far deeper than json's C parser recurses: its RecursionError, the same words
        _nested(200_000),
        # the deep branch last, behind shallow siblings
        "[1, [2], {}, " + _nested(MAX_DEPTH) + "]",
    ],
    ids=["bound+1", "empty", "objects", "200k", "last-branch"],
)
def test_a_deeper_document_is_refused_naming_the_file(text: str) -> None:
    with pytest.raises(InputError) as raised:
        loads_bounded(text, "f.json")
    assert f"nested deeper than {MAX_DEPTH} levels" in str(raised.value)
    assert "f.json" in str(raised.value)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=40,
)


@given(_json, st.integers(0, 8))
def test_the_level_walk_agrees_with_recursion(doc: Any, limit: int) -> None:
    assert _deeper_than(doc, limit) == (_depth(doc) > limit)
    text = json.dumps(doc)
    if _depth(doc) <= MAX_DEPTH:
        assert loads_bounded(text, "f.json") == doc
