"""The settings a project file may hold: one table, the only place that says which key of
``sea.toml`` sets which option of which command, and which ``SEA_*`` variable sets it too.

``sea config`` lists this table; the loader checks a file against it; the resolver fills
the commands' options from it (:mod:`sea.cli._project.resolve`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """What a setting's value is, in the file and in its environment variable."""

    TEXT = "text"
    """A non-empty string."""
    PATH = "path"
    """A file or directory: relative to the project file's directory (to the current
    directory in an environment variable)."""
    STORE = "store"
    """A SQLite file (a path) or a ``postgresql://`` DSN."""
    PLAYBOOK = "playbook"
    """A playbook's name, or a ``FILE.json`` (a path)."""
    MODEL = "model"
    """A model spec; the file of ``scripted:FILE``, ``local:FILE`` or ``replay:FILE`` is a
    path."""
    PATHS = "paths"
    """An array of paths (``os.pathsep`` between them in an environment variable)."""
    NAMES = "names"
    """An array of strings (commas between them in an environment variable)."""
    TOOLS = "tools"
    """An array of tool sources, ``MODULE[:ATTR]``: a ``FILE.py`` module is a path, as is
    a ``FILE.json`` tool catalogue (``sea validate``)."""
    INTEGER = "integer"
    """A whole number."""
    NUMBER = "number"
    """A number."""
    OPTIONS = "options"
    """A table of a model's constructor options; a value may be ``{ env = "NAME" }``."""
    ASSIGNMENTS = "assignments"
    """A table of ``NAME = VALUE`` pairs, each read as the option's ``NAME=VALUE`` (commas
    between them in an environment variable)."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One key of the project file and the option it sets."""

    key: str
    """The dotted key in the file, e.g. ``model.name``."""
    dest: str
    """The option's attribute on the parsed arguments, e.g. ``model``."""
    kind: Kind
    env: str | None
    """The ``SEA_*`` variable that sets it too (between the file and the flag), if any."""
    commands: tuple[str, ...] | None = None
    """The commands it applies to (``run``, ``memory recent``...), or every command that
    has the option."""

    def applies_to(self, command: str) -> bool:
        """Whether the setting fills the option of ``command`` (a parser's words after
        ``sea``)."""
        return self.commands is None or command in self.commands

    @property
    def listed(self) -> bool:
        """Whether the value is an array (or table) rather than one value."""
        return self.kind in (Kind.PATHS, Kind.NAMES, Kind.TOOLS, Kind.OPTIONS, Kind.ASSIGNMENTS)


_PULSES = ("run", "resume", "worker", "serve")
_ACTORS = ("run", "submit", "schedule add")
_MEMORY = tuple(f"memory {name}" for name in (
    "recent", "pulse", "search", "export", "threads", "delete", "pin", "unpin", "pins"))
_PLANS = tuple(f"plan {name}" for name in (
    "list", "show", "preview", "approve", "reject", "execute", "export"))

