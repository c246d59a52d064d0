"""PostgreSQL ranks a query of fold-free words (Japanese, digits, ASCII punctuation) in the
``all`` mode itself: the same hits, in the same order, with the very same ranks as
:func:`~saimemory.all_match.rank_all` over the texts, however the texts around the words
fold; a query with another word is ranked from the texts as before."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saimemory import NewMessage
from saimemory.all_match import rank_all
from saimemory.search_terms import RANK_WINDOW, split_terms
from saimemory.sqlbase import SqlStore
from tests.saimemory.conftest import POSTGRES_DSN

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not POSTGRES_DSN, reason="SEA_TEST_POSTGRES_DSN is not set")]

FREE = "東京タワー猫5:0-%_\\"
TEXT = FREE + "aAsSßẞKk\u212aİi\u0307ｔＴΣσς "

WORDS = ("東京タワー", "タワー", "東京", "猫5:", "0-%", "_\\", "ーー")
pieces_st = st.one_of(st.text(TEXT, max_size=8), st.sampled_from(WORDS))
texts_st = st.lists(st.lists(pieces_st, min_size=1, max_size=6).map("".join).filter(bool),
                    min_size=1, max_size=25)
words_st = st.lists(st.one_of(st.sampled_from(WORDS), st.text(FREE, min_size=1, max_size=4)),
                    min_size=1, max_size=3, unique=True)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_st, words=words_st, limit=st.integers(1, 30))
def test_the_server_ranks_as_the_texts_do(
    pg: tuple[Any, str], texts: list[str], words: list[str], limit: int
) -> None:
    store: SqlStore = pg[0]
    persona = f"p{uuid.uuid4().hex[:12]}"
    store.append_many([NewMessage(persona, "user", text) for text in texts])
    terms = split_terms(" ".join(words))
    if not terms.indexed:
        return
    with store._read() as tx:
        expected = rank_all(terms, store._matches(tx, persona, terms, ("", []), RANK_WINDOW),
                            limit)
        assert store._rank_all(tx, persona, terms, ("", []), limit) == expected
    hits = store.search(persona, " ".join(words), limit=limit)
    assert [(hit.message.id, hit.rank) for hit in hits] == expected



def test_japanese_words_rank_on_the_server_as_from_the_texts(pg: tuple[Any, str]) -> None:
    store: SqlStore = pg[0]
    texts = ["東京タワー", "東京タワーと東京タワー、Straße", "ΣΟΦΙΑの東京タワー猫5:",
             "東京", "長い長い長い長い文章の中の東京タワー"] * 3
    store.append_many([NewMessage("aoi", "user", text) for text in texts])
    for query in ("東京タワー", "東京タワー 猫5:", "タワー 東京", "東京タ ワー"):
        terms = split_terms(query)
        with store._read() as tx:
            expected = rank_all(terms, store._matches(tx, "aoi", terms, ("", []), RANK_WINDOW),
                                7)
            assert store._rank_all(tx, "aoi", terms, ("", []), 7) == expected != []
