"""Which playbooks an ``exec`` node without ``allowed_playbooks`` may run.

SEA's rule: the router-callable ones. SAIVerse's runtime ran any playbook the persona could
load, whatever chose its name; its playbooks rely on that where the playbook itself spells
the name: SAIVerse's research chain sets ``selected_playbook`` to
``"source_{route_result.source}"`` and runs ``source_web``, ``source_chronicle``... none of
them router-callable. SEA keeps SAIVerse's rule to that extent, and no further: a playbook
an ``exec`` node may also run is one whose name fits a name the *calling playbook* spells,
a ``set`` node's string assigned to the node's ``playbook_source`` with at least one
character of its own (``"source_{kind}"`` fits ``source_web``; ``"{choice}"`` alone fits
nothing: a name chosen wholly by a model or a user stays among the router-callable ones).
``sea migrate`` writes the names it finds as the node's explicit ``allowed_playbooks``.

The checks (the variables a callee returns), the engine (the target allowed) and the
migration all read this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sea.lang.node import NAME_PATTERN, NodeModel
from sea.lang.templates import references

__all__ = ["allows", "set_assignments", "spelled_names", "spelled_patterns"]

_NAME_PART = "[a-z0-9_]+"


def _pattern(template: str) -> re.Pattern[str] | None:
    """The names a spelled template can produce; None if it spells no character itself."""
    if "{{" in template or "}}" in template:
        return None
    parts: list[str] = []
    literal = 0
    position = 0
    for ref in references(template):
        text = template[position:ref.start]
        literal += len(text)
        parts.extend((re.escape(text), _NAME_PART))
        position = ref.end
    tail = template[position:]
    literal += len(tail)
    parts.append(re.escape(tail))
    if literal == 0 or not re.fullmatch(NAME_PATTERN, re.sub(r"\{[^{}]*\}", "x", template)):
        return None
    return re.compile("".join(parts))


def set_assignments(nodes: Iterable[NodeModel]) -> Iterator[Mapping[str, Any]]:
    """The ``assignments`` of the ``set`` nodes among ``nodes``."""
    for node in nodes:
        assignments = getattr(node, "assignments", None)
        if node.node_type() == "set" and isinstance(assignments, Mapping):
            yield assignments


def spelled_patterns(
    assignments: Iterable[Mapping[str, Any]], source: str
) -> list[re.Pattern[str]]:
    """The names a playbook's ``set`` nodes spell for the state key ``source``.

    Args:
        assignments: The ``assignments`` of the calling playbook's ``set`` nodes
            (:func:`set_assignments`, or the raw document's).
        source: The ``exec`` node's ``playbook_source``.

    Returns:
        One pattern per spelled string assignment, in document order.
    """
    found: list[re.Pattern[str]] = []
    for assigned in assignments:
        value = assigned.get(source)
        if isinstance(value, str) and not value.startswith("="):
            pattern = _pattern(value.strip())
            if pattern is not None and pattern.pattern not in {p.pattern for p in found}:
                found.append(pattern)
    return found


def allows(patterns: Iterable[re.Pattern[str]], name: str) -> bool:
    """Whether ``name`` fits one of the spelled ``patterns``."""
    return any(pattern.fullmatch(name) for pattern in patterns)


def spelled_names(
    assignments: Iterable[Mapping[str, Any]], source: str, names: Iterable[str]
) -> list[str]:
    """The playbooks among ``names`` that fit a name the playbook spells for ``source``
    (``assignments``: as for :func:`spelled_patterns`)."""
    patterns = spelled_patterns(assignments, source)
    return [name for name in names if patterns and allows(patterns, name)]
