"""What the ``/v1`` routers of playbooks, plans, memory, stats and schedules share.

:class:`V1Options` is what those routes need from the server's start beyond its context:
the workspace plans are carried out in and their policy, the host tools ``POST
/v1/validate`` checks calls against (as ``sea validate --tools/--mcp`` with the server's own
options). ``sea serve`` keeps one on ``app.state.v1``; an app without one (a host's, a test's)
answers as a server started with no workspace and no host tools.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from langchain_core.tools import BaseTool

from sea.engine.plans import PlanPolicy
from sea.errors import Diagnostic, ServeError
from sea.lang.checks import ToolCatalogue
from sea.lang.library import PlaybookLibrary
from sea.serve.auth import Principal, require

T = TypeVar("T")

Author = Annotated[Principal, Depends(require("author"))]
"""A key with the ``author`` role."""
Memory = Annotated[Principal, Depends(require("memory"))]
"""A key with the ``memory`` role."""


class Conflict(ServeError):
    """An engine error that answers 409 with the engine's own code (a plan's state refuses
    the call, a store without the queue): the request is right, the state is not."""

    status = 409


class PlaybookChanged(ServeError):
    """A save names the version it edits (``If-Match``) and the file changed on disk since:
    it is not overwritten."""

    code = "SEA830"
    status = 409
    hint = "reload the playbook (GET /v1/playbooks/{name}), make the edit again and save it"


class PlaybookReadOnly(ServeError):
    """A save names a bundled playbook: only the server's ``--playbooks`` directories are
    written."""

    code = "SEA831"
    status = 403
    hint = ("copy it into a directory given to `sea serve --playbooks` under the same "
            "name (the server's directories win over the bundled ones), then edit that copy")


def engine_tools() -> dict[str, Mapping[str, Any] | None]:
    """The engine's tools and their argument schemas, as published (``make schemas``)."""
    from sea.jsonfile import read_json
    from sea.resources import ENGINE_TOOLS_FILE, schemas_dir

    found: dict[str, Mapping[str, Any] | None] = read_json(
        schemas_dir() / ENGINE_TOOLS_FILE, "catalogue of the engine's tools")
    return found


@dataclass
class V1Options:
    """What the server was started with that these routes need.

    Args:
        workspace: The ``--workspace`` directory (plans are previewed and carried out
            there); None: the plan routes that look at files answer 409.
        plan_policy: What plans may do in the workspace.
        host_tools: Name → argument schema of the server's ``--tools`` and ``--mcp`` tools;
            None when it was given neither (then, as ``sea validate`` without them, tool
            calls are not checked unless a request asks for ``strict``).
        traces: The ``--traces`` directory of recorded traces ``/v1/regression`` replays;
            None: those routes answer 409.
        evals: The directory of the runs ``sea eval`` stored, ``/v1/evals`` shows (``sea
            serve --evals``, else the project's); None: the list is empty, with a note.
    """

    workspace: Path | None = None
    plan_policy: PlanPolicy = field(default_factory=PlanPolicy)
    host_tools: Mapping[str, Mapping[str, Any] | None] | None = None
    traces: Path | None = None
    evals: Path | None = None
    _libraries: dict[tuple[bool, tuple[Path, ...]], PlaybookLibrary] = field(
        default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, workspace: str | None, tools: Sequence[BaseTool] | None,
           traces: str | None = None, evals: Path | None = None) -> V1Options:
        """The options of a server started with ``--workspace`` (a directory its runtime
        has checked already), the host ``tools`` of its ``--tools``/``--mcp`` (None
        when it was given neither), ``--traces`` and its eval runs directory."""
        from sea.engine.tools.arguments import tool_schema

        schemas = None if tools is None else {tool.name: tool_schema(tool) for tool in tools}
        return cls(workspace=None if workspace is None else Path(workspace).expanduser(),
                   host_tools=schemas,
                   traces=None if traces is None else Path(traces).expanduser(),
                   evals=evals)

    def catalogue(self, strict: bool = False) -> ToolCatalogue | None:
        """The tools playbooks are checked against: as ``sea validate``'s ``_catalogue``
        with the server's ``--tools``/``--mcp`` (the engine's own tools count as known)."""
        if self.host_tools is None and not strict:
            return None
        tools = engine_tools()
        tools.update(self.host_tools or {})
        return ToolCatalogue(tools)

    def checked(self, library: PlaybookLibrary, fn: Callable[[PlaybookLibrary], T],
                strict: bool = False) -> T:
        """``fn`` of a library of the same directories as ``library`` whose checks know the
        server's tools (one per directory list, kept: it caches each playbook's check by
        content); calls are serialised (the library's caches are not thread-safe)."""
        key = (strict, tuple(library.dirs))
        with self._lock:
            found = self._libraries.get(key)
            if found is None:
                found = PlaybookLibrary(library.dirs, tools=self.catalogue(strict),
                                        types=library.types)
                self._libraries[key] = found
            found.refresh()  # a file added or removed since is seen (checks stay cached)
            return fn(found)


def options(request: Request) -> V1Options:
    """The FastAPI dependency that gives a route the server's :class:`V1Options`."""
    found = getattr(request.app.state, "v1", None)
    if found is None:
        found = V1Options()
        request.app.state.v1 = found
    assert isinstance(found, V1Options)
    return found


Options = Annotated[V1Options, Depends(options)]
"""The server's :class:`V1Options`."""


def diagnostic_json(diagnostic: Diagnostic, file: str | None = None) -> dict[str, Any]:
    """A diagnostic as ``sea validate --format json`` gives it, with its ``node_id``;
    ``file`` replaces the server's path (a client sees the playbook's name, not where the
    server keeps it)."""
    return {**diagnostic.to_json(), "file": file, "node_id": diagnostic.node_id}
