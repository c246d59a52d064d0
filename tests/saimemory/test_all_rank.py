"""The ``all`` mode's rank counts a word's occurrences in the casefolded text; a word that
casefolding cannot touch is counted in the text itself, with the same result."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from saimemory.all_match import K1, B, fold_free, relevance
from saimemory.search_terms import Terms

ALPHABET = "aAsSßẞKk\u212a東京タワーメッセージ5:0 .İi\u0307"
"""Letters whose folding changes length or meets other letters (ß → ss, the Kelvin sign →
k, İ → i̇), CJK, digits, punctuation and a space."""


def defined(contents: list[str], terms: Terms) -> list[float]:
    """The rank as the module text defines it: every text casefolded, every word counted."""
    if not contents:
        return []
    average = max(1.0, sum(len(content) for content in contents) / len(contents))
    ranks = []
    for content in contents:
        folded = content.casefold()
        norm = K1 * (1.0 - B) + K1 * B / average * len(content)
        rank = 0.0
        for word in (term.casefold() for term in terms.all):
            tf = folded.count(word)
            if tf:
                rank += tf * (K1 + 1.0) / (tf + norm)
        ranks.append(rank)
    return ranks


def test_casefolding_never_makes_or_changes_a_fold_free_character() -> None:
    """Every code point: the ones casefolding changes (a character it leaves alone can
    neither be changed nor make another) are not fold-free, nor is any they fold into."""
    changed = [chr(code) for code in range(sys.maxunicode + 1)
               if chr(code).casefold() != chr(code)]
    assert len(changed) > 1000  # the letters of many scripts, ß, the Kelvin sign...
    for char in changed:
        assert not fold_free(char), hex(ord(char))
        assert not any(fold_free(piece) for piece in char.casefold()), hex(ord(char))


@settings(max_examples=500)
@given(
    st.lists(st.text(ALPHABET, min_size=1, max_size=30), min_size=1, max_size=12),
    st.lists(st.text(ALPHABET.replace(" ", ""), min_size=1, max_size=4), min_size=1,
             max_size=3, unique=True),
)
def test_the_rank_is_the_one_defined(contents: list[str], words: list[str]) -> None:
    terms = Terms(tuple(words), ())
    assert relevance(contents, terms) == defined(contents, terms)


def test_a_japanese_word_is_counted_without_folding_the_text() -> None:
    assert fold_free("東京タワー") and fold_free("メッセージ505000:")
    assert not fold_free("Tokyo") and not fold_free("ｔｏｋｙｏ")  # full-width letters fold
    contents = ["東京タワーと東京タワー", "Straße 東京タワー", "ẞ"]
    assert relevance(contents, Terms(("東京タワー",), ())) == defined(
        contents, Terms(("東京タワー",), ()))
