"""``/v1/playbooks`` and ``/v1/validate``: the server's playbooks, drawn and checked.

The playbooks are the server's library: its ``--playbooks`` directories, then the bundled
ones (earlier directories win). Each is checked as ``sea validate`` checks it, calls to tools
against the server's own ``--tools``/``--mcp`` (:class:`~sea.serve.v1.common.V1Options`).
A diagnostic carries its code, severity, message, hint, line, column, JSON pointer and node
id; its ``file`` is the playbook's name (never a path of the server).

``GET /v1/playbooks/{name}/graph`` draws a valid playbook from its document: every node
with its type, label, detail and shape, every declared edge with its kind (``next``,
``case``, ``default``, ``error``) and the case's label; ``?format=mermaid`` gives ``sea
graph``'s Mermaid text instead.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Header
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from sea.errors import InvalidRequest, PlaybookError, ResourceNotFound, Severity
from sea.lang.files import MAX_PLAYBOOK_BYTES, read_playbook_bytes
from sea.lang.hints import did_you_mean
from sea.lang.library import PlaybookLibrary, PlaybookNotFound
from sea.lang.loader import LoadResult, check_document
from sea.lang.models import Playbook
from sea.lang.node import Edge
from sea.lang.render import to_mermaid
from sea.resources import bundled_playbooks_dir
from sea.serve.deps import Ctx, Reader
from sea.serve.v1.common import (
    Author,
    Options,
    PlaybookChanged,
    PlaybookReadOnly,
    diagnostic_json,
)
from sea.serve.v1.editor import (
    PlaybookSave,
    sha_of,
    variables_json,
    writable,
    write_file,
)

router = APIRouter(prefix="/v1", tags=["playbooks"])

SHAPES = {("[", "]"): "rect", ("(", ")"): "rounded", ("[/", "/]"): "parallelogram",
          ("[[", "]]"): "subroutine", ("{", "}"): "diamond", ("[(", ")]"): "cylinder",
          (">", "]"): "flag", ("([", "])"): "stadium", ("((", "))"): "circle",
          ("{{", "}}"): "hexagon"}
"""Mermaid's node shapes (what the node types declare) by name."""


