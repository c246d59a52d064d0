"""``sea lsp``: the playbook language in every editor, over the Language Server Protocol.

Diagnostics as ``sea validate`` reports them (the same checks, codes, hints), completion,
hover, go to definition, references, rename, quick fixes, the outline and the Mermaid graph,
for the playbooks open in an editor. A layer between the command line and the language: it
uses :mod:`sea.lang` (the checks, the library, the migration), never the engine or a host.
"""

from __future__ import annotations

from sea.lsp.server import GRAPH_COMMAND, SeaServer, build
from sea.lsp.workspace import Workspace

__all__ = ["GRAPH_COMMAND", "SeaServer", "Workspace", "build"]
