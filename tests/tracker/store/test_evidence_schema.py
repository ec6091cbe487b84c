"""tracker.store.evidence_schema's lone-surrogate check: the fast path (the C encoder over the whole document) and the
walk agree on every document, and the reason names the surrogate."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.store.evidence_schema import lone_surrogate

surrogates = st.integers(0xD800, 0xDFFF).map(chr)
texts = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=6) | st.builds(
    lambda a, s, b: a + s + b, st.text(max_size=3), surrogates, st.text(max_size=3)
)
documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


def walk_finds(doc: object) -> bool:
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


@settings(max_examples=400, deadline=None)
@given(documents)
def test_the_fast_check_and_the_walk_agree(doc: object) -> None:
    data = json.dumps(doc).encode("ascii")  # ensure_ascii: every surrogate as an escape, as the store holds them
    found = lone_surrogate(data, json.loads(data))
    assert (found is not None) == walk_finds(doc)
    if found is not None:
        assert found.startswith("holds text that is not valid Unicode (a lone surrogate, '\\ud")


def test_a_pair_of_escapes_is_one_character_and_no_lone_one() -> None:
    data = b'{"t": "\\ud83d\\ude00", "k\\udc80": 1}'
    assert lone_surrogate(data, json.loads(data)) is not None  # the key's lone half
    ok = b'{"t": ["\\ud83d\\ude00"]}'
    assert lone_surrogate(ok, json.loads(ok)) is None


def test_a_document_too_deep_for_the_encoder_is_walked() -> None:
    deep: object = "\udc80"
    for _ in range(5000):
        deep = [deep]
    assert lone_surrogate(b"\\udc80", deep) is not None


def test_a_surrogate_written_raw_is_found_as_one_escaped() -> None:
    # json.loads decodes bytes with "surrogatepass": a surrogate encoded raw (ED A0 80 in UTF-8, or an unpaired
    # half in a UTF-16 file) parses to the same lone half as the escape, with no "\\ud" in the bytes to look at.
    raw_utf8 = b'{"test": "a\xed\xa0\x80b"}'
    utf16 = b"\xff\xfe" + '{"test": "a'.encode("utf-16-le") + b"\x00\xd8" + '"}'.encode("utf-16-le")
    for data in (raw_utf8, utf16):
        doc = json.loads(data)
        assert "\ud800" in doc["test"]
        found = lone_surrogate(data, doc)
        assert found is not None and "'\\ud800'" in found
    hangul = '{"test": "힣 퀀"}'.encode()  # ED 9E A3: a real character, no surrogate
    assert lone_surrogate(hangul, json.loads(hangul)) is None
