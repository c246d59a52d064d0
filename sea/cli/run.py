"""``sea run``: run one pulse of a persona, streaming its reply to the terminal."""

from __future__ import annotations

import argparse
import asyncio
import shlex
import signal
import sys
import uuid
from collections.abc import Coroutine, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from saimemory import MessageStore, Persona, open_store
from saimemory.base import DEFAULT_BUDGET
from saimemory.errors import ReadOnlyStoreError
from saimemory.sqlite import writable
from sea.cli._answers import Answering, add_answer_arguments, answer_of, terminal_asker
from sea.cli._budget import add_budget_arguments, budget_words
from sea.cli._limits import add_limit_argument, limit_words
from sea.cli._numbers import seconds
from sea.cli._runtime import model_option, runtime_args, search_dirs
from sea.cli._setup import add_db_argument, checkpoint_location, load_persona
from sea.cli._text import printable
from sea.cli._toolsources import add_tool_arguments, host_tools
from sea.cli._view import JsonLinesView, JsonView, TerminalView, View
from sea.engine.events import Event
from sea.errors import UsageError
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.structured import METHODS
from sea.resources import bundled_playbooks_dir
from sea.trace.recorder import (
    TraceRecorder,
    history_snapshot,
    short_term_snapshot,
    write_trace,
)
from sea.trace.replay import current_hashes

DEFAULT_PLAYBOOK = "meta_user"


def register(subparsers: Any) -> None:
    """Add ``sea run``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "run", help="run one pulse of a persona (streams the reply)"
    )
    parser.add_argument(
        "playbook", nargs="?", default=DEFAULT_PLAYBOOK, metavar="PLAYBOOK",
        help=f"playbook name or file (default: {DEFAULT_PLAYBOOK})",
    )
    parser.add_argument("--input", "-i", required=True, type=_user_input,
                        help="what the user says (not empty)")
    parser.add_argument("--persona", help="persona id (default: the bundled persona, aoi)")
    parser.add_argument("--persona-file", help="JSON file with id, name and system_prompt")
    add_runtime_arguments(parser)
    add_answer_arguments(parser, resume=False)
    parser.add_argument("--record", metavar="FILE", help="write the pulse's trace to FILE")
    parser.set_defaults(func=run_command)


def add_runtime_arguments(parser: argparse.ArgumentParser) -> None:
    """The options ``sea run`` and ``sea resume`` share: store, models, playbooks, approval
    policy, a busy persona, and how the pulse is shown."""
    add_model_arguments(parser)
    add_busy_arguments(parser)
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON object at the end")
    output.add_argument(
        "--events", choices=("jsonl",),
        help="print every event as it happens, one JSON object per line (for scripts)",
    )
    parser.add_argument(
        "--strict", action="store_true",
        help="exit 1 when a node failed, even if its error_next handled it (the pulse still "
        "ends ok; each handled failure is reported)",
    )


def add_busy_arguments(parser: argparse.ArgumentParser, timeout: float = 300.0) -> None:
    """What a pulse does while another pulse of its persona runs: ``--when-busy``,
    ``--busy-timeout``."""
    parser.add_argument(
        "--when-busy", choices=("wait", "fail"), default="wait",
        help="while another pulse of the persona runs (here or in another process on the "
        "same store): wait for its turn (default) or fail at once (SEA595, nothing stored)",
    )
    parser.add_argument(
        "--busy-timeout", type=seconds, default=timeout, metavar="SECONDS",
        help=f"the longest wait for the persona's turn (default: {timeout:g})",
    )


def add_preempted_argument(parser: argparse.ArgumentParser) -> None:
    """What a running pulse does once it stopped for a pulse of its persona of higher
    priority: ``--when-preempted``."""
    parser.add_argument(
        "--when-preempted", choices=("resume", "drop"), default="resume",
        help="a running pulse stops at its next node for a pulse of its persona of higher "
        "priority (user > autonomous > scheduled), then goes on from there after it "
        "(resume, default) or ends, what it stored kept (drop)",
    )


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of everything that runs pulses: store, models, playbooks, workspace and
    approval policy."""
    add_db_argument(parser)
    parser.add_argument(
        "--model", default="local",
        help="normal model: local, local:PATH, PROVIDER:NAME for any LangChain provider "
        "(openai:NAME, anthropic:NAME, ollama:NAME, ...), scripted:FILE, replay:TRACE "
        "(default: local)",
    )
    parser.add_argument(
        "--model-option", action="append", default=[], metavar="KEY=VALUE", type=model_option,
        help="option for the normal model's constructor, e.g. base_url=http://host/v1 or "
        "temperature=0.2 (VALUE is read as JSON when it parses, else as text; repeatable)",
    )
    parser.add_argument("--light-model", help="lightweight model (default: the normal model)")
    parser.add_argument(
        "--light-model-option", action="append", default=[], metavar="KEY=VALUE",
        type=model_option, help="option for the lightweight model (as --model-option)",
    )
    parser.add_argument(
        "--structured-method", default="auto", choices=("auto", *METHODS),
        help="how models are asked for structured answers: auto (the best the model accepts, "
        "remembered), json_schema, json_mode, function_calling or prompt",
    )
    parser.add_argument(
        "--playbooks", action="append", default=[], metavar="DIR",
        help="directory searched for playbooks before the bundled ones (repeatable)",
    )
    parser.add_argument(
        "--workspace", metavar="DIR",
        help="a directory the persona's workspace tools (list_files, file_exists, read_file, "
        "search_files) may read and its plans may change once a person approves (the plan "
        "tools); without it they are absent",
    )
    parser.add_argument(
        "--ask-before", action="append", default=[], metavar="TOOL",
        help="a tool that runs only after a person approves the call: the pulse waits "
        "(status waiting) and `sea resume PULSE_ID --approve` or `--deny` continues it "
        "(repeatable)",
    )
    parser.add_argument(
        "--otel", action="store_true",
        help="trace and measure every pulse with OpenTelemetry, exported over OTLP/HTTP as "
        "the OTEL_* variables say (OTEL_EXPORTER_OTLP_ENDPOINT...; needs the otel extra)",
    )
    add_tool_arguments(parser)
    add_budget_arguments(parser)
    add_limit_argument(parser)


