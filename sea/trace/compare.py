"""Finding the first point where a replayed pulse went another way than its recording.

The comparable steps are the nodes run, the model calls, the tool calls, the memory writes,
the chronicles of subagent calls and, for ``actions`` nodes, each plan and each action (its
tool, planned parameters, the normalization of every ``ref:``, the arguments the tool
received, its status and error). A divergence at an action names it: ``action 'read_doc'
normalized[0].rule``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sea.trace.format import Trace

_MISSING = "(nothing)"


@dataclass(frozen=True, slots=True)
class Step:
    """One comparable thing a pulse did: ran a node, called a model or a tool, wrote memory,
    planned actions or ran one (``action``: the action id, for an action and its tool call)."""

    kind: str
    seq: int
    playbook: str | None
    node: str | None
    fields: dict[str, Any]
    action: str | None = None

    def label(self) -> str:
        """``kind playbook.node`` (and the action) for messages."""
        where = ".".join(p for p in (self.playbook, self.node) if p) or "runtime"
        if self.action is None:
            return f"{self.kind} {where}"
        if self.kind == "action":
            return f"action {where} {self.action!r}"
        return f"{self.kind} {where} (action {self.action!r})"

    def identity(self) -> tuple[str, str | None, str | None, str | None]:
        """What must be the same for two steps to be compared field by field."""
        return (self.kind, self.playbook, self.node, self.action)

    def field_name(self, path: str) -> str:
        """How a divergence names the field at ``path`` (``kind.path``; an action's says
        which action)."""
        if self.action is None:
            return f"{self.kind}.{path}"
        if self.kind == "action":
            return f"action {self.action!r} {path}"
        return f"action {self.action!r} {self.kind}.{path}"


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first difference: where (playbook, node, and the action when at one), which
    field, expected and actual."""

    playbook: str | None
    node: str | None
    field: str
    expected: Any
    actual: Any
    action: str | None = None

    def describe(self) -> str:
        """A short human report."""
        where = ".".join(p for p in (self.playbook, self.node) if p) or "the pulse"
        return (
            f"replay diverged at {where}: {self.field}\n"
            f"  expected: {_show(self.expected)}\n"
            f"  actual:   {_show(self.actual)}"
        )

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form (``action`` only when the divergence is at one)."""
        data: dict[str, Any] = {
            "playbook": self.playbook,
            "node": self.node,
            "field": self.field,
            "expected": self.expected,
            "actual": self.actual,
        }
        if self.action is not None:
            data["action"] = self.action
        return data


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
        Step("tool", t.seq, t.playbook, t.node, {"tool": t.tool, "args": t.args}, t.action_id)
        for t in trace.tool_calls
    ]
    found += [
        Step("plan", p.seq, p.playbook, p.node,
             {"actions": p.actions, "reason": p.reason, "offered": p.offered})
        for p in trace.plans
    ]
    found += [
        Step(
            "action",
            a.seq,
            a.playbook,
            a.node,
            {
                "tool": a.tool,
                "parameters": a.parameters,
                "normalized": [n.model_dump() for n in a.normalized],
                "arguments": a.arguments,
                "status": a.status,
                "error": a.error,
            },
            a.action_id,
        )
        for a in trace.actions
    ]
    found += [
        Step("memory", w.seq, w.playbook, w.node, {"role": w.role, "content": w.content,
                                                   "tags": w.tags})
        for w in trace.memory_writes
    ]
    found += [
        Step("subagent", s.seq, s.playbook, s.node,
             {"callee": s.callee, "status": s.status, "chronicle": s.chronicle,
              "source": s.source})
        for s in trace.subagents
    ]
    return sorted(found, key=lambda step: step.seq)


def first_divergence(expected: Trace, actual: Trace) -> Divergence | None:
    """The first step (then the outcome) where ``actual`` differs from ``expected``."""
    found = divergence_at(expected, actual)
    return None if found is None else found[1]


def divergence_at(expected: Trace, actual: Trace) -> tuple[int, Divergence] | None:
    """The first divergence and its step's number: 1 for the first of :func:`steps`, one
    past the last step of the longer trace when only the outcome differs."""
    wanted, got = steps(expected), steps(actual)
    count = max(len(wanted), len(got))
    for index in range(count):
        want = wanted[index] if index < len(wanted) else None
        have = got[index] if index < len(got) else None
        found = _compare_step(want, have)
        if found is not None:
            return index + 1, found
    for field in ("status", "spoken", "error"):
        want_value, have_value = getattr(expected, field), getattr(actual, field)
        if want_value != have_value:
            return count + 1, Divergence(expected.playbook, None, field, want_value, have_value)
    return None


def _compare_step(want: Step | None, have: Step | None) -> Divergence | None:
    if want is None and have is None:
        return None
    if want is None or have is None or want.identity() != have.identity():
        anchor = want or have
        assert anchor is not None
        return Divergence(
            anchor.playbook,
            anchor.node,
            "step",
            want.label() if want else _MISSING,
            have.label() if have else _MISSING,
            anchor.action,
        )
    return _compare_fields(want, have)


def _compare_fields(want: Step, have: Step) -> Divergence | None:
    for name, expected in want.fields.items():
        path, left, right = _first_difference(name, expected, have.fields.get(name))
        if path is not None:
            return Divergence(
                want.playbook, want.node, want.field_name(path), left, right, want.action
            )
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