SETTINGS: tuple[Setting, ...] = (
    Setting("db", "db", Kind.STORE, "SEA_DB"),
    Setting("persona", "persona", Kind.TEXT, "SEA_PERSONA",
            (*_ACTORS, *_MEMORY, *_PLANS, "serve")),
    Setting("persona_file", "persona_file", Kind.PATH, "SEA_PERSONA_FILE", (*_ACTORS, "serve")),
    Setting("default_playbook", "playbook", Kind.PLAYBOOK, "SEA_PLAYBOOK",
            ("run", "submit", "serve")),
    Setting("playbooks", "playbooks", Kind.PATHS, "SEA_PLAYBOOKS",
            (*_PULSES, *_ACTORS, "graph", "replay", "lsp", "eval")),
    Setting("workspace", "workspace", Kind.PATH, "SEA_WORKSPACE", (*_PULSES, *_PLANS)),
    Setting("playbooks", "paths", Kind.PATHS, "SEA_PLAYBOOKS", ("validate", "migrate")),  # PATHs
    Setting("tools", "tools", Kind.TOOLS, "SEA_TOOLS", (*_PULSES, "validate", "lsp")),
    Setting("mcp", "mcp", Kind.PATHS, "SEA_MCP", (*_PULSES, "validate", "lsp")),
    Setting("ask_before", "ask_before", Kind.NAMES, "SEA_ASK_BEFORE", _PULSES),
    Setting("when_busy", "when_busy", Kind.TEXT, "SEA_WHEN_BUSY", _PULSES),
    Setting("busy_timeout", "busy_timeout", Kind.NUMBER, "SEA_BUSY_TIMEOUT",
            ("run", "resume", "serve")),
    Setting("when_preempted", "when_preempted", Kind.TEXT, "SEA_WHEN_PREEMPTED",
            ("worker", "serve")),
    Setting("tool_timeout", "tool_timeout", Kind.NUMBER, "SEA_TOOL_TIMEOUT", _PULSES),
    Setting("limits", "limit", Kind.ASSIGNMENTS, "SEA_LIMITS", _PULSES),
    Setting("prices", "prices", Kind.PATH, "SEA_PRICES", _PULSES),
    Setting("safety_rules", "safety_rules", Kind.PATH, "SEA_SAFETY_RULES", _PULSES),
    Setting("model.name", "model", Kind.MODEL, "SEA_MODEL", (*_PULSES, "eval")),
    Setting("model.options", "model_option", Kind.OPTIONS, None, (*_PULSES, "eval")),
    Setting("model.structured_method", "structured_method", Kind.TEXT,
            "SEA_STRUCTURED_METHOD", (*_PULSES, "eval")),
    Setting("light_model.name", "light_model", Kind.MODEL, "SEA_LIGHT_MODEL", _PULSES),
    Setting("light_model.options", "light_model_option", Kind.OPTIONS, None, _PULSES),
    Setting("budget.max_calls", "max_calls", Kind.INTEGER, "SEA_MAX_CALLS", _PULSES),
    Setting("budget.max_tokens_in", "max_tokens_in", Kind.INTEGER, "SEA_MAX_TOKENS_IN",
            _PULSES),
    Setting("budget.max_tokens_out", "max_tokens_out", Kind.INTEGER, "SEA_MAX_TOKENS_OUT",
            _PULSES),
    Setting("budget.max_cost", "max_cost", Kind.NUMBER, "SEA_MAX_COST", _PULSES),
    Setting("context.history_tokens", "history_tokens", Kind.INTEGER, "SEA_HISTORY_TOKENS",
            _PULSES),
    Setting("context.response_cache", "response_cache", Kind.PATH, "SEA_RESPONSE_CACHE",
            _PULSES),
    Setting("plans.allow_run", "allow_run", Kind.NAMES, "SEA_PLANS_ALLOW_RUN", _PLANS),
    Setting("plans.run_env", "run_env", Kind.NAMES, "SEA_PLANS_RUN_ENV", _PLANS),
    Setting("plans.run_wrapper", "run_wrapper", Kind.TEXT, "SEA_PLANS_RUN_WRAPPER", _PLANS),
    Setting("worker.concurrency", "concurrency", Kind.INTEGER, "SEA_WORKER_CONCURRENCY",
            ("worker",)),
    Setting("worker.attempts", "attempts", Kind.INTEGER, "SEA_WORKER_ATTEMPTS", ("worker",)),
    Setting("worker.stall_timeout", "stall_timeout", Kind.NUMBER, "SEA_WORKER_STALL_TIMEOUT",
            ("worker",)),
    Setting("worker.heartbeat", "heartbeat", Kind.NUMBER, "SEA_WORKER_HEARTBEAT", ("worker",)),
    Setting("worker.retry_wait", "retry_wait", Kind.NUMBER, "SEA_WORKER_RETRY_WAIT",
            ("worker",)),
    Setting("worker.tick", "tick", Kind.NUMBER, "SEA_WORKER_TICK", ("worker",)),
    Setting("worker.busy_timeout", "busy_timeout", Kind.NUMBER, "SEA_WORKER_BUSY_TIMEOUT",
            ("worker",)),
    Setting("eval.runs", "runs", Kind.PATH, "SEA_EVAL_RUNS", ("eval",)),
    Setting("eval.runs", "evals", Kind.PATH, "SEA_EVAL_RUNS", ("serve",)),  # what it shows
    Setting("server.host", "host", Kind.TEXT, "SEA_SERVE_HOST", ("serve",)),
    Setting("server.port", "port", Kind.INTEGER, "SEA_SERVE_PORT", ("serve",)),
    Setting("server.allow_hosts", "allow_host", Kind.NAMES, "SEA_SERVE_ALLOW_HOSTS", ("serve",)),
    Setting("server.cors_origins", "cors_origin", Kind.NAMES, "SEA_SERVE_CORS_ORIGINS",
            ("serve",)),
    Setting("server.max_body", "max_body", Kind.INTEGER, "SEA_SERVE_MAX_BODY", ("serve",)),
    Setting("server.request_timeout", "request_timeout", Kind.NUMBER,
            "SEA_SERVE_REQUEST_TIMEOUT", ("serve",)),
    Setting("server.keepalive", "keepalive", Kind.NUMBER, "SEA_SERVE_KEEPALIVE", ("serve",)),
    Setting("server.grace", "grace", Kind.NUMBER, "SEA_SERVE_GRACE", ("serve",)),
    Setting("server.log_ttl", "log_ttl", Kind.NUMBER, "SEA_SERVE_LOG_TTL", ("serve",)),
)
"""Every setting, in the order ``sea config`` shows them."""

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}
"""The settings by key (``playbooks`` fills two options of one kind: either is its type)."""

TABLES: frozenset[str] = frozenset(s.key.partition(".")[0] for s in SETTINGS if "." in s.key)
"""The file's tables (``[model]``, ``[budget]``...)."""

SECRET_WORDS = ("api_key", "apikey", "token", "password", "secret", "credential")
"""A model option whose name holds one of these (or ends in ``_key``) is a secret: the file
may only name the environment variable that holds it."""


def is_secret(name: str) -> bool:
    """Whether a model option's name looks like a secret's."""
    lowered = name.lower()
    return lowered.endswith("_key") or any(word in lowered for word in SECRET_WORDS)
