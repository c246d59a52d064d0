"""The ``any`` search mode: one word of the query suffices, and rare words rank first.

It serves natural-language queries ("What is my name?"), where most words are common and
one or two say what is looked for:

- Each indexed word (three characters or more) finds, through the trigram index, the
  newest :data:`WORD_WINDOW` messages that contain it and pass the search's tag and time
  filters. Their union are the candidates. How many messages a word found (at most the
  window) is its document frequency: counting costs one bounded query per word, whatever
  the size of the store.
- A candidate's rank is the sum of the weights of the query's words it contains. A word's
  weight is BM25's inverse document frequency, the collection being the persona's
  messages counted up to :data:`COLLECTION_CAP` (one bounded count), so a word found in
  few messages weighs much more than one found in many ("name" outranks "what"; in a
  Japanese sentence cut into trigrams, ``タワー`` outranks ``だった``), in a store of ten
  messages as in one of a million. Equal ranks go to the newest message.
- Short words (one or two characters: "is", "my", 猫, 東京) cannot use the index. They
  weigh as the commonest indexed content word (the commonest indexed word when every
  indexed word is a stop word, below): they order otherwise equal candidates but never
  add candidates, so "is" does not turn a search into a scan of every message.
- Stop words, English function words such as "did", "we", "about" or "what"
  (:mod:`saimemory.stop_words`), say little about what is looked for, however rare a small
  store makes them. When the query has a content word (one that is not a stop word), each
  stop word weighs at most the lightest content word's weight divided by
  :data:`~saimemory.search_terms.MAX_TERMS`: a query has fewer stop words than that, so
  together they weigh less than any one content word. For "Did we talk about hiking?", a
  message with "hiking" outranks one with "did", "we" and "about"; stop words still order
  the messages that share the same content words. A query of stop words only ("What is
  it about?") weighs them as any word. Japanese trigrams are never stop words: their
  rarity alone tells particles from content.
- A common stop word's list is read only if the rank needs it. Such a word weighs its cap
  whatever its list holds (once the collection is large enough that even a full list would
  weigh more), the candidates' texts tell which hold it, and a message only its list would
  add holds no content word outside a full list, so it ranks below the best found without
  it, or ties them and is older. When that cannot be shown (too few hits, say), the list
  is read and the rank computed again; the hits and their ranks are the same either way.
- A query of short words only ("東京 猫") is answered newest first, through the index of
  short words (:mod:`saimemory.grams`), however old the messages. A query of one word
  means the same in both modes and is answered as in the ``all`` mode.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from itertools import chain, islice

from saimemory.search_terms import MAX_TERMS, RANK_WINDOW, Terms
from saimemory.stop_words import is_stop_word

WORD_WINDOW = RANK_WINDOW
"""Messages read per indexed word, newest first: its candidates and its capped count."""
COLLECTION_CAP = 20_000
"""The persona's messages are counted up to this many for the weights: beyond it a word
found in the whole window (:data:`WORD_WINDOW`) still weighs far less than a rare one."""

TEXT_BATCH = 64
"""Candidates whose texts the first read fetches, best first. Each further read fetches
twice as many as the one before (up to :data:`TEXT_BATCH_MOST`): a search that must read
thousands of texts makes a few reads, not one per 64 (on PostgreSQL, a round trip each),
and one that stops early reads less than twice what it needed."""
TEXT_BATCH_MOST = 1024
"""The most texts one read fetches."""

WordLists = Callable[[Sequence[str]], Mapping[str, list[int]]]
"""Each word's newest (at most :data:`WORD_WINDOW`) ids of messages containing it, newest
first."""
Contents = Callable[[list[int]], Mapping[int, str]]
"""The texts of messages, by id."""


def word_weight(found: int, collection: int) -> float:
    """The weight of a word found in ``found`` of ``collection`` messages."""
    collection = max(collection, found)
    return math.log(1.0 + (collection - found + 0.5) / (found + 0.5))


def query_weights(terms: Terms, found: Mapping[str, int], collection: int) -> dict[str, float]:
    """The weight of each word of ``terms`` (see the module text); ``found`` is how many
    messages each indexed word found, ``collection`` the persona's message count."""
    weights = {word: word_weight(found[word], collection) for word in terms.indexed}
    content = [weight for word, weight in weights.items() if not is_stop_word(word)]
    short_weight = min(content or weights.values())
    weights.update((word, short_weight) for word in terms.short)
    lightest = min((weights[word] for word in terms.all if not is_stop_word(word)),
                   default=None)
    if lightest is not None:
        cap = lightest / MAX_TERMS
        for word in terms.all:
            if is_stop_word(word):
                weights[word] = min(weights[word], cap)
    return weights


