"""``sea init [DIR]``: a new project in one command.

It writes the project file (``sea.toml``: the store in the project, the bundled local
model, the project's playbooks and persona), a persona file, a first playbook of the
project's own that calls the bundled ones, a ``README.md`` of next steps and
``.sea/.gitignore`` (the store stays out of version control). ``sea run --input "Hi"`` in
the directory then runs the project's playbook, as its persona, into its store.

It never overwrites: when any of those files exists, it names it and writes nothing
(SEA386).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from string import Template
from typing import Any

from sea.cli._setup import DEFAULT_PERSONA
from sea.errors import Diagnostic, ProjectFileError, Severity, UsageError

FIRST_PLAYBOOK = "hello"

_PERSONA_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")

PROJECT_TEMPLATE = Template("""\
# The SEA project file. Every `sea` command run in this directory, or below it, reads it.
# A flag overrides a setting here, and a SEA_* environment variable sits in between:
# `sea config` shows each setting, its value and where it comes from.
# Paths are relative to this file's directory.

# The message store: a SQLite file, or a postgresql:// DSN.
db = ".sea/memory.sqlite"

# The persona that speaks: its id, and the file of its name and system prompt (JSON).
persona = "$persona"
persona_file = "persona.json"

# Directories searched for playbooks before the bundled ones, and the one `sea run` runs.
playbooks = ["playbooks"]
default_playbook = "$playbook"

# A directory the workspace tools may read (and plans may change, once a person approves).
# workspace = "workspace"

# Host tools: Python modules (MODULE[:ATTR], or FILE.py[:ATTR]) and MCP server configs.
# tools = ["tools.py"]
# mcp = ["mcp.json"]
# ask_before = ["plan_propose"]    # tools that wait for a person's approval
# tool_timeout = 600               # seconds one tool call may take

# Prices per million tokens (for budget.max_cost), and rules every model call carries.
# prices = "prices.json"
# safety_rules = "safety.txt"

[model]
# "local" is the bundled SmolLM2-135M (the `local` extra; offline). Any LangChain provider
# works as PROVIDER:NAME, e.g. "openai:gpt-4o-mini" (the `openai` extra).
name = "local"
# The model's constructor options. A secret is never written here: name the environment
# variable that holds it, as { env = "NAME" }.
# options = { temperature = 0.2, api_key = { env = "OPENAI_API_KEY" } }

# [light_model]                     # the lightweight model (default: the model above)
# name = "openai:gpt-4o-mini"

[budget]
# Bounds on one pulse's model calls (default: none); max_cost needs prices.
# max_calls = 20
# max_tokens_in = 50000
# max_tokens_out = 5000
# max_cost = 0.05

# [limits]                          # bounds of a pulse (docs: reference/limits); --limit NAME=VALUE
# max_steps = 500
# max_tool_result_chars = 1000000

# [worker]                          # `sea worker` (PostgreSQL stores)
# concurrency = 1
""")

PLAYBOOK: dict[str, Any] = {
    "name": FIRST_PLAYBOOK,
    "display_name": "Talk with the user",
    "description": "This project's first playbook: the bundled router chooses what to do "
    "(answer at once, recall memories...), the chosen playbook gathers what is needed, then "
    "the bundled speaker answers. Make it yours: add nodes before `speak`, or call your "
    "own playbooks.",
    "input_schema": [],
    "user_selectable": True,
    "start_node": "route",
    "nodes": [
        {"id": "route", "type": "subplay", "playbook": "sub_router_user",
         "error_next": "speak", "next": "check"},
        {"id": "check", "type": "pass", "conditional_next": {
            "field": "selected_playbook", "operator": "eq",
            "cases": {"basic_chat": "speak"}, "default": "run"}},
        {"id": "run", "type": "exec", "playbook_source": "selected_playbook",
         "args_source": "selected_args", "error_next": "speak", "next": "speak"},
        {"id": "speak", "type": "subplay", "playbook": "sub_speak"},
    ],
}

README_TEMPLATE = Template("""\
# $name

