"""The reference pages generated from the code: node types and fields (the JSON Schema),
diagnostic and error codes (the code registry and the exception tree), CLI commands and options
(the argparse parsers) and event types (``sea.engine.events``).

``mkdocs build`` calls :func:`on_files` (``hooks:`` in mkdocs.yml), which adds the pages to the
site without writing into ``docs/``; the docs tests call the same page functions to compare the
lists with the code.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import inspect
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_CODE = re.compile(r"\"(SEA\d{3})\"")


_SPAN = re.compile(r"`([^`]*)`")


def _cell(text: object) -> str:
    """Text for a table cell: a ``|`` cannot end the cell. Outside code it is escaped; a code
    span holding one becomes HTML (``&#124;``): in a code span the escape would be shown."""

    def code(span: re.Match[str]) -> str:
        inner = span.group(1)
        if "|" not in inner:
            return span.group(0)
        return f"<code>{html.escape(inner).replace('|', '&#124;')}</code>"

    return _SPAN.sub(code, str(text).replace("\n", " ")).replace("|", "\\|")


# -- node types -------------------------------------------------------------------------------

def node_types_page() -> str:
    """Every node type and its fields, from schemas/playbook.schema.json."""
    schema = json.loads((ROOT / "schemas" / "playbook.schema.json").read_text(encoding="utf-8"))
    lines = ["# Node types and fields", "",
             "Generated from `schemas/playbook.schema.json` (regenerate it with `make schemas`).",
             "", "## The document", ""]
    lines += _fields(schema, schema)
    for name, definition in sorted(schema["$defs"].items()):
        lines += ["", f"## {name}", ""]
        if definition.get("description"):
            lines += [definition["description"].strip(), ""]
        lines += _fields(definition, schema)
    return "\n".join(lines) + "\n"


def _type_of(spec: dict[str, Any]) -> str:
    if "$ref" in spec:
        return "`" + spec["$ref"].rsplit("/", 1)[-1] + "`"
    if "const" in spec:
        return f"`{json.dumps(spec['const'])}`"
    if "enum" in spec:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in spec["enum"])
    for key in ("anyOf", "oneOf"):
        if key in spec:
            return " or ".join(_type_of(s) for s in spec[key])
    kind = spec.get("type", "any")
    if kind == "array" and isinstance(spec.get("items"), dict):
        return f"array of {_type_of(spec['items'])}"
    return f"{kind}"