Group = tuple[int, int, list[int]]
"""Candidates sharing ``(listed words, unsure words)``, and their ids."""


def _by_listed_words(lists: Mapping[str, list[int]], bit: Mapping[str, int]) -> dict[int, set[int]]:
    """The candidates by the words their lists show they hold (a mask of word bits).

    Built with set operations, a word at a time: each word splits every group found so far
    into the part its list holds and the rest, so the work runs in C, not id by id."""
    by_mask: dict[int, set[int]] = {}
    for word, ids in lists.items():
        word_bit, fresh = bit[word], set(ids)
        for mask, members in list(by_mask.items()):
            shared = members & fresh
            if not shared:
                continue
            fresh -= shared
            if len(shared) == len(members):
                del by_mask[mask]
            else:
                members -= shared
            by_mask[mask | word_bit] = shared
        if fresh:
            by_mask[word_bit] = fresh
    return by_mask


def _groups(
    lists: Mapping[str, list[int]], bit: Mapping[str, int], short: int, window: int
) -> list[Group]:
    """The candidates by ``(words their lists show they hold, words only their text can
    tell)``: short words, and the words of full lists among messages older than the list
    (a full list's oldest id is its horizon: an older message may hold the word unlisted)."""
    horizons = sorted((ids[-1], bit[word]) for word, ids in lists.items() if len(ids) >= window)
    groups: list[Group] = []
    for mask, members in _by_listed_words(lists, bit).items():
        beyond = [(oldest, word_bit) for oldest, word_bit in horizons if not mask & word_bit]
        if not beyond:
            groups.append((mask, short, list(members)))
            continue
        ordered = sorted(members)
        # ids below the k-th horizon (and at or above the one before) are older than the
        # k-th list and every later one: those words are unsure for them
        unsure = [short] * (len(beyond) + 1)
        for k in range(len(beyond) - 1, -1, -1):
            unsure[k] = unsure[k + 1] | beyond[k][1]
        cut = 0
        for k, (oldest, _) in enumerate(beyond):
            end = bisect_left(ordered, oldest, cut)
            if end > cut:
                groups.append((mask, unsure[k], ordered[cut:end]))
            cut = end
        if cut < len(ordered):
            groups.append((mask, short, ordered[cut:]))
    return groups


def _in_reach(
    groups: list[Group], total: Callable[[int], float], floor: tuple[float, int] | None
) -> list[Group]:
    """The groups, narrowed to the candidates whose highest possible rank reaches
    ``floor``."""
    found: list[Group] = []
    for mask, unsure, ids in groups:
        highest = total(mask | unsure)  # summed as the rank is: comparable exactly
        if floor is None or highest > floor[0]:
            found.append((mask, unsure, ids))
        elif highest == floor[0]:
            kept = [message_id for message_id in ids if message_id >= floor[1]]
            if kept:
                found.append((mask, unsure, kept))
    return found


def _floor(
    groups: list[Group], total: Callable[[int], float], limit: int
) -> tuple[float, int] | None:
    """The ``limit``-th best ``(rank from the lists, id)`` of the candidates (None: fewer
    candidates than ``limit``): a candidate whose highest possible rank is below it cannot
    be among the best."""
    levels: dict[float, list[list[int]]] = {}
    for mask, _, ids in groups:
        levels.setdefault(total(mask), []).append(ids)
    above = 0
    for level in sorted(levels, reverse=True):
        count = sum(len(ids) for ids in levels[level])
        if above + count >= limit:
            return level, heapq.nlargest(limit - above, chain.from_iterable(levels[level]))[-1]
        above += count
    return None


