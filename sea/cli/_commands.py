"""The ``sea`` commands and their one-line help, known without importing them.

``sea --help`` and a mistyped command (``sea rnu``) answer from this table: the command
modules (``sea run``'s imports LangChain and the engine) are imported only for the command
that runs. Each module's ``register`` gives its parser the same help line
(``tests/test_flags.py`` compares them).
"""

from __future__ import annotations

COMMANDS: dict[str, str] = {
    "config": "show a command's settings and where each comes from",
    "eval": "run eval sets of cases on models and report pass rates (JSON, JUnit), vs a baseline",
    "graph": "print a playbook as a Mermaid flowchart",
    "init": "start a project: sea.toml, a persona, a first playbook, a README",
    "keys": "the API keys of sea serve: add (printed once), list, revoke",
    "lsp": "serve the playbook language to an editor (Language Server Protocol, stdio)",
    "memory": "inspect, search, export and import SAIMemory",
    "migrate": "rewrite SAIVerse-format playbooks into explicit SEA form",
    "plan": "list, show, preview, approve, reject, execute and export plans",
    "pulse": "show a submitted pulse, or answer one that waits",
    "pulses": ("list the pulses that wait for an answer (any store), then submitted "
               "pulses: queued, running, preempted, waiting, done, failed, dropped "
               "(PostgreSQL)"),
    "replay": "replay a recorded pulse offline and compare it with the recording",
    "resume": "answer a waiting pulse's approval request and continue it",
    "run": "run one pulse of a persona (streams the reply)",
    "schedule": "run a persona's playbook every so often, on the workers",
    "serve": "serve pulses over HTTP/SSE (LangGraph-compatible API and /v1)",
    "stats": "statistics of model and tool calls (per node, pattern, model, tool)",
    "submit": "queue a pulse for the workers (`sea worker`); prints its id",
    "validate": "check playbooks (schema and static checks)",
    "worker": "run queued pulses and schedules (PostgreSQL) until stopped",
}
"""Each command (a module of :mod:`sea.cli` of the same name) and its help line."""