def run_command(args: argparse.Namespace) -> int:
    """Handler of ``sea run``."""
    return asyncio.run(terminable(_run(args)))


async def terminable(work: Coroutine[Any, Any, int]) -> int:
    """Run ``work`` so that SIGTERM ends it like Ctrl-C: the pulse is cancelled, its partial
    reply is not stored and its checkpoints are removed, and the command exits 130."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    installed = False

    def interrupted() -> None:  # Ctrl-C: said at once; a second one quits without waiting
        loop.remove_signal_handler(signal.SIGINT)
        print("\nsea: stopping the pulse (Ctrl-C again to quit at once)", file=sys.stderr,
              flush=True)
        if task is not None:
            task.cancel()

    if task is not None:
        with suppress(NotImplementedError, RuntimeError):  # not the main thread, or no signals
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
            loop.add_signal_handler(signal.SIGINT, interrupted)
            installed = True
    try:
        return await work
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGTERM)
            loop.remove_signal_handler(signal.SIGINT)


def playbook_library(target: str, dirs: list[str]) -> tuple[PlaybookLibrary, str]:
    """The library to run with and the playbook's name (``target`` may be a file).

    Raises:
        UsageError: a ``--playbooks`` entry is not a directory.
    """
    search = search_dirs(dirs)
    path = Path(target)
    if target.endswith(".json") or path.is_file():
        from sea.lang.loader import load_playbook_file

        playbook = load_playbook_file(path)
        return PlaybookLibrary.bundled([path.parent, *search]), playbook.name
    return PlaybookLibrary.bundled(search), target


def _user_input(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the input is empty; say something (--input TEXT)")
    return text


async def _run(args: argparse.Namespace) -> int:
    library, name = playbook_library(args.playbook, args.playbooks)
    library.get(name)  # a missing or invalid playbook fails before anything is loaded
    for left_out in library.skipped():  # a FIFO, a device or a huge file named *.json
        print(printable(f"sea: warning: {left_out.format_human()}"), file=sys.stderr)
    persona = load_persona(args.persona_file, args.persona)
    record = None if args.record is None else record_path(args.record)
    setup = runtime_args(args, library)
    async with host_tools(args.tools, args.mcp) as tools:
        store = writable_store(setup.location)
        view = view_of(args)
        try:
            runtime = Runtime(setup.config(store, tools=tools))
            status = await _pulse(runtime, library, persona, name, args.input, view, record,
                                  answering_of(args, view))
        except asyncio.CancelledError:
            if isinstance(view, TerminalView):
                view.pause()  # no stale status line is left on the terminal
            raise
        finally:
            store.close()
            setup.flush_telemetry()
    return finish(args, view, status, recorded_dirs(library))


def view_of(args: argparse.Namespace) -> View:
    """How the pulse is shown: ``--json``, ``--events jsonl``, or live on the terminal."""
    if args.json:
        return JsonView()
    if args.events == "jsonl":
        return JsonLinesView()
    return TerminalView(sys.stdout, sys.stderr)


def answering_of(args: argparse.Namespace, view: View) -> Answering:
    """How a waiting pulse is answered: ``--approve``/``--deny``, else the person at the
    terminal (stdin and the live view on one), else not (it stays waiting)."""
    answer = answer_of(args)
    if answer is None and isinstance(view, TerminalView) and sys.stdin.isatty() \
            and sys.stderr.isatty():
        return Answering(ask=terminal_asker(before=view.pause))
    return Answering(answer)


def finish(args: argparse.Namespace, view: View, status: str, dirs: Sequence[str]) -> int:
    """The exit code of a pulse (0 ok or waiting, 1 error, or a handled failure with
    ``--strict``); a waiting pulse's resume command is printed on stderr."""
    if status == "waiting":
        approve, deny, note = resume_commands(args, view, dirs)
        print(f"the pulse waits for approval; continue it with one of:\n  {approve}\n  {deny}"
              + (f"\n{note}" if note else ""), file=sys.stderr)
        return 0
    if status != "ok":  # a pulse the runtime could not start as asked (e.g. not waiting): 2
        return 2 if view.error and view.error.get("code") == UsageError.code else 1
    return 1 if args.strict and view.handled else 0


