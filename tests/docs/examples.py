"""The command examples of the documentation, read from its pages: each indented block that
runs ``sea`` is one example, its lines the steps a reader types in order.

A step is a ``sea`` command, or one of the few shell commands the examples use around them
(``mkdir``, ``cd``, ``export``, or any other command, kept as written). A block shows the
output of a step in one of two ways, and both are checked when the example runs:

- a console block: ``$ COMMAND`` lines, each followed by the lines it prints;
- a comment block: ``# TEXT`` lines right below a command are lines it prints (``…`` or
  ``...`` stands for any text).

A comment at the end of a command's line (``sea stats   # sums them up``) explains it and is
not output.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^\s*```")
_TRAILING_COMMENT = re.compile(r"\s+#\s.*$")


@dataclass(frozen=True)
class Step:
    """One line of an example: the command, what it prints (when the block shows it)."""

    line: int
    """Its line number in the page (1-based)."""
    command: str
    """The command as written, continuation lines joined, its trailing comment removed."""
    shown: tuple[str, ...] = ()
    """Lines the block shows it printing."""
    console: bool = False
    """Whether ``shown`` is a console transcript (every line), not a few comment lines."""
    background: bool = False
    """Whether it ends in ``&`` (started, left running, stopped at the block's end)."""

    @property
    def words(self) -> list[str]:
        """The command's words, as a shell splits them."""
        return shlex.split(self.command)

    @property
    def is_sea(self) -> bool:
        """Whether the step runs ``sea``."""
        return self.command.startswith("sea ")


@dataclass(frozen=True)
class Example:
    """One block of a page that runs ``sea``."""

    page: str
    """The page, relative to ``docs/`` (``guides/memory.md``)."""
    line: int
    """The line of the block's first step."""
    steps: tuple[Step, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        """``page:line``, the example's test id."""
        return f"{self.page}:{self.line}"

    @property
    def first(self) -> str:
        """The first ``sea`` command of the block (what a scene is found by)."""
        return next(s.command for s in self.steps if s.is_sea)


def _continues(rest: list[str]) -> bool:
    """Whether the next line that is not blank is indented (the block goes on)."""
    following = next((line for line in rest if line.strip()), "")
    return following.startswith("    ")


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """Each indented code block of a page: its first line number, its lines unindented."""
    blocks: list[tuple[int, list[str]]] = []
    lines = text.splitlines()
    fenced = False
    previous = ""
    current: list[str] = []
    start = 0
    for number, line in enumerate(lines, 1):
        if _FENCE.match(line):
            fenced = not fenced
        indented = line.startswith("    ") and not fenced
        if indented and (current or previous.strip() == ""):
            if not current:
                start = number
            current.append(line[4:])
        elif current and line.strip() == "" and _continues(lines[number:]):
            current.append("")  # a blank line inside the block
        else:
            if current:
                blocks.append((start, current))
            current = []
        previous = line
    if current:
        blocks.append((start, current))
    return blocks


def _commands(line: str) -> list[str]:
    """A line's commands: split at each ``;`` outside quotes and ``$(...)``."""
    parts, current, quote, depth = [], "", "", 0
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(" and line[index - 1:index] == "$":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif char == ";" and not depth:
            parts.append(current)
            current = ""
            continue
        current += char
    return [*parts, current]


def _steps(start: int, lines: list[str]) -> list[Step]:
    """The steps of one block (see the module's docstring)."""
    steps: list[Step] = []
    index = 0
    while index < len(lines):
        number = start + index
        line = lines[index]
        index += 1
        console = line.startswith("$ ")
        text = line[2:] if console else line
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        while text.endswith("\\") and index < len(lines):
            text = text[:-1].rstrip() + " " + lines[index].strip()
            index += 1
        shown: list[str] = []
        if console:  # the lines up to the next command are its output
            while index < len(lines) and not lines[index].startswith("$ "):
                shown.append(lines[index])
                index += 1
            while shown and not shown[-1].strip():
                shown.pop()
        else:  # comment lines right below it are its output
            while index < len(lines) and lines[index].startswith("#"):
                shown.append(lines[index][1:].strip())
                index += 1
        parts = _commands(_TRAILING_COMMENT.sub("", text))
        for place, part in enumerate(parts, 1):
            command = part.strip()
            background = command.endswith("&")
            command = command.removesuffix("&").strip()
            output = tuple(shown) if place == len(parts) else ()  # the line's last command's
            steps.append(Step(number, command, output, console, background))
    return steps


def examples(pages: list[Path] | None = None, docs: Path = DOCS) -> list[Example]:
    """Every example of the documentation (or of ``pages``, under ``docs``), in page
    order."""
    found = []
    for page in pages or sorted(docs.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for start, lines in _blocks(text):
            steps = _steps(start, lines)
            if any(step.is_sea for step in steps):
                found.append(Example(page.relative_to(docs).as_posix(), steps[0].line,
                                     tuple(steps)))
    return found
