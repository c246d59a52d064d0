"""English function words, which say little about what a natural-language query looks for.

"Did we talk about hiking?" is about hiking: "did", "we" and "about" are in most
conversations, however rare they happen to be in a small store. The ``any`` search mode
(:mod:`saimemory.any_match`) lets such words order hits but never outweigh a content word.
The list is deliberately small: pronouns, determiners, auxiliary verbs, prepositions,
conjunctions, question words and their common contractions. Japanese needs no list: its
queries are cut into trigrams, whose rarity (their weight) tells particles from content.
"""

from __future__ import annotations

STOP_WORDS: frozenset[str] = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me might more most must my myself no nor not of off on once only or other our
ours ourselves out over own same shall she should so some such than that the their theirs
them themselves then there these they this those through to too under until up upon us
very was we were what when where which while who whom whose why will with would you your
yours yourself yourselves
aren't can't couldn't didn't doesn't don't hadn't hasn't haven't he's i'd i'll i'm i've
isn't it's let's she's shouldn't that's there's they'd they'll they're they've wasn't we'd
we'll we're we've weren't what's where's who's won't wouldn't you'd you'll you're you've
""".split())
"""Lower-case English function words (contractions written with ``'``)."""


def is_stop_word(word: str) -> bool:
    """Whether ``word`` (any case, ``'`` or ``’``) is one of :data:`STOP_WORDS`."""
    return word.casefold().replace("\u2019", "'") in STOP_WORDS