def resume_commands(
    args: argparse.Namespace, view: View, dirs: Sequence[str]
) -> tuple[str, str, str]:
    """The two ``sea resume`` commands (approve, deny) that continue the waiting pulse with
    the same store, playbooks, models, approval policy, budgets and prices, each whole to
    paste into a shell; and a note when model options must be repeated (they are left out:
    they may hold secrets)."""
    words: list[str] = []
    if args.db is not None:
        words += ["--db", args.db]
    for directory in dirs:
        words += ["--playbooks", directory]
    if args.model != "local":
        words += ["--model", args.model]
    if args.light_model is not None:
        words += ["--light-model", args.light_model]
    if args.workspace is not None:
        words += ["--workspace", str(Path(args.workspace).expanduser().resolve())]
    for tool in args.ask_before:
        words += ["--ask-before", tool]
    for spec in args.tools:
        words += ["--tools", spec]
    for config in args.mcp:
        words += ["--mcp", str(Path(config).expanduser().resolve())]
    words += budget_words(args)
    words += limit_words(args.limit)
    note = ("(add the same --model-option / --light-model-option to either)"
            if args.model_option or args.light_model_option else "")
    approve, deny = (shlex.join(["sea", "resume", view.pulse_id, answer, *words])
                     for answer in ("--approve", "--deny"))
    return approve, deny, note


def record_path(target: str) -> Path:
    """The ``--record`` file, checked before the pulse runs so its trace is not lost.

    Raises:
        UsageError: the file's directory does not exist or is not writable, or the path is
            a directory or another file that is not a regular one, or a file that cannot be
            written (a directory or file without any write bit counts as not writable, for
            root too).
    """
    path = Path(target).expanduser()
    if path.is_dir():
        raise UsageError(f"--record {target}: is a directory; give a file name, e.g. trace.json")
    if not path.parent.is_dir():
        raise UsageError(
            f"--record {target}: the directory {path.parent} does not exist; create it first"
        )
    if path.exists() and not path.is_file():
        raise UsageError(f"--record {target}: is not a regular file; give a file name")
    if path.exists() and not writable(path):
        raise UsageError(f"--record {target}: the file is not writable (nothing was run)")
    if not path.exists() and not writable(path.parent):
        raise UsageError(
            f"--record {target}: the directory {path.parent} is not writable; record "
            "somewhere else (nothing was run)"
        )
    return path


def writable_store(location: str) -> MessageStore:
    """The store a pulse writes to, opened; refused before the pulse starts when it (or the
    checkpoint file beside it) is read-only.

    Raises:
        ReadOnlyStoreError: the store, or its checkpoint file, cannot be written.
    """
    store = open_store(location)
    if getattr(store, "read_only", False):
        store.close()
        raise ReadOnlyStoreError(
            f"{location} is read-only, and a pulse writes to the store; make it writable or "
            "give another --db (nothing was run)"
        )
    if "://" not in location:
        checkpoints = Path(checkpoint_location(location))
        if checkpoints.exists() and not writable(checkpoints):
            store.close()
            raise ReadOnlyStoreError(
                f"the checkpoint file {checkpoints} is read-only, and a pulse writes to it; "
                "make it writable (nothing was run)"
            )
    return store


def recorded_dirs(library: PlaybookLibrary) -> list[str]:
    """The directories searched before the bundled playbooks, as absolute paths (a trace
    keeps them so that a replay from another directory finds the same playbooks)."""
    bundled = bundled_playbooks_dir().resolve()
    return [str(d.resolve()) for d in library.dirs if d.resolve() != bundled]


async def _pulse(
    runtime: Runtime,
    library: PlaybookLibrary,
    persona: Persona,
    name: str,
    text: str,
    view: View,
    record: Path | None,
    answering: Answering,
) -> str:
    store = runtime.services.store
    pulse_id = uuid.uuid4().hex
    recorder = None
    if record is not None:
        history = history_snapshot(store, persona.id, DEFAULT_BUDGET, pulse_id)
        recorder = TraceRecorder(persona, name, text, pulse_id, history,
                                 playbook_dirs=recorded_dirs(library),
                                 pins=[pin.text for pin in store.pins(persona.id)],
                                 short_term=short_term_snapshot(store, persona.id,
                                                                DEFAULT_BUDGET, pulse_id))

    def take(event: Event) -> None:
        if recorder is not None:
            recorder.observe(event)
        view.show(event)

    await answering.drive(runtime.astream_pulse(persona, name, text, pulse_id=pulse_id),
                          lambda answer: runtime.astream_resume(pulse_id, answer), take)
    status = view.finish()
    if recorder is not None:
        assert record is not None
        write_trace(recorder.trace(current_hashes(library, recorder.playbooks_run())), record)
    return status
