"""Carrying out one approved spec in the workspace.

The path is confined again right before the spec runs (the workspace may have changed since
the preflight) and the file operations go through :mod:`sea.engine.plans.fsops`, so nothing
is written outside the workspace. ``run`` checks its command line again
(:mod:`sea.engine.plans.commands`: allow-listed, no argument naming a path outside the
workspace) and starts it without a shell by the absolute path fixed when the policy was
built, behind the host's sandbox wrapper, in the spec's folder, with the policy's
environment only, no input, a timeout that kills its whole process group, and its output
(stdout and stderr together) read a piece at a time and cut to the host's limit
(:mod:`sea.engine.plans.process`). A failure is a :class:`SpecResult` with ``ok`` false,
never an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from saimemory.plans import ActionSpecExt, SpecResult
from sea.engine.plans import fsops
from sea.engine.plans.commands import command_argv, launch_argv, launch_env
from sea.engine.plans.policy import PlanPolicy
from sea.engine.plans.process import run_bounded
from sea.engine.tools.workspace import Workspace, WorkspaceError

Clock = Callable[[], datetime]


class _Failed(Exception):
    """The spec failed; the message says why."""


def run_spec(
    workspace: Workspace, policy: PlanPolicy, spec: ActionSpecExt, clock: Clock
) -> SpecResult:
    """Run one spec; its result (``ok`` false, with the reason, when it failed)."""
    started = clock()
    base = spec.base
    output, code = "", None
    try:
        message, output, code = _do(workspace, policy, spec)
        ok = code in (None, 0)
    except (_Failed, fsops.FsError, WorkspaceError) as exc:
        message, ok = str(exc), False
    except OSError as exc:
        message, ok = f"{exc.strerror or type(exc).__name__}", False
    return SpecResult(spec_id=spec.id, kind=base.kind, path=base.path, ok=ok, message=message,
                      started_at=started, finished_at=clock(), output=output, exit_code=code)


def _do(workspace: Workspace, policy: PlanPolicy, spec: ActionSpecExt
        ) -> tuple[str, str, int | None]:
    """Do the spec: ``(message, output, exit code)``."""
    base = spec.base
    if base.kind == "analyze":
        return "nothing to do in the workspace: the analysis is the persona's", "", None
    real, _, _ = workspace.locate(base.path, missing_ok=True)
    parts = real.relative_to(workspace.root).parts
    if base.kind == "run":
        return _run(workspace, policy, spec, parts)
    if base.kind in ("create", "write"):
        data = (base.content or "").encode("utf-8", errors="surrogatepass")
        if not parts:
            raise _Failed("the workspace root is a folder, not a file")
        fsops.write_file(workspace.root, parts, data, exclusive=base.kind == "create")
        verb = "created" if base.kind == "create" else "wrote"
        return f"{verb} {base.path} ({len(data)} bytes)", "", None
    if base.kind == "mkdir":
        fsops.make_dirs(workspace.root, parts)
        return f"made folder {base.path}", "", None
    if base.kind == "delete":
        if not parts:
            raise _Failed("the workspace root cannot be deleted")
        fsops.remove(workspace.root, parts)
        return f"deleted {base.path}", "", None
    data = fsops.read_bytes(workspace.root, parts, policy.max_read_bytes)
    text = _cut(data.decode("utf-8", errors="replace"), policy.max_output_chars)
    return f"read {base.path} ({len(data)} bytes)", text, None


def _run(workspace: Workspace, policy: PlanPolicy, spec: ActionSpecExt,
         parts: tuple[str, ...]) -> tuple[str, str, int | None]:
    problems: list[str] = []
    cwd = workspace.root.joinpath(*parts)
    argv = command_argv(spec.base, policy, problems.append, root=workspace.root, cwd=cwd)
    if not argv:
        raise _Failed("; ".join(problems))
    try:
        done = run_bounded(launch_argv(argv, policy), cwd=cwd, env=launch_env(policy),
                           timeout_s=policy.run_timeout_s, max_chars=policy.max_output_chars)
    except OSError as exc:
        raise _Failed(f"{argv[0]} could not be started: {exc.strerror or exc}") from None
    if done.timed_out:
        raise _Failed(f"{argv[0]} timed out after {policy.run_timeout_s:g}s and was "
                      f"stopped; output so far: {_cut(done.output, 500)!r}")
    return f"{argv[0]} exited with status {done.exit_code}", done.output, done.exit_code


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… (cut at {limit} of {len(text)} characters)"
