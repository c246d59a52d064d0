"""The ``<system>`` trust marker: provenance decides trust, not text.

A user-role ``<system>…</system>`` message means "the engine says": a gathering playbook's
memo for the speaker, a node's prompt, a tool result note, a retry instruction. Only text the
engine itself wrote may carry the marker: a template's own literal text, and the engine's
fixed instructions. Text that came from anywhere else (typed input, a value substituted into
a template, a tool's result, a file's content, a model's answer, an imported conversation)
has its tags neutralized before it reaches a model. The stored original is kept as it was;
neutralizing happens where text is put into a memo or a prompt, and where the context builder
reads a stored message that the engine did not write (:data:`saimemory.records.ENGINE_MEMO`).

One detector decides what is a tag, reading text the way a model would read it: each
character is folded on its own (NFKD compatibility forms, case folding, combining marks,
format and other invisible characters dropped, look-alike letters, brackets and slashes
mapped to their Latin forms, every kind of whitespace a space). A tag is an *opening
bracket* followed, after only spaces, invisible characters and at most one ``/``, by the
word ``system`` (a letter, digit or ``_`` right after it makes another word, as in
``<systematic>``). Attributes do not matter, nor does a closing bracket: the opening bracket
alone makes the tag.

Neutralizing replaces the opening bracket, and the first closing bracket after the word
(unless another opening bracket comes first), with ``‹`` and ``›``, which the detector
itself never reads as brackets. Since the fold is per character and only brackets change,
a neutralized text holds no tag at all, so :func:`neutralize` reaches its fixed point in
one pass (``<sys<system>tem>`` becomes ``<sys‹system›tem>``, which holds no tag). The scan
is linear: each character is read by at most one tag's look-ahead (the one of the last
opening bracket before it), and a text without any opening bracket is settled by a plain
search for each of the few characters that fold to one, with no regular expression. ASCII
text, where each character but the invisible controls is its own fold, is read by looking
back from each ``system`` instead of folding every character.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

_OPEN = "\u2039"  # ‹
_CLOSE = "\u203a"  # ›
_WORD = "system"

# Look-alikes that compatibility normalization leaves apart; each maps to the Latin
# character a model would read. ``‹`` and ``›`` are left out on purpose: they are the
# neutralized brackets.
_LOOKALIKES: dict[str, str] = {
    # opening and closing angle brackets
    **dict.fromkeys("\u02c2\u1438\u2329\u3008\u27e8\u276c\u276e\u2770\u29fc\ufe64\uff1c", "<"),
    **dict.fromkeys("\u02c3\u1433\u232a\u3009\u27e9\u276d\u276f\u2771\u29fd\ufe65\uff1e", ">"),
    # slashes
    **dict.fromkeys("\u2044\u2215\u29f8\u2571\u30ce\uff0f", "/"),
    # s y s t e m
    **dict.fromkeys("\u0455\ua731\u01bd\u0282", "s"),  # ѕ ꜱ ƽ ʂ
    **dict.fromkeys("\u0443\u04af\u028f\u03b3\u03c5\u1eff\u0263", "y"),  # у ү ʏ γ υ ỿ ɣ
    **dict.fromkeys("\u0442\u03c4\u1d1b\u01ad", "t"),  # т τ ᴛ ƭ
    **dict.fromkeys("\u0435\u03b5\u04bd\u0454\u1d07\u0258\u025b\u212e", "e"),  # е ε ҽ є ᴇ ɘ ɛ ℮
    **dict.fromkeys("\u043c\u1d0d\u217f\u0271", "m"),  # м ᴍ ⅿ ɱ
}

# Characters that show as nothing (or as a blank) but are not in a category that says so.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e\u17b4\u17b5")
_DROPPED_CATEGORIES = frozenset({"Cf", "Mn", "Me", "Co", "Cn"})

# Every character whose fold is an opening bracket (tests/hostile/test_trust_marker.py checks
# this against every code point): a text with none of them holds no tag.
OPENERS = "<\u226e\ufe3f" + "".join(c for c, v in _LOOKALIKES.items() if v == "<")
# Printable ASCII that cannot follow an opening bracket in a tag: most brackets in text
# (``<p>``, ``a < 3``) are ruled out by the next character alone, without a fold.
_NOT_AFTER_OPENER = frozenset(chr(c) for c in range(0x21, 0x7f)) - frozenset("/sS")
# ASCII's invisible characters (controls that are not whitespace): without them an ASCII
# text can hold a tag only if it holds the word itself.
_ASCII_INVISIBLE = str.maketrans(dict.fromkeys(
    [c for c in range(0x80) if chr(c).isspace() is False and chr(c).isprintable() is False]))


@lru_cache(maxsize=8192)
def fold(char: str) -> str:
    """What a model reads in one character: ``""`` for an invisible one, ``" "`` for any
    whitespace, otherwise its compatibility form, case folded, without combining marks,
    with look-alike letters and brackets mapped to the Latin ones."""
    out = []
    for part in unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", char).casefold()):
        category = unicodedata.category(part)
        if part.isspace():
            out.append(" ")
        elif category in _DROPPED_CATEGORIES or category == "Cc" or part in _INVISIBLE:
            continue
        else:
            out.append(_LOOKALIKES.get(part, part))
    return "".join(out)


@dataclass(frozen=True)
class Tag:
    """One tag in a text: where its opening bracket is, where its word ends, and where its
    closing bracket is (None when none follows before the next opening bracket)."""

    start: int
    word_end: int
    close: int | None

    @property
    def end(self) -> int:
        """Just past the tag: its closing bracket, or its word when there is none."""
        return self.word_end if self.close is None else self.close + 1


def find_tags(text: str) -> list[Tag]:
    """Every tag in ``text``, in order (see the module's docstring for what is a tag)."""
    return list(_scan(text))


def _openers(text: str) -> list[int]:
    """Where the opening brackets are, each found by ``str.find`` (the common case, a text
    with none, costs one fast search per bracket character)."""
    found: list[int] = []
    for bracket in OPENERS:
        i = text.find(bracket)
        while i >= 0:
            found.append(i)
            i = text.find(bracket, i + 1)
    return sorted(found)


def _scan(text: str) -> Iterator[Tag]:
    if not any(bracket in text for bracket in OPENERS):
        return  # the common case: no opening bracket
    if text.isascii():
        low = text.lower()
        seen = low.translate(_ASCII_INVISIBLE)
        if _WORD not in seen:
            return
        if len(seen) == len(low):  # ASCII without invisible characters: fold is lower()
            yield from _scan_ascii(low)
            return
    yield from _scan_folded(text)


def _scan_folded(text: str) -> Iterator[Tag]:
    """Every tag, each character read through :func:`fold`."""
    n, i = len(text), 0
    for start in _openers(text):
        if start < i:  # inside a tag already read, or a look-ahead that ruled one out
            continue
        if start + 1 < n and text[start + 1] in _NOT_AFTER_OPENER:
            continue
        word_end, i = _word_after(text, start + 1)
        if word_end is not None:
            close, i = _closing_after(text, word_end)
            yield Tag(start, word_end, close)


def _scan_ascii(low: str) -> Iterator[Tag]:
    """:func:`_scan` for lower-cased ASCII text without invisible characters, where each
    character is its own fold: from each ``system`` back over spaces and one ``/`` to a
    ``<`` (each stretch of spaces is read once, by the word after it)."""
    n = len(low)
    word = low.find(_WORD)
    while word >= 0:
        end = word + len(_WORD)
        if end == n or _boundary(low[end]):
            j = _before_spaces(low, word - 1)
            if j >= 0 and low[j] == "/":
                j = _before_spaces(low, j - 1)
            if j >= 0 and low[j] == "<":
                bracket = low.find("<", end)
                bracket = n if bracket < 0 else bracket
                close = low.find(">", end, bracket)
                yield Tag(j, end, close if close >= 0 else None)
        word = low.find(_WORD, end)  # the word cannot overlap itself


def _before_spaces(low: str, j: int) -> int:
    while j >= 0 and low[j].isspace():
        j -= 1
    return j


def _word_after(text: str, i: int) -> tuple[int | None, int]:
    """Where the word ``system`` ends if it follows the opening bracket just before ``i``,
    and where the scan goes on; it stops at the first character that rules the tag out."""
    n, slash, matched = len(text), False, 0
    while i < n:
        for part in fold(text[i]):
            if matched == len(_WORD):
                return (i if _boundary(part) else None), i
            if matched == 0 and part == " ":
                continue
            if matched == 0 and part == "/" and not slash:
                slash = True
                continue
            if part != _WORD[matched]:
                return None, i if part == "<" else i + 1
            matched += 1
        i += 1
    return (n if matched == len(_WORD) else None), n


def _boundary(part: str) -> bool:
    return not (part.isalnum() or part == "_")


def _closing_after(text: str, i: int) -> tuple[int | None, int]:
    n = len(text)
    while i < n:
        folded = fold(text[i])
        if "<" in folded:
            return None, i
        if ">" in folded:
            return i, i + 1
        i += 1
    return None, n


def has_marker(text: str) -> bool:
    """Whether ``text`` holds a ``<system>`` or ``</system>`` tag (in any spelling)."""
    return next(_scan(text), None) is not None


def neutralize(text: str) -> str:
    """``text`` with every ``<system>`` / ``</system>`` tag made ordinary text."""
    return _neutralized(text, find_tags(text))


def neutralize_outside(text: str, trusted: Sequence[tuple[int, int]]) -> str:
    """``text`` with every tag neutralized that does not lie wholly inside one of the
    ``trusted`` spans (``(start, end)`` offsets of text the engine itself wrote, such as a
    template's own literal text): a tag split across two substituted values, or begun in
    one and ended in another, is neutralized like a tag inside one."""
    tags = [tag for tag in find_tags(text)
            if not any(start <= tag.start and tag.end <= end for start, end in trusted)]
    return _neutralized(text, tags)


def _neutralized(text: str, tags: Sequence[Tag]) -> str:
    if not tags:
        return text
    chars = list(text)
    for tag in tags:
        chars[tag.start] = _OPEN
        if tag.close is not None:
            chars[tag.close] = _CLOSE
    return "".join(chars)
