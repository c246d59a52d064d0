"""The one exception tree of the engine, and the located diagnostic record.

Every error the engine raises derives from :class:`SeaError` and carries a stable
``code``. Code ranges:

* ``SEA001``–``SEA199``: playbook documents (syntax, schema, static checks), reported as
  :class:`Diagnostic` records, raised together in a :class:`PlaybookError`.
* ``SEA300``–``SEA399``: usage of the command line and of the host API.
* ``SEA500``–``SEA699``: execution (nodes, tools, models, bounds, cancellation).
* ``SEA700``–``SEA799``: record and replay.
* ``SEA800``–``SEA899``: the server (``sea serve``: its database, requests, keys, streams).

The store (``saimemory``) has its own tree, ``saimemory.errors.MemoryStoreError``.
"""

from __future__ import annotations

from typing import Any

from sea.diagnostics import Diagnostic as Diagnostic  # re-exported: its home is here too
from sea.diagnostics import Severity as Severity


class SeaError(Exception):
    """Base of every error the engine raises on purpose."""

    code: str = "SEA000"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class PlaybookError(SeaError, ValueError):
    """A playbook document is invalid; ``diagnostics`` lists every problem found."""

    code = "SEA100"

    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        self.diagnostics = tuple(diagnostics)
        errors = [d for d in self.diagnostics if d.severity is Severity.ERROR]
        ranked = errors or list(self.diagnostics)
        first = ranked[0] if ranked else None
        summary = first.format_human() if first else "invalid playbook"
        more = len(errors) - 1
        if more > 0:
            summary += f"\n(and {more} more error{'s' if more > 1 else ''})"
        super().__init__(summary, code=first.code if first else None)


class PlaybookFileNotFound(PlaybookError, LookupError):
    """A playbook file that does not exist (``SEA001``): a command that was to run it could
    not start (exit 2, as for any name that does not exist)."""


class UsageError(SeaError, ValueError):
    """The host or the command line asked for something that cannot be done as asked."""

    code = "SEA300"


class ProjectFileError(UsageError):
    """The project file (``sea.toml`` or ``[tool.sea]`` in ``pyproject.toml``) cannot be
    used: ``diagnostics`` lists every problem, located by line and column.

    Codes: ``SEA381`` the file cannot be read or is not TOML; ``SEA382`` an unknown key;
    ``SEA383`` a value of the wrong type or out of range; ``SEA384`` a secret written in the
    file; ``SEA385`` a referenced environment variable that is not set; ``SEA386`` ``sea
    init`` would overwrite a file.
    """

    code = "SEA380"

    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(d.format_human() for d in self.diagnostics),
                         code=self.diagnostics[0].code if self.diagnostics else None)


class EvalSetError(UsageError):
    """An eval set (``sea eval``) cannot be used: ``diagnostics`` lists every problem, each
    located (file, line, case, field) with its fix. ``SEA396`` unreadable; ``SEA397`` a case
    not of ``schemas/evalset.schema.json``'s shape; ``SEA398`` a duplicate id, a bad regex."""

    code = "SEA395"

    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(d.format_human() for d in self.diagnostics),
                         code=self.diagnostics[0].code if self.diagnostics else None)


