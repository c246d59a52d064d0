"""``sea plan``: a persona's plans from the command line (seed 002's API for a person).

    sea plan list --persona aoi [--status approved]
    sea plan show [PLAN_ID] --persona aoi             # state, approvals, results, events
    sea plan preview [PLAN_ID] --workspace DIR        # files, unified diffs, risk score
    sea plan approve [PLAN_ID] --workspace DIR [--approve all|low|1,3] [--request ID]
                     [--approver NAME]
    sea plan reject [PLAN_ID] --workspace DIR [--reason TEXT]
    sea plan execute [PLAN_ID] --workspace DIR [--allow-run CMD] [--run-env NAME]
                     [--run-wrapper 'bwrap ... --']
    sea plan export [PLAN_ID] --output DIR            # seed 002's files; every plan without id

``PLAN_ID`` defaults to the persona's current plan. ``sea plan preview`` shows what the plan
would do and opens an approval request of it (or names the open one, when it shows the same);
``sea plan approve`` approves what that request showed (``--request ID`` names it), and is
refused, with the plan sent back for review, when the specs changed since
(:mod:`sea.engine.plans.shown`). The store is the single source of truth:
these commands read and change the plans a pulse made (``sub_plan``), and a pulse reads what
they changed. Commands that look at files take the workspace the plan was made for (nothing
is read or written outside it). Exit codes as every command's: 0 done, 1 the work ran and
failed (an execution that aborted or found the files changed since the approval, an
approval the plan's state refuses), 2 it could not start (no such plan, a bad option).

A ``run`` spec's command is looked up in this process's ``PATH`` once, when the command
starts, and runs with an environment of ``PATH`` and the variables of
:data:`PASSED_ENV` and ``--run-env`` only; ``--run-wrapper`` puts the host's sandbox in
front of it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from saimemory import MessageStore
from saimemory.errors import NotFoundError
from saimemory.plan_codec import plan_to_dict, to_jsonable
from saimemory.plans import PLAN_STATUSES, Plan
from sea.cli._answers import approve_value
from sea.cli._flags import Renamed
from sea.cli._preview import event_line, history_lines, spec_line
from sea.cli._setup import DEFAULT_PERSONA, add_db_argument, opened_store
from sea.cli._text import printable
from sea.engine.answers import RISK_LEVELS
from sea.engine.plans import PlanEvent, PlanPolicy, PlanService, export_plan, export_plans
from sea.engine.plans.shown import Shown
from sea.engine.plans.state import succeeded, up_to
from sea.errors import PlanApprovalError, PlanNotFound, UsageError

PASSED_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""The variables of this process's environment a ``run`` spec's command gets (when set),
besides ``PATH`` and those named with ``--run-env``."""


def register(subparsers: Any) -> None:
    """Add ``sea plan`` and its subcommands."""
    parser = subparsers.add_parser(
        "plan", help="list, show, preview, approve, reject, execute and export plans")
    sub = parser.add_subparsers(dest="plan_command", metavar="ACTION", required=True)
    listed = _command(sub, "list", "a persona's plans, newest first", _list, plan_id=False)
    listed.add_argument("--status", choices=PLAN_STATUSES, help="only plans in this status")
    _command(sub, "show", "a plan: its specs, approvals, results and events", _show)
    preview = _command(sub, "preview", "what a plan's specs would change, against the "
                       "workspace now", _preview, workspace=True)
    preview.add_argument("--ids", type=_ids, help="only these spec ids (e.g. 1,3)")
    approve = _command(sub, "approve", "approve a plan's specs (all, some, or up to a risk)",
                       _approve, workspace=True)
    approve.add_argument(
        "--approve", nargs="?", const="all", default="all", type=approve_value,
        metavar="all|low|IDS", help="what to approve, as for sea resume: every spec (the "
        "default), only the specs of at most low (or medium, high) risk, or these spec ids "
        "(e.g. 1,3)")
    approve.add_argument("--ids", action=Renamed, new="--approve IDS", dest="approve",
                         convert=lambda text: ",".join(_ids(text)))
    approve.add_argument("--up-to", action=Renamed, new="--approve LEVEL", dest="approve",
                         choices=RISK_LEVELS)
    approve.add_argument("--request", metavar="ID",
                         help="the approval request shown (printed by sea plan preview and "
                         "by a waiting pulse; default: the plan's open one)")
    approve.add_argument("--approver", default="user", help="who approves (default: user)")
    approve.add_argument("--reason", default="", help="why (recorded)")
    reject = _command(sub, "reject", "send a plan back (to proposed)", _reject,
                      workspace=True)
    reject.add_argument("--reason", default="", help="why (recorded)")
    _command(sub, "execute", "run a plan's approved specs that have not run yet", _execute,
             workspace=True)
    export = _command(sub, "export", "write seed 002's files of a plan (every plan without "
                      "an id): <id>/plan.json, approval.json, preview/*.diff, index.json",
                      _export, json_flag=False)
    export.add_argument("--output", "-o", required=True, metavar="DIR",
                        help="the directory to write into (made when missing)")


