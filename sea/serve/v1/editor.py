"""What the studio's editor needs besides ``POST /v1/validate``: where each variable is
defined and read, and what saving a playbook's file needs.

:func:`variables_json` is the validator's own dataflow (:mod:`sea.lang.checks.dataflow`) as
JSON: for each variable, the nodes that define it and the nodes that read it, and whether
anything defines it at all (the run's own variables, the signature's inputs, a node).

``PUT /v1/playbooks/{name}`` (:mod:`sea.serve.v1.playbooks`) writes a playbook's file
(``author`` role): only a playbook of the server's ``--playbooks`` directories, never a
bundled one (403 ``SEA831``). With
``If-Match`` (the sha256 or ETag ``GET /v1/playbooks/{name}`` gave), a file that changed
on disk since is not overwritten (409 ``SEA830``). The text is written as it is, valid or
not (an editor saves work in progress; the answer carries its check), in one step (a
temporary file renamed over it).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sea.lang.checks import CheckContext
from sea.lang.checks.dataflow import definitions, node_reads
from sea.lang.checks.nodes import indexed
from sea.lang.files import MAX_PLAYBOOK_BYTES
from sea.lang.library import PlaybookLibrary
from sea.lang.models import Playbook
from sea.lang.node import Defined
from sea.lang.variables import ALWAYS_DEFINED, BUILTIN_VARIABLES


class PlaybookSave(BaseModel):
    """``PUT /v1/playbooks/{name}``: the playbook's new text."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=MAX_PLAYBOOK_BYTES)


def variables_json(playbook: Playbook, context: CheckContext) -> list[dict[str, Any]]:
    """Every variable the playbook's nodes define or read: its ``name``, the nodes that
    ``defined_by`` it (``input_schema`` for an input), the nodes that ``read_by`` it,
    ``defined`` (something defines it: the run, the signature, a node, a callee) and
    ``builtin`` (the engine sets it)."""
    defs = definitions(playbook, context)
    found: dict[str, dict[str, Any]] = {}

    def entry(name: str) -> dict[str, Any]:
        return found.setdefault(name, {"name": name, "defined_by": [], "read_by": []})

    for param in playbook.input_schema:
        entry(param.name)["defined_by"].append("input_schema")
    for node in playbook.nodes:
        for made in node.defines(context.library):
            if isinstance(made, Defined) and node.id not in entry(made.name)["defined_by"]:
                entry(made.name)["defined_by"].append(node.id)
    for index, reader in indexed(playbook):
        for read in node_reads(index, reader):
            readers = entry(read.root)["read_by"]
            if reader.id not in readers:
                readers.append(reader.id)
    for name, item in found.items():
        item["builtin"] = name in BUILTIN_VARIABLES
        item["defined"] = bool(item["defined_by"]) or name in ALWAYS_DEFINED \
            or defs.defined(name) is not None or name in defs.dynamic or name == "error"
    return sorted(found.values(), key=lambda item: str(item["name"]))


def sha_of(data: bytes) -> str:
    """The version of a file's bytes (its sha256, the ETag without quotes)."""
    return hashlib.sha256(data).hexdigest()


def writable(library: PlaybookLibrary, path: Path) -> bool:
    """``path`` is in one of the server's own ``--playbooks`` directories (not bundled)."""
    from sea.resources import bundled_playbooks_dir

    parent = path.parent.resolve()
    return parent != bundled_playbooks_dir().resolve() and any(
        parent == directory.resolve() for directory in library.dirs)


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` in one step (a temporary file beside it, renamed)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