A SEA project: `sea.toml` holds its settings, so commands need no flags.

    sea run --input "Hi"              # a pulse of $name, on the bundled local model
    sea memory recent                 # what $name remembers (in .sea/memory.sqlite)
    sea config                        # every setting, and where it comes from
    sea validate --strict playbooks   # check the playbooks

Next steps:

- Edit `persona.json`: $name's name and system prompt.
- Edit `playbooks/$playbook.json`, or add playbooks beside it (`sea run NAME` runs one).
- Choose another model in `sea.toml` (`[model] name = "openai:gpt-4o-mini"`); give its
  API key as `options = { api_key = { env = "OPENAI_API_KEY" } }`, never in the file.
- Bound what a pulse may spend in `[budget]`.
""")


def register(subparsers: Any) -> None:
    """Add ``sea init``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "init", help="start a project: sea.toml, a persona, a first playbook, a README",
        description="Write a new project into DIR: the project file, a persona, a first "
        "playbook calling the bundled ones, and a README of next steps. Nothing is "
        "overwritten: if any of the files exists, nothing is written.",
    )
    parser.add_argument("dir", nargs="?", default=".", metavar="DIR",
                        help="the project's directory (default: the current one; made if "
                        "missing)")
    parser.add_argument("--persona", default=DEFAULT_PERSONA.id, type=_persona_id,
                        metavar="ID", help=f"the persona's id (default: {DEFAULT_PERSONA.id})")
    parser.add_argument("--name", help="the persona's name (default: the id, capitalized)")
    parser.set_defaults(func=init_command)


def _persona_id(text: str) -> str:
    if not _PERSONA_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a persona id is letters, digits, '_', '.' and '-' (at most 64), "
            "e.g. aoi")
    return text


def project_files(persona: str, name: str) -> dict[str, str]:
    """The files of a new project, by path relative to its directory."""
    import json

    prompt = DEFAULT_PERSONA.system_prompt.replace(DEFAULT_PERSONA.name, name)
    persona_file = {"name": name, "system_prompt": prompt}  # its id is sea.toml's persona
    return {
        "sea.toml": PROJECT_TEMPLATE.substitute(persona=persona, playbook=FIRST_PLAYBOOK),
        "persona.json": json.dumps(persona_file, indent=2, ensure_ascii=False) + "\n",
        f"playbooks/{FIRST_PLAYBOOK}.json": json.dumps(PLAYBOOK, indent=2) + "\n",
        "README.md": README_TEMPLATE.substitute(name=name, playbook=FIRST_PLAYBOOK),
        ".sea/.gitignore": "# the store and its checkpoints: data, not source\n*\n",
    }


def init_command(args: argparse.Namespace) -> int:
    """Handler of ``sea init``."""
    import sys

    root = Path(args.dir).expanduser()
    if root.exists() and not root.is_dir():
        raise UsageError(f"sea init {args.dir}: not a directory", code="SEA386")
    files = project_files(args.persona, args.name or args.persona[:1].upper() + args.persona[1:])
    taken = [root / name for name in files if (root / name).exists()
             or (root / name).is_symlink()]
    if taken:
        raise ProjectFileError([Diagnostic(
            "SEA386", Severity.ERROR, "already exists; sea init never overwrites, and wrote "
            "nothing", file=str(path),
            hint=None if path != taken[-1] else "init another directory (sea init DIR), or "
            "move the file(s) away") for path in taken])
    for name, text in files.items():
        path = root / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as file:
                file.write(text)
        except OSError as exc:
            raise UsageError(f"sea init: cannot write {path}: {exc.strerror}",
                             code="SEA386") from None
    where = "" if args.dir == "." else f"cd {args.dir} && "
    print(f"a new SEA project in {root.resolve()}; next: {where}sea run --input \"Hi\"",
          file=sys.stderr)
    return 0
