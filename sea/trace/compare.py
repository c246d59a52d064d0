"""Finding the first point where a replayed pulse went another way than its recording."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sea.trace.format import Trace

_MISSING = "(nothing)"


@dataclass(frozen=True, slots=True)
class Step:
    """One comparable thing a pulse did: ran a node, called a model or a tool, wrote memory."""

    kind: str
    seq: int
    playbook: str | None
    node: str | None
    fields: dict[str, Any]

    def label(self) -> str:
        """``kind playbook.node`` for messages."""
        where = ".".join(p for p in (self.playbook, self.node) if p) or "runtime"
        return f"{self.kind} {where}"


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first difference: where (playbook, node), which field, expected and actual."""

    playbook: str | None
    node: str | None
    field: str
    expected: Any
    actual: Any

    def describe(self) -> str:
        """A short human report."""
        where = ".".join(p for p in (self.playbook, self.node) if p) or "the pulse"
        return (
            f"replay diverged at {where}: {self.field}\n"
            f"  expected: {_show(self.expected)}\n"
            f"  actual:   {_show(self.actual)}"
        )

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form."""
        return {
            "playbook": self.playbook,
            "node": self.node,
            "field": self.field,
            "expected": self.expected,
            "actual": self.actual,
        }


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 300 else text[:300] + "…"


def steps(trace: Trace) -> list[Step]:
    """Everything the pulse did that a replay must repeat, in event order."""
    found = [
        Step("node", n.seq, n.playbook, n.node, {"node": n.node, "type": n.type})
        for n in trace.nodes
    ]
    found += [
        Step(
            "llm",
            c.seq,
            c.playbook,
            c.node,
            {"messages": [m.model_dump() for m in c.messages], "response": c.response},
        )
        for c in trace.llm_calls
    ]
    found += [
        Step("tool", t.seq, t.playbook, t.node, {"tool": t.tool, "args": t.args})
        for t in trace.tool_calls
    ]
    found += [
        Step("memory", w.seq, w.playbook, w.node, {"role": w.role, "content": w.content,
                                                   "tags": w.tags})
        for w in trace.memory_writes
    ]
    return sorted(found, key=lambda step: step.seq)


def first_divergence(expected: Trace, actual: Trace) -> Divergence | None:
    """The first step (then the outcome) where ``actual`` differs from ``expected``."""
    wanted, got = steps(expected), steps(actual)
    for index in range(max(len(wanted), len(got))):
        want = wanted[index] if index < len(wanted) else None
        have = got[index] if index < len(got) else None
        found = _compare_step(want, have)
        if found is not None:
            return found
    for field in ("status", "spoken", "error"):
        want_value, have_value = getattr(expected, field), getattr(actual, field)
        if want_value != have_value:
            return Divergence(expected.playbook, None, field, want_value, have_value)
    return None


def _compare_step(want: Step | None, have: Step | None) -> Divergence | None:
    if want is None and have is None:
        return None
    if want is None or have is None or (want.kind, want.playbook, want.node) != (
        have.kind,
        have.playbook,
        have.node,
    ):
        anchor = want or have
        assert anchor is not None
        return Divergence(
            anchor.playbook,
            anchor.node,
            "step",
            want.label() if want else _MISSING,
            have.label() if have else _MISSING,
        )
    return _compare_fields(want, have)


def _compare_fields(want: Step, have: Step) -> Divergence | None:
    for name, expected in want.fields.items():
        path, left, right = _first_difference(name, expected, have.fields.get(name))
        if path is not None:
            return Divergence(want.playbook, want.node, f"{want.kind}.{path}", left, right)
    return None


def _first_difference(path: str, left: Any, right: Any) -> tuple[str | None, Any, Any]:
    """The dotted path of the first nested difference, with both values there."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in list(left) + [k for k in right if k not in left]:
            found = _first_difference(
                f"{path}.{key}", left.get(key, _MISSING), right.get(key, _MISSING)
            )
            if found[0] is not None:
                return found
        return None, None, None
    if isinstance(left, list) and isinstance(right, list):
        for index in range(max(len(left), len(right))):
            found = _first_difference(
                f"{path}[{index}]",
                left[index] if index < len(left) else _MISSING,
                right[index] if index < len(right) else _MISSING,
            )
            if found[0] is not None:
                return found
        return None, None, None
    if left != right:
        return path, left, right
    return None, None, None