def _fields(definition: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    properties = definition.get("properties", {})
    if not properties:
        return ["(no fields)"]
    required = set(definition.get("required", []))
    rows = ["| Field | Type | Required | Default | Description |", "|---|---|---|---|---|"]
    for field, spec in properties.items():
        default = f"`{json.dumps(spec['default'])}`" if "default" in spec else ""
        rows.append(f"| `{field}` | {_cell(_type_of(spec))} | {'yes' if field in required else ''}"
                    f" | {_cell(default)} | {_cell(spec.get('description', ''))} |")
    return rows


# -- diagnostic codes -------------------------------------------------------------------------

def all_codes() -> dict[str, str]:
    """Every code the package source names, with its meaning (registry, class docstring, or
    the module that raises it)."""
    from sea import errors
    from sea.lang import codes

    meaning: dict[str, str] = dict(codes.CODES)
    for cls in _subclasses(errors.SeaError):
        doc = inspect.getdoc(cls) or cls.__name__
        meaning.setdefault(cls.code, f"`{cls.__name__}`: {doc.splitlines()[0]}")
    raised: dict[str, list[str]] = {}
    for path in sorted((ROOT / "sea").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for code in _CODE.findall(line):
                raised.setdefault(code, []).append(
                    f"- `{path.relative_to(ROOT).as_posix()}:{number}`: `{line.strip()}`")
    for code, places in raised.items():
        if code not in meaning:
            meaning[code] = ("A usage or execution error; its message names what is wrong and "
                             "how to fix it. Raised at:\n\n" + "\n".join(places[:6]))
    return dict(sorted(meaning.items()))


def _subclasses(cls: type) -> list[type]:
    found: list[type] = [cls]
    for sub in cls.__subclasses__():
        found += _subclasses(sub)
    return found


def _examples() -> dict[str, tuple[str, str, str]]:
    """For each document code an example from tests/data/invalid: (file, text, diagnostic)."""
    from sea.lang.loader import check_document

    examples: dict[str, tuple[str, str, str]] = {}
    for path in sorted((ROOT / "tests" / "data" / "invalid").glob("*.json")):
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(text) > 3000:
            continue
        for diagnostic in check_document(data, file=path.name).diagnostics:
            examples.setdefault(diagnostic.code, (path.name, text, diagnostic.format_human()))
    return examples


def codes_page() -> str:
    """Every diagnostic and error code, its meaning, and an example with its fix."""
    examples = _examples()
    lines = ["# Diagnostic and error codes", "",
             "Generated from `sea/lang/codes.py`, the exception tree in `sea/errors.py` and the",
             "codes the package raises. `SEA001`–`SEA199` are playbook diagnostics "
             "(`sea validate` prints them with a hint that says how to fix each); `SEA300`–`SEA399`"
             " usage of the command line and host API; `SEA500`–`SEA699` execution; "
             "`SEA700`–`SEA799` record and replay.", ""]
    for code, meaning in all_codes().items():
        lines += [f"## {code}", "", meaning, ""]
        if code in examples:
            name, text, shown = examples[code]
            lines += [f"Example (`{name}`):", "", "```json", text.rstrip(), "```", "",
                      "`sea validate` prints:", "", "```text", shown, "```", ""]
    return "\n".join(lines) + "\n"


# -- CLI --------------------------------------------------------------------------------------

def cli_commands() -> dict[str, list[str]]:
    """Each command (``sea``, ``sea run``, ``sea memory search`` ...) and its option strings."""
    from sea.cli import build_parser

    found: dict[str, list[str]] = {}
    for name, parser in _walk("sea", build_parser()):
        found[name] = [s for a in parser._actions for s in a.option_strings]
    return found


def _walk(name: str, parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                out += _walk(f"{name} {sub}", child)
    return out


def cli_page() -> str:
    """Every command with its usage and each option, from the parsers."""
    from sea.cli import build_parser

    lines = ["# Command line", "", "Generated from the argparse parsers (`sea.cli.build_parser`).",
             "`sea COMMAND --help` prints the same.", "",
             "An option has one name across the commands (`--playbooks DIR` wherever playbooks "
             "are looked up, the playbook as the first argument, `--approve all|low|IDS` "
             "wherever something is approved, `--json` for JSON output). A long option takes "
             "two dashes: `sea run -input hi` is a usage error naming `--input`. A spelling "
             "that was renamed still works, hidden from `--help`, and prints one warning line "
             "naming the new one; the tables list each as an old spelling. Every command exits "
             "0 when done, 1 when the work ran and failed, 2 when it could not start (a bad "
             "option, a file, directory or playbook that does not exist) and 130 when "
             "interrupted.", ""]
    for name, parser in _walk("sea", build_parser()):
        lines += [f"## `{name}`", ""]
        if parser.description:
            lines += [parser.description.strip(), ""]
        lines += ["```text", parser.format_usage().strip(), "```", ""]
        rows = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                if not isinstance(action, argparse._SubParsersAction):
                    new = getattr(action, "new", None)
                    meaning = f"old spelling of `{new}` (still accepted, with a warning)" \
                        if new else ""
                    rows.append(f"| {', '.join(f'`{s}`' for s in action.option_strings)} | "
                                f"{meaning} |")
                continue
            what = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.dest}`"
            text = (action.help or "") % {"default": action.default, "prog": name} \
                if action.help and "%(" in action.help else (action.help or "")
            rows.append(f"| {what} | {_cell(text)} |")
        if rows:
            lines += ["| Argument | Meaning |", "|---|---|", *rows, ""]
    return "\n".join(lines) + "\n"


# -- events -----------------------------------------------------------------------------------

def event_kinds() -> dict[str, type]:
    """Each event ``kind`` and its class."""
    from sea.engine import events

    kinds: dict[str, type] = {}
    for cls in _subclasses(events.Event):
        kind = cls.__dict__.get("kind")
        if isinstance(kind, str) and kind != "event":
            kinds[kind] = cls
    return dict(sorted(kinds.items()))


def events_page() -> str:
    lines = ["# Event types", "", "Generated from `sea/engine/events.py`. Every event has "
             "`kind` and `pulse_id`, and `to_json()`.", ""]
    for kind, cls in event_kinds().items():
        lines += [f"## `{kind}`", "", f"`{cls.__name__}`: {inspect.getdoc(cls) or ''}", "",
                  "| Field | Type |", "|---|---|"]
        lines += [f"| `{f.name}` | {_cell(f'`{f.type}`')} |" for f in dataclasses.fields(cls)]
        lines.append("")
    return "\n".join(lines) + "\n"


PAGES = {
    "reference/node-types.md": node_types_page,
    "reference/codes.md": codes_page,
    "reference/cli.md": cli_page,
    "reference/event-types.md": events_page,
}


def on_files(files: Any, config: Any) -> Any:
    """mkdocs hook: add the generated reference pages."""
    from mkdocs.structure.files import File

    for uri, page in PAGES.items():
        files.append(File.generated(config, uri, content=page()))
    return files