def _best_first(
    groups: list[Group], total: Callable[[int], float]
) -> Iterator[tuple[float, int, int, int]]:
    """``(highest possible rank, id, listed words, unsure words)`` of every candidate of
    ``groups``, highest first, then newest; a level of rank is sorted only when reached."""
    levels: dict[float, list[Group]] = {}
    for group in groups:
        levels.setdefault(total(group[0] | group[1]), []).append(group)
    for level in sorted(levels, reverse=True):
        yield from sorted(((level, message_id, mask, unsure)
                           for mask, unsure, ids in levels[level] for message_id in ids),
                          reverse=True)


def rank_any(
    terms: Terms,
    lists_of: WordLists,
    contents_of: Contents,
    limit: int,
    *,
    collection: int,
    window: int = WORD_WINDOW,
    batch: int = TEXT_BATCH,
    deferrable: Collection[str] = (),
) -> list[tuple[int, float]]:
    """The best ``limit`` message ids with their rank, best first (see the module text).

    ``lists_of(words)`` gives each word's newest (at most ``window``) ids of messages
    holding it, newest first; ``contents_of(ids)`` their texts. ``collection`` is the
    number of the persona's messages (counted up to :data:`COLLECTION_CAP`).

    A word's list tells which candidates hold it, except among candidates older than its
    oldest listed message when the list is full (``window`` ids): there, and for short
    words, only the text tells. Each candidate's rank is bounded from the lists; the text of
    a candidate is read only while its highest possible rank can still reach the best
    ``limit``, so a query of common words reads a few texts, not thousands.

    The lists of the stop words in ``deferrable`` (those a backend finds costly: common
    ones) are read only if the rank needs them (:func:`_deferred`): such a word weighs its
    cap whatever its list holds, the candidates' texts tell which of them hold it, and a
    message only its list would add ranks below the best ``limit`` found without it. The
    rank is the same either way; only what is read differs.
    """
    later = _deferred(terms, deferrable, window, collection)
    lists = dict(lists_of([word for word in terms.indexed if word not in later]))
    if later:
        found = {word: len(ids) for word, ids in lists.items()}
        cap = _stop_cap(query_weights(terms, {**found, **dict.fromkeys(later, window)},
                                      collection), terms)
        if word_weight(window, collection) < cap:  # a list could change their weight: read
            lists.update(lists_of(later))
            later = []
    seen: dict[int, str] = {}

    def contents(ids: list[int]) -> Mapping[int, str]:
        """Texts by id, each read once however many times the rank is computed."""
        missing = [message_id for message_id in ids if message_id not in seen]
        if missing:
            seen.update(contents_of(missing))
        return {message_id: seen[message_id] for message_id in ids}

    best, total, bit = _ranked(terms, lists, later, contents, limit, collection, window, batch)
    if later and not _outranked(best, total, bit, lists, later, terms, limit, window):
        lists.update(lists_of(later))  # a message only a deferred list holds might rank
        best, total, bit = _ranked(terms, lists, [], contents, limit, collection, window, batch)
    return [(message_id, score) for score, message_id in sorted(best, reverse=True)]


def _deferred(
    terms: Terms, deferrable: Collection[str], window: int, collection: int
) -> list[str]:
    """The words of ``deferrable`` whose lists :func:`rank_any` may leave unread: stop
    words, in a query with an indexed content word (the weights of stop words are then
    capped by the content words', :func:`query_weights`), in a collection larger than the
    window (else a full list would not reach the cap)."""
    if collection <= window or all(is_stop_word(word) for word in terms.indexed):
        return []
    return [word for word in terms.indexed if word in deferrable and is_stop_word(word)]