class ExecutionError(SeaError, RuntimeError):
    """A pulse failed: names the playbook, the node and the cause."""

    code = "SEA500"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        playbook: str | None = None,
        node: str | None = None,
    ) -> None:
        self.playbook = playbook
        self.node = node
        where = ".".join(p for p in (playbook, node) if p)
        super().__init__(f"{where}: {message}" if where else message, code=code)
        self.detail = message
        self.steps: int | None = None
        """The pulse's node runs up to the failure, the failing node's included (set by the
        engine, so a caller that routes a callee's failure counts the callee's nodes)."""
        self.values: dict[str, Any] = {}
        """Variables the failed node still sets when its ``error_next`` takes over (a
        subagent call's ``_subagent_chronicle``)."""

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form used in results, events and traces."""
        return {
            "code": self.code,
            "message": self.detail,
            "playbook": self.playbook,
            "node": self.node,
        }


class PersonaBusy(SeaError):
    """Another pulse of the persona is running (in this process or another) and the host
    chose not to wait, or waited past its timeout; this pulse did nothing and stored
    nothing. Try again later, or let it wait (``RuntimeConfig(when_busy="wait")``)."""

    code = "SEA595"


class PulseLost(SeaError):
    """The worker running a queued pulse stopped (killed, crashed, cut off from the
    database) and another worker took the pulse over, or gave up after the last attempt."""

    code = "SEA596"


class PulseCancelled(SeaError):
    """The host cancelled the pulse. Never routed to ``error_next``, never swallowed.
    ``SEA597``: it stopped for a queued pulse of higher priority (``sea.host.turns``)."""

    code = "SEA590"


class ToolNotFound(ExecutionError):
    """A node asked for a tool that is not registered with the runtime."""

    code = "SEA530"


class ToolArgumentError(ExecutionError):
    """Arguments for a tool do not match its argument schema (names the argument and types)."""

    code = "SEA531"


class ToolFailed(ExecutionError):
    """A tool raised while running; the original exception is the ``__cause__``."""

    code = "SEA532"


class ToolTimedOut(ToolFailed):
    """A tool did not answer within its deadline (``Limits.tool_timeout_s``); the call was
    abandoned."""

    code = "SEA533"


class ToolResultRefused(ToolFailed):
    """A tool returned text the pulse cannot keep (a NUL character, which the message store
    refuses and PostgreSQL cannot hold); the message names the tool and where in its result."""

    code = "SEA538"


class ActionSkipped(ExecutionError):
    """A pipeline action did not run because an earlier action of its plan failed (an
    action's outcome, never a node failure)."""

    code = "SEA535"


class MemoryWriteFailed(ExecutionError):
    """The store refused a message a node wrote (the store's code and reason are in the text)."""

    code = "SEA540"


class NodeFailed(ExecutionError):
    """A node could not do its work (a template, an expression or a value it needed failed)."""

    code = "SEA550"


class BoundExceeded(ExecutionError):
    """A pulse ran past its step budget or a node past its visit bound (names the loop)."""

    code = "SEA560"


class SizeLimitExceeded(ExecutionError):
    """Something grew past a size limit of the host's ``Limits`` (a state value, the whole
    state, a tool result, a model answer, a stored message); ``limit`` names the field.

    Unlike the step and visit bounds it is the node's failure: an ``error_next`` routes it,
    and nothing of the oversized value is kept.
    """

    code = "SEA565"

    def __init__(
        self,
        message: str,
        *,
        limit: str,
        playbook: str | None = None,
        node: str | None = None,
    ) -> None:
        super().__init__(message, playbook=playbook, node=node)
        self.limit = limit
        """The ``Limits`` field that was exceeded, e.g. ``max_state_chars``."""


class CallArgumentError(ExecutionError):
    """Arguments for a playbook do not match its ``input_schema`` (missing, wrong type)."""

    code = "SEA570"


class CallTargetError(ExecutionError):
    """A ``subplay``/``exec`` target is unknown, not allowed, or the call would recurse."""

    code = "SEA571"


class CallDepthExceeded(BoundExceeded):
    """Sub-playbook calls are nested deeper than the runtime's limit."""

    code = "SEA572"


class ApprovalDenied(ExecutionError):
    """A person (through the host) declined an action that needed approval."""

    code = "SEA575"


class PlanError(SeaError):
    """A plan call (``sea.engine.plans``) could not be done as asked; nothing was changed."""

    code = "SEA582"


class PlanNotFound(PlanError):
    """The persona has no plan with the id given (or no current plan)."""

    code = "SEA583"


class PlanTransitionError(PlanError):
    """A lifecycle call that the plan's status does not allow (execute a proposed plan,
    approve a completed one); names the status and the calls allowed in it."""

    code = "SEA584"

    def __init__(
        self, message: str, *, plan_id: str, status: str, call: str, allowed: tuple[str, ...]
    ) -> None:
        super().__init__(message)
        self.plan_id = plan_id
        self.status = status
        self.call = call
        self.allowed = allowed


class PlanApprovalError(PlanError):
    """An approval (or a request for one) that cannot be given: a selection naming no spec or
    unknown ones, specs that failed validation, or high-risk specs approved by no person."""

    code = "SEA585"


class StaleApproval(PlanApprovalError):
    """An approval of something other than what the person was shown: the request it
    answers is no longer the plan's open one, or a spec's diff or risk changed since it was
    shown. Nothing is approved and the plan is sent back for review (``pending_review``)."""

    code = "SEA587"


class PlanConcurrencyError(PlanError):
    """The plan was changed by someone else while this call worked on it; read it again."""

    code = "SEA586"


class ReplayError(SeaError):
    """A trace cannot be read or replayed."""

    code = "SEA700"


class ServeError(SeaError):
    """A request to the server cannot be served (``sea serve``); ``status`` is the HTTP
    status its answer carries."""

    code = "SEA800"
    status = 400


class ServerDatabaseError(ServeError):
    """The server's own tables (conversations, runs, event logs, keys) cannot be opened or
    used in the store's database."""

    code = "SEA801"
    status = 503


class ResourceNotFound(ServeError, LookupError):
    """A thread, run, pulse, persona or assistant the request names does not exist, or
    belongs to a tenant (or persona) the key may not see: both answer the same 404."""

    code = "SEA820"
    status = 404


class RunConflict(ServeError):
    """A run cannot start now: its conversation's persona is running another pulse and
    the request asked to be refused then (``multitask_strategy`` reject)."""

    code = "SEA821"
    status = 409


class ForkUnsupported(ServeError):
    """A request asked to run from an older checkpoint (a fork, regenerate, time travel):
    SAIMemory's history is append-only, so a conversation has one line only."""

    code = "SEA822"
    status = 409


class StateEditUnsupported(ServeError):
    """A request asked to edit a conversation's state (``update_state``,
    ``Command(update=...)``, ``goto`` other than ``__end__``): a conversation's state is
    its stored memory, written only by pulses."""

    code = "SEA823"
    status = 422


class NotInterrupted(ServeError):
    """A resume answered a conversation (or pulse) that waits for no approval."""

    code = "SEA824"
    status = 409


class InvalidRequest(ServeError):
    """A request's body has the right JSON shape but a value the server cannot take (an
    empty input, a stream mode or strategy SEA does not know, a resume it cannot read)."""

    code = "SEA825"
    status = 422


class AlreadyExists(ServeError):
    """A persona or thread with the id a request creates already exists."""

    code = "SEA826"
    status = 409


class ServerShuttingDown(ServeError):
    """The server is shutting down (it received SIGTERM): it takes no new request, and a
    run still under way when its grace period ends is cancelled with this error."""

    code = "SEA850"
    status = 503
    hint = "send it again: another server process (or this one, restarted) answers it"


# -- keys, roles, tenants and request limits of the server: SEA860-SEA889 --------------------


class AuthenticationError(ServeError):
    """The request carries no API key, or one the server does not know or that was revoked
    (``Authorization: Bearer <key>`` or ``x-api-key: <key>``)."""

    code = "SEA860"
    status = 401
    hint = ("send the key as 'Authorization: Bearer <key>' or 'x-api-key: <key>'; "
            "an administrator creates one with: sea keys add NAME --role read")
    headers = {"WWW-Authenticate": 'Bearer realm="sea"'}


class PermissionDeniedError(ServeError):
    """The request's API key lacks the role the route needs (read, run, approve, author,
    memory or admin)."""

    code = "SEA861"
    status = 403
    hint = "ask an administrator for a key with that role (sea keys add NAME --role ROLE)"


class KeySpecError(ServeError, UsageError):
    """An API key cannot be made as asked: an empty or malformed name, an unknown role, a
    malformed tenant or persona pattern."""

    code = "SEA865"
    status = 422
    hint = None


class KeyNotFoundError(ServeError, LookupError):
    """``sea keys revoke`` names no key (neither an id nor the name of a key)."""

    code = "SEA866"
    status = 404
    hint = "sea keys list shows the keys, their ids and names"


class KeyNameTakenError(ServeError, UsageError):
    """A key that is not revoked already has this name (the name is what approvals record,
    so it names one key at a time)."""

    code = "SEA867"
    status = 409
    hint = "choose another name, or revoke the old key first (sea keys revoke NAME)"


class BindRefusedError(ServeError, UsageError):
    """``sea serve`` was asked to listen on an address other machines can reach while the
    store holds no API key: everyone could use the server."""

    code = "SEA870"
    status = 400
    hint = None


class HostNotAllowedError(ServeError):
    """The request's ``Host`` header names a host the server does not serve (a guard
    against DNS rebinding: a web page of another site reaching a local server)."""

    code = "SEA871"
    status = 400
    hint = "give the name with sea serve --allow-host NAME (or call the server by 127.0.0.1)"


class BodyTooLargeError(ServeError):
    """The request's body is larger than the server accepts."""

    code = "SEA872"
    status = 413
    hint = "send less (a playbook, a message or an answer fits well within the limit)"


class RequestTimeoutError(ServeError):
    """The server did not finish the request within its time limit (streams and waits
    are not limited)."""

    code = "SEA873"
    status = 503
    hint = "try again; stream long work (runs/stream) instead of waiting for it in one request"


class SecurityOptionError(ServeError, UsageError):
    """An option of the server's request guards is malformed: a CORS origin that is not
    ``scheme://host[:port]``, an empty host name, a limit below one."""

    code = "SEA874"
    status = 400
    hint = None


class ServerLacks(ServeError):
    """The request needs what the server was not started with: a workspace (``sea serve
    --workspace``) for a plan's files, a PostgreSQL store (the workers' queue) for
    schedules. The message names the option."""

    code = "SEA890"
    status = 409


class TraceNotRecorded(ResourceNotFound):
    """The pulse has no recorded trace on this server: the server records none (record
    one with ``sea run --record FILE``), or not of this pulse."""

    code = "SEA891"
    hint = ("record a pulse with `sea run --record FILE` and replay it with `sea replay "
            "FILE`; a served pulse's events are at /v1/pulses/{id}/events")
