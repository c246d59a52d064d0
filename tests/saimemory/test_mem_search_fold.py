"""Words that casefolding cannot touch (CJK, digits, ASCII punctuation) are found exactly where
they occur in the text, on both backends, however the texts around them fold; PostgreSQL
looks them up with ``LIKE`` rather than ``ILIKE``, which the server's own lower case must
allow."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saimemory import NewMessage
from saimemory.all_match import fold_free
from saimemory.errors import InvalidQueryError
from saimemory.postgres import holds_word
from saimemory.search_terms import split_terms
from saimemory.sqlbase import SqlStore
from tests.saimemory.conftest import POSTGRES_DSN

FREE = "東京タワー猫5:0-"
"""Characters casefolding cannot touch."""
TEXT = FREE + "aAsSßẞKk\u212aİi\u0307ｔＴ "
"""Those, and letters whose folding changes length or meets other letters (ß → ss, the
Kelvin sign → k, İ → i̇, full-width letters), and a space."""

texts_st = st.lists(st.text(TEXT, min_size=1, max_size=20), min_size=1, max_size=20)
words_st = st.lists(st.text(FREE, min_size=3, max_size=5), min_size=1, max_size=2, unique=True)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_st, words=words_st)
def test_a_fold_free_word_is_found_exactly_where_it_occurs(
    store: SqlStore, texts: list[str], words: list[str]
) -> None:
    persona = f"p{uuid.uuid4().hex[:12]}"
    stored = store.append_many([NewMessage(persona, "user", text) for text in texts])
    query = " ".join(words)
    for match, joined in (("all", all), ("any", any)):
        try:  # the any mode strips punctuation and cuts CJK into trigrams
            terms = split_terms(query, match)
        except InvalidQueryError:
            continue
        # in the any mode, short words add no candidates to those of longer words
        finding = terms.indexed if match == "any" and terms.indexed else terms.all
        hits = {h.message.id for h in store.search(persona, query, match=match, limit=100)}
        assert hits == {m.id for m in stored
                        if joined(word in m.content for word in finding)}, (match, terms)


def test_only_a_fold_free_word_is_looked_up_with_like() -> None:
    assert holds_word("東京タワー").startswith("m.content LIKE ")
    assert holds_word("505000:").startswith("m.content LIKE ")
    assert holds_word("Tokyo").startswith("m.lower_content LIKE lower(")
    assert holds_word("ｔｏｋｙｏ").startswith("m.lower_content LIKE lower(")
    assert holds_word("Tokyo", planning=True).startswith("m.content ILIKE ")
    assert holds_word("東京タワー", planning=True).startswith("m.content LIKE ")


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_the_servers_lower_case_never_makes_or_changes_a_fold_free_character(
    pg: tuple[Any, str],
) -> None:
    # ILIKE is LIKE over lower(): it finds a fold-free word where LIKE does as long as no
    # character lowers into one of the word's characters and none of them lowers
    store, _ = pg
    with store._read() as tx:  # the server's lower(), in its own locale
        lowered = tx.fetch(
            "SELECT i, lower(chr(i)) FROM generate_series(1, ?) AS i "
            "WHERE (i < 55296 OR i > 57343) AND lower(chr(i)) <> chr(i)", (sys.maxunicode,))
    assert lowered  # the locale does lower letters
    for code, text in lowered:
        assert not fold_free(chr(code)), hex(code)
        assert not any(fold_free(char) for char in text), hex(code)
