"""Hints for likely mistakes: close field names and known SAIVerse habits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

KNOWN_MISTAKES: dict[tuple[str, str], str] = {
    ("*", "condition"): "branches are `conditional_next`: {field, operator, cases, default}",
    ("*", "conditions"): "branches are `conditional_next`: {field, operator, cases, default}",
    ("playbook", "model"): (
        "models are chosen by the host: set `context_profile` (conversation, router, worker, "
        "worker_light) or `model_type` (normal, lightweight)"
    ),
    ("playbook", "max_iterations"): (
        "loops are bounded by a counter in a `set` node and a `conditional_next` on it; the "
        "engine also bounds every pulse's steps"
    ),
    ("playbook", "metadata"): "playbooks have no `metadata`; use `description`",
}
"""Mistakes on any node (``*``) and on the playbook; each node type declares its own
(:attr:`sea.lang.node.NodeModel.known_mistakes`)."""

TYPE_NAME_FIXES: dict[str, str] = {
    "int": "integer",
    "float": "number",
    "double": "number",
    "str": "string",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
    "none": "null",
    "None": "null",
}
"""Python type names written where JSON Schema wants its own."""


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """The closest valid name, if one is close enough."""
    import difflib  # only when a name is wrong: a valid playbook's check never needs it

    found = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


MAX_FUZZY_WORK = 100_000
"""How many name-to-choice comparisons one :class:`Suggester` makes at most."""


class Suggester:
    """``did you mean`` for many names against one set of choices, in linear time.

    :func:`did_you_mean` compares a name with every choice; a file with thousands of
    unknown names against thousands of choices made that quadratic (5,000 undefined
    variables took 39 s to report). A suggester groups the choices by length once (a choice
    more than about twice as long or half as short can never be close), answers a name it
    has seen from memory, and stops comparing once it has made ``budget`` comparisons: the
    names after that get no suggestion (no report lists that many; see the loader's cap on
    diagnostics). Its time is linear in the names and choices, plus that constant.
    """

    def __init__(self, choices: Iterable[str], *, budget: int = MAX_FUZZY_WORK) -> None:
        self._by_length: dict[int, list[str]] = {}
        for choice in sorted(set(choices)):
            self._by_length.setdefault(len(choice), []).append(choice)
        self._budget = budget
        self._work = 0
        self._answers: dict[str, str | None] = {}

    def close(self, name: str) -> str | None:
        """The closest choice to ``name``, if one is close enough (and the budget lasts)."""
        if name in self._answers:
            return self._answers[name]
        found = None
        if self._work < self._budget:
            size = len(name)
            # difflib's ratio 2*M/T reaches the 0.6 cutoff only if 0.3*(a+b) <= min(a, b)
            near = [
                choice
                for length, group in self._by_length.items()
                if 3 * (size + length) <= 10 * min(size, length)
                for choice in group
            ]
            self._work += len(near)
            found = did_you_mean(name, near) if near else None
        self._answers[name] = found
        return found

    def suggest(self, name: str) -> str:
        """``did you mean `x`? `` (ending in a space) or ``""``, as :func:`suggest`."""
        close = self.close(name)
        return f"did you mean `{close}`? " if close else ""


def suggest(name: str, choices: Iterable[str]) -> str:
    """``did you mean `x`? `` (ending in a space) when a choice is close to ``name``, else
    ``""``: the start of a hint that goes on to list the choices."""
    close = did_you_mean(name, choices)
    return f"did you mean `{close}`? " if close else ""


def unknown_field_hint(
    kind: str, name: str, valid: Iterable[str], mistakes: Mapping[str, str] | None = None
) -> str:
    """The hint for an unknown field ``name`` on an object of ``kind`` (node type or
    ``playbook``, ``input parameter``…); ``mistakes``: the node type's own known mistakes."""
    known = (
        (mistakes or {}).get(name)
        or KNOWN_MISTAKES.get((kind, name))
        or KNOWN_MISTAKES.get(("*", name))
    )
    if known:
        return known
    close = did_you_mean(name, valid)
    fields = ", ".join(f"`{v}`" for v in sorted(valid))
    if close:
        return f"did you mean `{close}`? Valid fields: {fields}"
    return f"valid fields: {fields}"
