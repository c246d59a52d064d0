"""Plans as terminal lines: an approval request's preview, a plan event, a plan's history.

Shared by the pulse views (``sea run``, ``sea resume``) and ``sea plan``. Every line is
plain text; callers pass it through :func:`sea.cli._text.printable` (titles, paths and
reasons come from a model or a file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def approval_lines(view: Mapping[str, Any]) -> list[str]:
    """What a person is shown of a plan approval request (``plan_approval`` of the
    request, :func:`sea.engine.plans.tools.approval_view`): the plan, the files, each spec
    with its risk and diff summary, the risk score and the high-risk specs."""
    lines = [f"plan {_quoted(view.get('title'))} ({view.get('plan_id')}) asks for approval of "
             f"spec(s) {', '.join(str(i) for i in view.get('spec_ids') or []) or 'none'}"]
    files = [str(item) for item in view.get("files") or []]
    lines.append("  files: " + (", ".join(files) if files else "none"))
    for spec in view.get("specs") or []:
        if isinstance(spec, Mapping):
            lines.append("  " + spec_line(spec))
    high = [str(item) for item in view.get("high_risk") or []]
    score = view.get("risk_score") or 0.0
    lines.append(f"  risk score {float(score):.2f}; high risk: "
                 + (", ".join(high) + " (a person must approve them)" if high else "none"))
    return lines


def spec_line(spec: Mapping[str, Any]) -> str:
    """One spec: ``2 create notes/a.md [low] +3 -0 new file, 3 lines — what it is for``,
    on one line whatever its texts hold (their line breaks are shown as ``\\n``...)."""
    added, removed = spec.get("added"), spec.get("removed")
    counts = f" +{added} -{removed}" if added or removed else ""
    summary = spec.get("diff_summary") or ""
    about = f" — {spec['description']}" if spec.get("description") else ""
    line = (f"{spec.get('id')} {spec.get('kind')} {spec.get('path') or '.'} "
            f"[{spec.get('risk')}]{counts} {summary}{about}").rstrip()
    return "".join(_escaped(char) if char in _BREAKS else char for char in line)


_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
"""What ``str.splitlines`` (and a terminal) takes for the end of a line."""


def _escaped(char: str) -> str:
    return repr(char)[1:-1]


def event_line(event: Mapping[str, Any], *, with_time: bool = True) -> str:
    """One plan event (a ``plan_event`` or a history entry, as JSON): when (unless not
    ``with_time``), what happened, by whom, the status after it, its counts, risk score and
    reason."""
    counts = event.get("counts") or {}
    listed = ", ".join(f"{key} {value}" for key, value in counts.items())
    why = f": {event['reason']}" if event.get("reason") else ""
    kind = event.get("event") or event.get("kind")
    when = f"{event.get('at', '')} " if with_time else ""
    return (f"{when}{kind} by {event.get('actor')} → {event.get('status')} "
            f"({listed}; risk {float(event.get('risk_score') or 0.0):.2f}){why}").strip()


def history_lines(history: Sequence[Mapping[str, Any]]) -> list[str]:
    """A plan's stored events, oldest first, one line each."""
    return [event_line(entry) for entry in history]


def _quoted(title: Any) -> str:
    return '"' + " ".join(str(title or "").split()) + '"'