def _command(
    sub: Any, name: str, help_text: str, handler: Any, *, plan_id: bool = True,
    workspace: bool = False, json_flag: bool = True,
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
    if plan_id:
        parser.add_argument("plan_id", nargs="?", metavar="PLAN_ID",
                            help="the plan (default: the persona's current plan)")
    add_db_argument(parser)
    parser.add_argument("--persona", default=DEFAULT_PERSONA.id,
                        help=f"persona id (default: the bundled persona, {DEFAULT_PERSONA.id})")
    if workspace:
        parser.add_argument("--workspace", metavar="DIR",
                            help="the workspace the plan was made for (required, here or "
                            "as the project file's workspace)")
        parser.add_argument(
            "--allow-run", action="append", default=[], metavar="CMD",
            help="a command `run` specs may start (repeatable; without it they are invalid)")
        parser.add_argument(
            "--run-env", action="append", default=[], metavar="NAME",
            help="a variable of this environment `run` commands get too (repeatable; they "
            f"get PATH and {', '.join(PASSED_ENV)} only)")
        parser.add_argument(
            "--run-wrapper", metavar="COMMAND",
            help="a sandbox put in front of every `run` command, e.g. 'bwrap --ro-bind / / "
            "--bind WS WS --dev /dev --' (the command and its arguments follow it)")
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=handler)
    return parser


def _ids(text: str) -> list[str]:
    value = approve_value(text)
    if not value[:1].isdigit():
        raise argparse.ArgumentTypeError(f"expected spec ids such as 1,3; got {text!r}")
    return [item.strip() for item in value.split(",")]


def _service(args: argparse.Namespace, store: MessageStore) -> PlanService:
    from sea.cli._runtime import workspace_dir

    if args.workspace is None:
        raise UsageError("give the workspace the plan was made for: --workspace DIR (or "
                         "workspace in the project file, or SEA_WORKSPACE)")
    root = workspace_dir(args.workspace)
    assert root is not None
    return PlanService(store, args.persona, root, run_policy(args), on_event=_report)


def run_policy(args: argparse.Namespace) -> PlanPolicy:
    """The policy of the ``--allow-run``, ``--run-env`` and ``--run-wrapper`` options, with
    this process's ``PATH`` as it is now.

    Raises:
        UsageError: a ``--run-env`` variable is not set, or the wrapper is not found.
    """
    missing = [name for name in args.run_env if name not in os.environ]
    if missing:
        raise UsageError(f"--run-env {missing[0]}: no such variable in this environment; "
                         "set it, or leave the option out")
    names = [*PASSED_ENV, *args.run_env]
    env = {name: os.environ[name] for name in names if name in os.environ}
    try:
        wrapper = tuple(shlex.split(args.run_wrapper or ""))
    except ValueError as exc:
        raise UsageError(f"--run-wrapper {args.run_wrapper}: {exc}") from None
    try:
        return PlanPolicy(run_allowlist=frozenset(args.allow_run),
                          run_path=os.environ.get("PATH", os.defpath), run_env=env,
                          run_wrapper=wrapper)
    except ValueError as exc:
        raise UsageError(f"--allow-run/--run-wrapper: {exc}") from None


def _report(event: PlanEvent) -> None:
    print(printable(event_line(event.to_json())), file=sys.stderr)


