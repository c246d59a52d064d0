"""The index keys of short words: every one- and two-character piece of a message's text.

A trigram index cannot find a word shorter than three characters (猫, 東京, "ok"): it has
no trigram to look up. Both stores therefore index the pieces of one and two characters of
each message (without whitespace, which a search word never holds), so a short word is
found by looking its one piece up instead of reading the persona's messages. PostgreSQL
keeps the pieces themselves in a GIN index (migration 8); SQLite keeps the keys made
here in a second FTS5 index.

A key spells its piece's code points in hexadecimal (``g6e`` for "n", ``g6ex6f`` for
"no"): plain ASCII letters and digits that any FTS5 tokenizer keeps whole, whatever the
piece holds (punctuation, emoji, CJK). Text is folded the way SQLite's ``LIKE`` folds it
(ASCII letters only), so a message has a word's key exactly when ``LIKE '%word%'`` holds.
"""

from __future__ import annotations

import string
from collections.abc import Iterable

from saimemory.search_terms import MIN_INDEXED_CHARS

SHORT_MAX = MIN_INDEXED_CHARS - 1
"""The longest word (and piece) the keys are made for."""

_ASCII_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def fold(text: str) -> str:
    """``text`` with ASCII letters in lower case, as SQLite's ``LIKE`` compares them."""
    return text.translate(_ASCII_FOLD)


def _code(char: str) -> str:
    return format(ord(char), "x")


def short_keys(text: str | None) -> str:
    """The keys of every piece of ``text`` of one or two characters without whitespace,
    each once, separated by spaces (what the index is given for a message)."""
    if not text:
        return ""
    folded = fold(text)
    codes = {char: _code(char) for char in set(folded) if not char.isspace()}
    pairs = {
        f"{codes[first]}x{codes[second]}"
        for first, second in set(zip(folded, folded[1:], strict=False))
        if first in codes and second in codes
    }
    pairs.update(codes.values())
    return "g" + " g".join(pairs) if pairs else ""


def word_key(word: str) -> str:
    """The key of a short word (one or two characters, no whitespace).

    Raises:
        ValueError: the word is empty, longer than :data:`SHORT_MAX` or holds whitespace.
    """
    if not 0 < len(word) <= SHORT_MAX or any(char.isspace() for char in word):
        raise ValueError(f"not a short word: {word!r}")
    return "g" + "x".join(_code(char) for char in fold(word))


def keys_query(words: Iterable[str], *, any_word: bool) -> str:
    """An FTS5 MATCH expression over the keys of short ``words``: all of them, or (with
    ``any_word``) one suffices."""
    joiner = " OR " if any_word else " AND "
    return joiner.join(f'"{word_key(word)}"' for word in words)
