"""``exec``: call a playbook chosen at run time, only among the allowed ones.

The target's name is read from ``playbook_source`` and its arguments from ``args_source``
(an object a router produced, laid over the node's static ``args``). Allowed targets are
the node's ``allowed_playbooks`` or, without that list, the router-callable playbooks and
those whose name fits one the calling playbook spells for ``playbook_source``
(:mod:`sea.lang.exec_targets`, SAIVerse's rule as far as SEA keeps it). An
unknown or disallowed target fails the node (its ``error_next`` handles it), unless the
host asked for approval of unlisted targets (``Limits.unlisted_exec = "ask"``). After a
successful call the callee's name is appended to ``executed_playbooks`` when that list
exists (SAIVerse's rule, :mod:`sea.lang.saiverse`).
"""

from __future__ import annotations

from typing import Any

from sea.engine.approval import require_approval
from sea.engine.calls import call_playbook
from sea.engine.pulse import Frame
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update, variables
from sea.engine.subagent import run_call
from sea.engine.waits import ALWAYS, NEVER, Waits
from sea.errors import CallArgumentError, CallTargetError
from sea.lang import exec_targets, saiverse
from sea.lang.node_models import ExecNode
from sea.lang.templates import MISSING, render_value, resolve_path


def target_name(node: ExecNode, state: PlaybookState, frame: Frame) -> str:
    """The callee's name from ``playbook_source`` (a non-empty string)."""
    value = resolve_path(variables(state), node.playbook_source)
    if value is MISSING or not isinstance(value, str) or not value.strip():
        shown = "nothing" if value is MISSING else repr(value)
        raise CallTargetError(
            f"no playbook to run: {node.playbook_source!r} holds {shown}",
            playbook=frame.name,
            node=node.id,
        )
    return value.strip()


def allowed(node: ExecNode, frame: Frame) -> list[str]:
    """The names this node may call."""
    if node.allowed_playbooks is not None:
        return list(node.allowed_playbooks)
    return [playbook.name for playbook in frame.pulse.router_callable()]


def may_run(node: ExecNode, frame: Frame, name: str) -> bool:
    """Whether this node may run the playbook ``name`` without asking."""
    if node.allowed_playbooks is not None:
        return name in node.allowed_playbooks
    if name in allowed(node, frame):
        return True
    return exec_targets.allows(
        exec_targets.spelled_patterns(
            exec_targets.set_assignments(frame.playbook.nodes), node.playbook_source
        ),
        name,
    )


def call_args(node: ExecNode, state: PlaybookState, frame: Frame) -> dict[str, Any]:
    """Static ``args`` rendered, overlaid by the object at ``args_source``."""
    scope = variables(state)
    args: dict[str, Any] = dict(render_value(node.args or {}, scope))
    chosen = resolve_path(scope, node.args_source)
    if chosen is MISSING or chosen is None:
        return args
    if not isinstance(chosen, dict):
        raise CallArgumentError(
            f"{node.args_source!r} must hold an object of arguments, got "
            f"{type(chosen).__name__}",
            playbook=frame.name,
            node=node.id,
        )
    return {**args, **chosen}


class ExecKind(NodeKind[ExecNode]):
    """Runs ``exec`` nodes."""

    model = ExecNode

    def waits(self, node: ExecNode) -> Waits:
        """May ask to call a playbook outside its list; pauses where a playbook it may call
        can (its allow-list, else every playbook the pulse offers a router)."""
        if node.allowed_playbooks is not None:
            return Waits(callees=tuple(node.allowed_playbooks), unlisted=True)
        return Waits(router_callees=True, unlisted=True)

    def waits_now(self, node: ExecNode, state: PlaybookState, frame: Frame) -> Waits:
        """Where the node can pause about to run with ``state``: where its target can, or
        (outside its list) where the policy asks first; nowhere when it will fail before
        calling anything (no target, or one outside its list that is not asked about)."""
        try:
            name = target_name(node, state, frame)
        except CallTargetError:
            return NEVER
        if not may_run(node, frame, name):
            return ALWAYS if frame.services.limits.unlisted_exec == "ask" else NEVER
        return Waits(callees=(name,))

    async def run(self, node: ExecNode, state: PlaybookState, frame: Frame) -> Update:
        """Check the target, then call it like ``subplay``."""
        name = target_name(node, state, frame)
        if not may_run(node, frame, name):
            names = allowed(node, frame)
            detail = f"playbook {name!r} may not be run here (allowed: {', '.join(names)})"
            if frame.services.limits.unlisted_exec != "ask":
                raise CallTargetError(detail, playbook=frame.name, node=node.id)
            require_approval(frame, node.id, f"running playbook {name!r}", {"playbook_name": name})
        callee, _ = frame.pulse.playbook(name)
        args = call_args(node, state, frame)
        update = await run_call(  # inline, or as a subagent (sea.engine.subagent)
            frame, node, state, callee,
            lambda inner: call_playbook(inner, node, state, callee, args, strict=False),
        )
        ran = saiverse.appended_after_call(variables(state), name)  # executed_playbooks
        if ran:
            update["vars"] = {**(update.get("vars") or {}), **ran}
        return update


KIND = ExecKind()