def _stop_cap(weights: Mapping[str, float], terms: Terms) -> float:
    """The weight no stop word of a query with a content word exceeds."""
    return min(weights[word] for word in terms.all if not is_stop_word(word)) / MAX_TERMS


Total = Callable[[int], float]
"""The summed weight of the words in a mask of word bits."""


def _ranked(
    terms: Terms,
    lists: Mapping[str, list[int]],
    later: Sequence[str],
    contents_of: Contents,
    limit: int,
    collection: int,
    window: int,
    batch: int,
) -> tuple[list[tuple[float, int]], Total, dict[str, int]]:
    """The best ``limit`` ``(rank, id)`` of the candidates of ``lists`` (worst first, a
    heap), the sum of weights and each word's bit. The words of ``later`` have no list:
    they weigh as a full list would make them (their cap, :func:`_deferred`), and only a
    candidate's text tells whether it holds them."""
    found = {word: len(ids) for word, ids in lists.items()}
    weights = query_weights(terms, {**found, **dict.fromkeys(later, window)}, collection)
    bit = {word: 1 << k for k, word in enumerate(weights)}
    sums: dict[int, float] = {}

    def total(mask: int) -> float:
        """The summed weight of the words in ``mask``, in the words' order (equal sets of
        words give equal sums)."""
        found = sums.get(mask)
        if found is None:
            found = sums[mask] = sum((weight for word, weight in weights.items()
                                      if mask & bit[word]), 0.0)
        return found

    unsure_always = sum(bit[word] for word in (*terms.short, *later))
    groups = _groups(lists, bit, unsure_always, window)
    order = _best_first(_in_reach(groups, total, _floor(groups, total, limit)), total)
    # texts are read a batch at a time, best first by the highest rank each could reach,
    # until no candidate left can beat the best ``limit`` found
    folded_words = [(word.casefold(), word_bit) for word, word_bit in bit.items()]
    best: list[tuple[float, int]] = []  # the best ``limit`` (rank, id), worst first
    size = batch  # the first read's; each next one reads twice as many (TEXT_BATCH_MOST)
    while chosen := list(islice(order, size)):
        if len(best) == limit and (chosen[0][0], chosen[0][1]) < best[0]:
            break
        size = min(size * 2, max(batch, TEXT_BATCH_MOST))
        texts = contents_of([message_id for _, message_id, _, unsure in chosen if unsure])
        for _, message_id, mask, unsure in chosen:
            if unsure:
                folded = texts[message_id].casefold()
                for folded_word, word_bit in folded_words:
                    if unsure & word_bit and folded_word in folded:
                        mask |= word_bit
            ranked = (total(mask), message_id)
            if len(best) < limit:
                heapq.heappush(best, ranked)
            elif ranked > best[0]:
                heapq.heapreplace(best, ranked)
    return best, total, bit


def _outranked(
    best: list[tuple[float, int]],
    total: Total,
    bit: Mapping[str, int],
    lists: Mapping[str, list[int]],
    later: Sequence[str],
    terms: Terms,
    limit: int,
    window: int,
) -> bool:
    """Whether every message that only the unread lists of ``later`` would add to the
    candidates ranks below the ``limit``-th best of ``best``. Such a message is in no list
    read: it may hold the words of ``later``, the short words, and a word whose list is
    full (being older than that list's oldest id); no other. Reaching the most those words
    weigh together needs every one of them (weights are positive, and a sum of fewer never
    exceeds the sum of more), so at that rank it is older than every full list it holds
    and loses to a best no older than the oldest of them."""
    if len(best) < limit:
        return False
    rank, last = best[0]
    full = {word: ids[-1] for word, ids in lists.items() if len(ids) >= window}
    mask = sum(bit[word] for word in (*later, *terms.short, *full))
    most = total(mask)
    if most != rank:
        return most < rank
    words = [word_bit for word_bit in bit.values() if mask & word_bit]
    return bool(full) and last >= min(full.values()) and all(
        total(mask & ~word_bit) < rank for word_bit in words)
