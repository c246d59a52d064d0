"""Variables read but defined nowhere, or only by a callee chosen at run time."""

from __future__ import annotations

from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.checks.dataflow import Definitions, Read, definitions, node_reads, root_of
from sea.lang.checks.nodes import indexed
from sea.lang.graph import failure_targets, reachable, successors
from sea.lang.hints import Suggester
from sea.lang.issues import Issue, error, warning
from sea.lang.locate import join_pointer
from sea.lang.models import Playbook
from sea.lang.node import template_reads
from sea.lang.variables import ALWAYS_DEFINED

_ERROR = "error"


def _error_scope(playbook: Playbook) -> set[str]:
    """Nodes that may run after a failure routed by ``error_next``."""
    return reachable(successors(playbook.nodes), failure_targets(playbook.nodes))


def _issue(read: Read, defs: Definitions, hints: Suggester) -> Issue:
    ref = f"`{{{read.path or read.root}}}`" if read.char_offset is not None else f"`{read.path}`"
    suggestion = hints.suggest(read.root)
    if defs.uncertain:
        code, make = codes.UNCERTAIN_VARIABLE, warning
        message = (
            f"{ref} reads `{read.root}`, which no node defines here; it may come from "
            + ", ".join(defs.uncertain)
        )
        hint = (
            "validate with the called playbooks available (a directory or the library) so "
            "their output_schema can be checked"
        )
    elif read.prompt:
        code, make = codes.UNDEFINED_IN_PROMPT, warning
        message = f"the prompt references {ref} but nothing defines `{read.root}`"
        hint = suggestion + "if the braces are literal text, escape them as `{{` and `}}`"
    else:
        code, make = codes.UNDEFINED_VARIABLE, error
        message = f"{ref} reads `{read.root}`, which nothing defines"
        hint = (
            suggestion + "define it with an input parameter, an output_key, a set node or a "
            "callee's output_schema"
        )
    return make(
        code,
        message,
        read.pointer,
        hint=hint,
        node_id=read.node_id,
        char_offset=read.char_offset,
    )


def _dynamic(read: Read, defs: Definitions) -> Issue:
    callees = defs.dynamic[read.root]
    nodes = ", ".join(f"`{node}`" for node in defs.dynamic_nodes)
    ref = f"`{{{read.path or read.root}}}`" if read.char_offset is not None else f"`{read.path}`"
    return warning(
        codes.DYNAMIC_CALLEE_VARIABLE,
        f"{ref} reads `{read.root}`, which only a playbook chosen at run time returns: "
        f"{', '.join(f'`{c}`' for c in callees)} (by node {nodes}, as SAIVerse could)",
        read.pointer,
        node_id=read.node_id,
        char_offset=read.char_offset,
        hint="`exec` runs only router-callable playbooks: mark the callee "
        "`\"router_callable\": true` or list it in the node's `allowed_playbooks`",
    )


def _outputs(playbook: Playbook, defs: Definitions, known: set[str]) -> list[Issue]:
    if defs.uncertain:
        return []
    known = known | set(defs.dynamic)
    return [
        warning(
            codes.OUTPUT_NEVER_DEFINED,
            f"output_schema lists `{name}`, but nothing in the playbook defines it",
            join_pointer("output_schema", index),
            hint="callers will not receive it; define it (output_key, output_mapping, a set "
            "node) or remove it from output_schema",
        )
        for index, name in enumerate(playbook.output_schema or [])
        if root_of(name) not in known and defs.defined(root_of(name)) is None
    ]


def check_variables(playbook: Playbook, context: CheckContext) -> list[Issue]:
    """An issue for every read of a variable that nothing can define, and for output_schema
    keys nothing defines."""
    defs = definitions(playbook, context)
    known = set(defs.names) | ALWAYS_DEFINED
    error_scope: set[str] | None = None
    hints = Suggester(known)  # one lookup per unknown name, a bounded number of them
    issues: list[Issue] = _outputs(playbook, defs, known)
    for index, node in indexed(playbook):
        for read in node_reads(index, node):
            if read.root in known or defs.defined(read.root) is not None:
                continue
            if read.root in defs.dynamic:
                issues.append(_dynamic(read, defs))
                continue
            if read.root == _ERROR:
                if error_scope is None:
                    error_scope = _error_scope(playbook)
                if node.id in error_scope:
                    continue
                issues.append(
                    error(
                        codes.UNDEFINED_VARIABLE,
                        f"node `{node.id}` reads `error`, which is only set on the path of an "
                        "`error_next`",
                        read.pointer,
                        node_id=node.id,
                        char_offset=read.char_offset,
                        hint="read `error` only in nodes reached through `error_next`",
                    )
                )
                continue
            issues.append(_issue(read, defs, hints))
    if playbook.report_template is not None:  # unknown references stay as written
        for read in template_reads(playbook.report_template, "/report_template", "", True):
            if read.root not in known and defs.defined(read.root) is None:
                issues.append(_issue(read, defs, hints))
    return issues