class ValidateRequest(BaseModel):
    """``POST /v1/validate``: a playbook's text, checked as ``sea validate`` checks a file."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=MAX_PLAYBOOK_BYTES)
    name: str | None = Field(default=None, max_length=200,
                             description="the file name diagnostics show (default: none)")
    strict: bool = Field(default=False, description="warnings fail too; without the "
                         "server's --tools/--mcp, only the engine's tools are known")


def _counts(result: LoadResult) -> dict[str, int]:
    return {"errors": len(result.errors), "warnings": len(result.warnings)}


def _source(path: Path) -> str:
    return "bundled" if path.parent.resolve() == bundled_playbooks_dir().resolve() else "dir"


def _path(library: PlaybookLibrary, name: str) -> Path:
    """The playbook's file.

    Raises:
        ResourceNotFound: there is none (SEA050, the message names no directory of the
            server).
    """
    try:
        return library.path(name)
    except PlaybookNotFound:
        close = did_you_mean(name, library.names())
        raise ResourceNotFound(f"no playbook named {name!r}"
                               + (f"; did you mean {close!r}?" if close else ""),
                               code=PlaybookNotFound.code) from None


def _read(path: Path) -> bytes | None:
    """The file's bytes, read as the library reads it (a regular file of at most
    ``MAX_PLAYBOOK_BYTES``); None when it cannot be (its check says why)."""
    try:
        return read_playbook_bytes(path)
    except PlaybookError:
        return None


def _summary(library: PlaybookLibrary, name: str) -> dict[str, Any]:
    path = _path(library, name)
    result = library.check(name)
    signature = library.signature(name)
    drawn = result.playbook or result.salvaged
    description = drawn.description if drawn is not None else None
    data = _read(path)
    if description is None and data is not None:
        try:
            raw = orjson.loads(data)
        except orjson.JSONDecodeError:
            raw = None
        found = raw.get("description") if isinstance(raw, dict) else None
        description = found if isinstance(found, str) else None
    return {"name": name, "description": description, "source": _source(path),
            "router_callable": bool(signature and signature.router_callable),
            "writable": writable(library, path),
            "sha256": None if data is None else hashlib.sha256(data).hexdigest(),
            **_counts(result)}


@router.get("/playbooks")
async def list_playbooks(ctx: Ctx, options: Options, principal: Reader) -> dict[str, Any]:
    """Every playbook of the server: name, description, source (``bundled`` or ``dir``),
    router-callable, sha256 and how many errors and warnings its check finds."""

    def listed(library: PlaybookLibrary) -> list[dict[str, Any]]:
        return [_summary(library, name) for name in library.names()]

    return {"items": await ctx.call(options.checked, ctx.library, listed)}


@router.get("/playbooks/{name}", response_model=None)
async def show_playbook(name: str, ctx: Ctx, options: Options, principal: Reader,
                        if_none_match: Annotated[str | None, Header()] = None) -> Response:
    """One playbook: its text (null when the file cannot be read), its parsed document
    (null when the text is not JSON), its sha256 (also its ETag: with ``If-None-Match``
    an unchanged file answers 304, unchecked, which makes polling for a change on disk
    cheap), whether the server writes it and every diagnostic of its check."""

    def shown(library: PlaybookLibrary) -> dict[str, Any] | None:
        current = _read(_path(library, name))
        if if_none_match and current is not None \
                and if_none_match.strip().removeprefix("W/").strip('"') == sha_of(current):
            return None
        summary = _summary(library, name)
        data = _read(_path(library, name))
        text = None if data is None else data.decode("utf-8", errors="replace")
        try:
            document = None if text is None else orjson.loads(text)
        except orjson.JSONDecodeError:
            document = None
        diagnostics = [diagnostic_json(d, name) for d in library.check(name).diagnostics]
        return {**summary, "text": text, "document": document, "diagnostics": diagnostics}

    found = await ctx.call(options.checked, ctx.library, shown)
    if found is None:
        return Response(status_code=304, headers={"ETag": str(if_none_match)})
    etag = {"ETag": f'"{found["sha256"]}"'} if found["sha256"] else {}
    return JSONResponse(found, headers=etag)


def edge_kind(edge: Edge) -> str:
    """``next``, ``case``, ``default`` or ``error``: what declares the edge."""
    if edge.on_error:
        return "error"
    if edge.field == "conditional_next/default":
        return "default"
    if edge.field.startswith("conditional_next/cases/"):
        return "case"
    return "next"


def graph_json(playbook: Playbook) -> dict[str, Any]:
    """A playbook as a graph: its start, nodes (id, type, label, detail, shape) and edges
    (source, target or null for the end, kind, label, the field that declares it, and
    ``dangling`` when the target is no node: a document still being written)."""
    nodes = []
    edges = []
    ids = {node.id for node in playbook.nodes}
    for node in playbook.nodes:
        detail = node.detail()
        nodes.append({"id": node.id, "type": node.node_type(),
                      "label": f"{node.id}: {node.node_type()}" + (f" {detail}" if detail else ""),
                      "detail": detail, "shape": SHAPES.get(node.mermaid_shape, "rect")})
        for edge in node.edges():
            edges.append({"source": node.id, "target": edge.target, "kind": edge_kind(edge),
                          "label": edge.label if edge_kind(edge) != "next" else None,
                          "field": edge.field,
                          "dangling": edge.target is not None and edge.target not in ids})
    return {"playbook": playbook.name, "description": playbook.description,
            "start": playbook.start_node, "nodes": nodes, "edges": edges}


@router.get("/playbooks/{name}/graph", response_model=None)
async def draw_playbook(name: str, ctx: Ctx, options: Options, principal: Reader,
                        format: Literal["json", "mermaid"] = "json") -> Any:
    """The playbook as a graph (JSON) with its diagnostics, or as ``sea graph``'s Mermaid
    text (``?format=mermaid``). An invalid playbook is drawn as far as it could be built
    (``valid`` false); one that cannot be built at all, or drawn as Mermaid, answers 422
    with its diagnostics (as ``sea graph`` refuses it)."""
    def checked(library: PlaybookLibrary) -> LoadResult:
        _path(library, name)
        return library.check(name)

    result = await ctx.call(options.checked, ctx.library, checked)
    drawn = result.playbook or result.salvaged
    if drawn is None or (format == "mermaid" and result.playbook is None):
        raise PlaybookError([replace(d, file=name) for d in result.diagnostics])
    if format == "mermaid":
        return PlainTextResponse(to_mermaid(drawn), media_type="text/vnd.mermaid")
    return {**graph_json(drawn), "valid": result.playbook is not None,
            "diagnostics": [diagnostic_json(d, name) for d in result.diagnostics]}


@router.post("/validate")
async def validate(body: ValidateRequest, ctx: Ctx, options: Options,
                   principal: Author) -> dict[str, Any]:
    """Check a playbook's text as ``sea validate`` checks a file (calls to other playbooks
    against the server's library, tool calls against its tools): ``ok`` (no errors; with
    ``strict`` no warnings either), the counts, every diagnostic, and the graph of the
    playbook as far as it could be built (so a view survives a typo; null when the text is
    not a JSON object of a playbook's shape) and its ``variables``: where each is defined
    and read (:func:`~sea.serve.v1.editor.variables_json`; empty without a graph)."""

    def checked(library: PlaybookLibrary) -> tuple[LoadResult, list[dict[str, Any]]]:
        found = check_document(body.text, file=body.name, context=library.context(),
                               types=library.types)
        drawn = found.playbook or found.salvaged
        return found, [] if drawn is None else variables_json(drawn, library.context())

    result, variables = await ctx.call(options.checked, ctx.library, checked, body.strict)
    failing = result.errors or (body.strict and any(
        d.severity is Severity.WARNING for d in result.diagnostics))
    drawn = result.playbook or result.salvaged
    return {"ok": not failing, **_counts(result),
            "diagnostics": [diagnostic_json(d, body.name) for d in result.diagnostics],
            "graph": graph_json(drawn) if drawn is not None else None, "variables": variables}


@router.put("/playbooks/{name}", response_model=None)
async def save_playbook(name: str, body: PlaybookSave, ctx: Ctx, options: Options,
                        principal: Author,
                        if_match: Annotated[str | None, Header()] = None) -> JSONResponse:
    """Write the playbook's file: its new ``sha256`` (also the ETag) and its check's
    counts. 403 for a bundled playbook, 409 when ``If-Match`` is not the file's version."""
    data = body.text.encode()
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError:
        raw = None
    named = raw.get("name") if isinstance(raw, dict) else None
    if isinstance(named, str) and named != name:
        raise InvalidRequest(f"the text names the playbook {named!r}, not {name!r}: a save "
                             "does not rename a playbook")

    def saved(library: PlaybookLibrary) -> dict[str, Any]:
        path = _path(library, name)
        if not writable(library, path):
            raise PlaybookReadOnly(f"playbook {name!r} is bundled with SEA: the server does "
                                   "not write it")
        current = _read(path)
        wanted = (if_match or "").strip().removeprefix("W/").strip('"')
        if if_match and wanted != "*" and (current is None or sha_of(current) != wanted):
            raise PlaybookChanged(f"playbook {name!r} changed on disk since it was loaded")
        write_file(path, data)
        library.refresh()
        return _summary(library, name)

    summary = await ctx.call(options.checked, ctx.library, saved)
    return JSONResponse(summary, headers={"ETag": f'"{summary["sha256"]}"'})