def _plan(args: argparse.Namespace, store: MessageStore) -> Plan:
    """The plan the command names, or the persona's current plan.

    Raises:
        PlanNotFound: there is none (exit 2).
    """
    if args.plan_id is None:
        current = store.current_plan(args.persona)
        if current is None:
            raise _Missing(f"persona {args.persona!r} has no current plan; name one "
                           "(sea plan list)")
        return current
    try:
        return store.get_plan(args.persona, args.plan_id)
    except NotFoundError:
        raise _Missing(f"persona {args.persona!r} has no plan {args.plan_id!r} "
                       "(sea plan list)") from None


class _Missing(PlanNotFound, LookupError):
    """No such plan: the command could not start (exit 2)."""


def _print_json(value: Any) -> None:
    print(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


def _list(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        current = store.current_plan(args.persona)
        plans = store.list_plans(args.persona, status=args.status)
    for plan in plans:
        is_current = current is not None and plan.id == current.id
        if args.json:
            print(orjson.dumps({"id": plan.id, "title": plan.title,
                                "status": plan.state.status, "current": is_current,
                                "specs": len(plan.state.action_specs),
                                "created_at": plan.created_at.isoformat(),
                                "version": plan.version}).decode())
            continue
        when = (plan.updated_at or plan.created_at).isoformat(timespec="seconds")
        print(printable(f"{'*' if is_current else ' '} {plan.id} {plan.state.status:<14} "
                        f"{len(plan.state.action_specs)} spec(s)  {when}  "
                        f"\"{' '.join(plan.title.split())}\""))
    if not plans:
        print(printable(f"persona {args.persona!r} has no plans"), file=sys.stderr)
    return 0


def _show(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        plan = _plan(args, store)
        current = store.current_plan(args.persona)
    is_current = current is not None and current.id == plan.id
    if args.json:
        _print_json({**plan_to_dict(plan), "current": is_current})
        return 0
    for line in show_lines(plan, is_current):
        print(printable(line))
    return 0


def show_lines(plan: Plan, is_current: bool) -> list[str]:
    """``sea plan show``'s text: the plan, its specs, selection, approvals, results, events."""
    state = plan.state
    lines = [f"plan {plan.id} \"{' '.join(plan.title.split())}\": {state.status}"
             f"{' (current)' if is_current else ''}, version {plan.version}",
             f"created {plan.created_at.isoformat(timespec='seconds')}"
             + (f", updated {plan.updated_at.isoformat(timespec='seconds')}"
                if plan.updated_at else "")]
    lines += [f"source: message {s.message_id} at {s.timestamp}" for s in plan.sources]
    if plan.rationale:
        lines.append(f"rationale: {plan.rationale}")
    lines += ["content:", *("    " + line for line in plan.content.splitlines() or [""])]
    diffs = {d.spec_id: d for d in state.previews.diffs} if state.previews else {}
    lines.append(f"specs ({len(state.action_specs)}):")
    done = succeeded(state)
    for spec in state.action_specs:
        diff = diffs.get(spec.id)
        mark = "done" if spec.id in done else "valid" if spec.validated else "INVALID"
        lines.append(f"  {mark:<7} " + spec_line({
            "id": spec.id, "kind": spec.base.kind, "path": spec.base.path, "risk": spec.risk,
            "added": diff.added if diff else 0, "removed": diff.removed if diff else 0,
            "diff_summary": spec.preflight.diff_summary if spec.preflight else "",
            "description": spec.base.description}))
        if spec.notes:
            lines.append(f"          notes: {spec.notes}")
    if state.selection is not None:
        lines.append("selection: " + _selection(state.selection.all, state.selection.ids))
    if state.previews is not None:
        lines.append(f"risk score: {state.previews.risk_score:.2f}")
    lines.append(f"approvals ({len(state.approvals)}):")
    lines += [f"  {a.timestamp.isoformat(timespec='seconds')} {a.approver} ({a.actor}): "
              + _selection(a.selection.all, a.selection.ids) for a in state.approvals]
    lines.append(f"results ({len(state.results)}):")
    lines += [f"  {r.finished_at.isoformat(timespec='seconds')} spec {r.spec_id} "
              f"{'ok' if r.ok else 'FAILED'}: {r.message}" for r in state.results]
    lines.append(f"events ({len(state.history)}):")
    lines += ["  " + line for line in history_lines(to_jsonable(state.history))]
    return lines


def _selection(every: bool, ids: Sequence[str]) -> str:
    return "all specs" if every else "specs " + ", ".join(ids)


def _preview(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        plan = _plan(args, store)
        selection = None if args.ids is None else {"ids": args.ids}
        service = _service(args, store)
        preview = service.preview(plan.id, selection)
        request = _open_request(service, plan.id, selection)
    if args.json:
        _print_json({**to_jsonable(preview), "request_id": request})
        return 0
    print(printable(f"plan {plan.id} \"{' '.join(plan.title.split())}\": "
                    f"files: {', '.join(preview.files) or 'none'}"))
    for diff in preview.diffs:
        print(printable(f"{diff.spec_id} {diff.kind} {diff.path} [{diff.risk}] "
                        f"+{diff.added} -{diff.removed}"))
        if diff.diff:
            print(printable(diff.diff.rstrip("\n")))
        if diff.truncated:
            print("… (diff cut)")
    print(f"risk score {preview.risk_score:.2f}")
    if request is not None:
        print(f"approval request {request}: approve what is shown with sea plan approve "
              f"{plan.id} --request {request}")
    return 0


def _open_request(service: PlanService, plan_id: str, selection: dict[str, Any] | None
                  ) -> str | None:
    """The plan's open approval request (it shows what was just previewed), else a new one;
    None when nothing previewed can be approved (specs not valid, or all run)."""
    found = service.get_state(plan_id).approval_request
    if found is not None:
        return found
    try:
        return service.request_approval(plan_id, selection or {"all": True}, actor="user",
                                        reason="shown by sea plan preview").request_id
    except PlanApprovalError:
        return None


def _approve(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        plan = _plan(args, store)
        what: str = args.approve
        ids = None if what == "all" else _up_to(plan, what) if what in RISK_LEVELS \
            else [item.strip() for item in what.split(",")]
        selection = {"all": True} if ids is None else {"ids": ids}
        state = _service(args, store).approve(plan.id, args.approver, selection,
                                              actor="user", reason=args.reason,
                                              shown=Shown.of_state(plan.state, args.request))
    approved = state.approvals[-1].selection
    print(printable(f"plan {plan.id}: {_selection(approved.all, approved.ids)} approved by "
                    f"{args.approver}; it is {state.status}"))
    return 0


def _up_to(plan: Plan, level: str) -> list[str]:
    """The plan's specs still to run of at most ``level`` risk.

    Raises:
        PlanApprovalError: there are none.
    """
    ids = up_to(plan.state, level)
    if not ids:
        raise PlanApprovalError(f"plan {plan.id} has no spec still to run of at most "
                                f"{level} risk; nothing approved")
    return ids


def _reject(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        plan = _plan(args, store)
        state = _service(args, store).reject(plan.id, args.reason, actor="user")
    print(printable(f"plan {plan.id} sent back; it is {state.status}"))
    return 0


def _execute(args: argparse.Namespace) -> int:
    with opened_store(args.db) as store:
        plan = _plan(args, store)
        result = _service(args, store).execute(plan.id, actor="user")
    if args.json:
        _print_json(to_jsonable(result))
    else:
        for item in result.results:
            print(printable(f"spec {item.spec_id} {item.kind} {item.path}: "
                            f"{'ok' if item.ok else 'FAILED'}: {item.message}"))
        for conflict in result.conflicts:
            print(printable(f"spec {conflict.spec_id} {conflict.path}: {conflict.detail}"))
        left = f"; still to run: {', '.join(result.remaining)}" if result.remaining else ""
        print(printable(f"plan {plan.id}: {result.outcome}{left}"))
    if result.outcome == "conflict":
        print("the workspace changed since the approval: approve the plan again "
              "(sea plan preview, sea plan approve)", file=sys.stderr)
    return 0 if result.overall_success else 1


def _export(args: argparse.Namespace) -> int:
    directory = Path(args.output).expanduser()
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--output {args.output}: not a directory")
    with opened_store(args.db) as store:
        if args.plan_id is None:
            written = export_plans(store, args.persona, directory)
        else:
            written = export_plan(store, args.persona, _plan(args, store).id, directory)
    for path in written:
        print(printable(str(path)))
    return 0
