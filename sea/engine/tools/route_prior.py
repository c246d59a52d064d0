"""A lexical prior over the playbooks a router may choose (``rank_playbooks``).

A small model chooses badly among many playbooks from their descriptions alone; a large one
chooses well. The prior narrows the choice before any model is asked: it compares the user's
message with each playbook's ``examples`` (requests the author wrote as people phrase them)
and its ``description``, word by word in languages with spaces and by pairs of characters in
Japanese or Chinese, each feature weighted by how few playbooks use it (IDF), and scores a
playbook by its closest example (cosine). Then:

* no playbook scores at least ``floor``: the prior is sure of nothing, and the safe choice,
  ``fallback`` (basic chat: just answer), is the only candidate;
* otherwise the candidates are the playbooks within ``ratio`` of the best score (at most
  ``max_candidates``), best first, and, unless the best scores at least ``sure``,
  ``fallback`` last when it is not among them (the safe choice stays open to the model
  while the prior is unsure). One candidate: ``decided`` (no model is needed).

Deterministic and quick (no model, no store): a few hundred examples score in a millisecond.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

FALLBACK = "basic_chat"
"""The safe choice: answer from the conversation, run nothing."""

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u3005]+")
_PATH = re.compile(r"[\w\-]+(?:/[\w\-.]+)*\.[a-z0-9]{1,5}\b|\b[\w\-]+/[\w\-./]+")
_STOP = frozenset(
    "a an the to of in on at for and or is are was be it its this that my me i you your "
    "do does can could would will please pls me us we".split()
)


def features(text: str) -> Counter[str]:
    """The features of a text: lowercase words (a plural's ``s`` and ``'s`` dropped, a few
    function words left out), pairs of characters in runs of kana or kanji, and ``<path>``
    where it names a file (``notes/todo.md``)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    found: Counter[str] = Counter()
    if _PATH.search(text):
        found["<path>"] += 1
    for word in _WORD.findall(text):
        word = word.removesuffix("'s")
        if word in _STOP:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found[word] += 1
    for run in _CJK.findall(text):
        if len(run) == 1:
            found[run] += 1
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found


@dataclass(frozen=True, slots=True)
class Entry:
    """One playbook as the prior sees it."""

    name: str
    description: str
    examples: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Ranking:
    """What the prior makes of one message."""

    candidates: list[str]
    """The playbooks left for the choice, best first (``fallback`` last when added)."""
    scores: dict[str, float] = field(default_factory=dict)
    """Each playbook's score (0–1), the closest example's cosine similarity."""
    confidence: float = 0.0
    """The best score."""

    @property
    def best(self) -> str:
        """The first candidate."""
        return self.candidates[0]

    @property
    def decided(self) -> bool:
        """One candidate only: nothing is left to choose."""
        return len(self.candidates) == 1


def rank(
    message: str,
    entries: Sequence[Entry],
    *,
    max_candidates: int = 3,
    ratio: float = 0.8,
    floor: float = 0.12,
    sure: float = 0.25,
    fallback: str = FALLBACK,
    keep_fallback: bool = False,
) -> Ranking:
    """Rank ``entries`` for ``message`` (see the module's description); ``keep_fallback``
    keeps the safe choice among the candidates however sure the prior is (after a playbook
    ran this turn, its results may already answer: only a model can tell)."""
    names = [entry.name for entry in entries]
    if not names:
        return Ranking([fallback])
    idf, vectors = _prepared(tuple(entries))
    unknown = math.log((len(names) + 1) / 0.5)  # a word no playbook uses: rarest of all
    query = {term: idf.get(term, unknown) for term in features(message)}
    scores = {name: round(max(_cosine(query, v) for v in vectors[name]), 4) for name in names}
    ordered = sorted(names, key=lambda name: (-scores[name], names.index(name)))
    top = scores[ordered[0]]
    safe = fallback if fallback in names else ordered[0]
    if top < floor:
        return Ranking([safe], scores, top)
    chosen = [name for name in ordered if scores[name] >= ratio * top][:max_candidates]
    if (top < sure or keep_fallback) and safe not in chosen:
        chosen.append(safe)
    return Ranking(chosen, scores, top)


@functools.lru_cache(maxsize=16)
def _prepared(entries: tuple[Entry, ...]
              ) -> tuple[dict[str, float], dict[str, list[dict[str, float]]]]:
    """The IDF of the playbooks' features and each playbook's weighted texts (its examples
    and description): made once per catalogue (a library's playbooks change rarely, and the
    router ranks on every turn)."""
    texts = {entry.name: [*entry.examples, entry.description] for entry in entries}
    found = {name: [features(t) for t in ts] for name, ts in texts.items()}
    idf = _idf([_union(found[entry.name]) for entry in entries])
    return idf, {name: [_weighted(f, idf) for f in fs] for name, fs in found.items()}


def _union(counters: Iterable[Counter[str]]) -> set[str]:
    seen: set[str] = set()
    for counter in counters:
        seen.update(counter)
    return seen


def _idf(documents: list[set[str]]) -> dict[str, float]:
    """Inverse document frequency, each playbook's texts one document (smoothed, > 0)."""
    counts: Counter[str] = Counter()
    for document in documents:
        counts.update(document)
    n = len(documents)
    return {term: math.log((n + 1) / (count + 0.5)) for term, count in counts.items()}


def _weighted(found: Counter[str], idf: dict[str, float]) -> dict[str, float]:
    """Features the playbooks know, each weighted by its IDF (a repeated feature counts once)."""
    return {term: idf[term] for term in found if term in idf}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(weight * b[term] for term, weight in a.items() if term in b)
    norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
    return dot / norm if norm else 0.0
