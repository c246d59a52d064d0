"""``sea validate``'s verdicts kept by what they depend on, so an unchanged set of playbooks
is not checked again (as ruff and mypy keep theirs).

A verdict is the diagnostics of one run's checks. Its key is a digest of everything those
checks read:

* the bytes of every playbook checked and of every playbook in the directories the calls
  are looked up in (named directories, and the directories of named files), with the paths
  as given (diagnostics name them so);
* the options that change a verdict (``--strict``) and the bytes of every ``--tools`` JSON
  catalogue (a run with tools from a Python module or an MCP server is never cached: they
  are what the code or the server says on the day);
* SEA itself: its version and, for each file of the installed package and of its data
  directories (the bundled playbooks and the published schemas, which a source checkout
  keeps beside the package), its path, size and modification time, so an edited checkout
  counts as another SEA;
* the Python version and the installed distributions (their ``*.dist-info`` names, which
  carry the versions of pydantic, jsonschema and the others the checks use).

Entries are JSON files under the cache directory, written whole (a temporary file renamed
into place), at most :data:`KEEP` of them (the least recently written go first). An entry
that cannot be read or does not have the expected shape counts as absent.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from sea.errors import Diagnostic, Severity

FORMAT = 1
"""The entries' layout: a change makes every older entry absent."""
KEEP = 64
"""How many verdicts are kept."""


def verdict_key(
    checked: Sequence[tuple[Path, bytes]],
    library: Sequence[tuple[Path, bytes]],
    *,
    strict: bool,
    catalogues: Sequence[tuple[str, bytes]],
    data_dirs: Sequence[Path],
) -> str:
    """The digest of what a verdict depends on (see the module's text)."""
    digest = hashlib.blake2b(digest_size=20)

    def part(*items: object) -> None:
        digest.update(orjson.dumps([str(item) for item in items]))

    import sea

    part("format", FORMAT, "sea", sea.__version__, "python", sys.version, "strict", strict)
    for root in (Path(sea.__file__).parent, *data_dirs):
        for name, size, mtime in _package_files(root):
            part("code", root, name, size, mtime)
    for name in _distributions(sys.path):
        part("dist", name)
    for source, data in catalogues:
        part("tools", source, hashlib.blake2b(data).hexdigest())
    for role, files in (("checked", checked), ("library", library)):
        for path, data in files:
            part(role, path, hashlib.blake2b(data).hexdigest())
    return digest.hexdigest()


def _package_files(root: Path) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    pending.append(Path(entry.path))
                continue
            info = entry.stat()
            found.append((os.path.relpath(entry.path, root), info.st_size, info.st_mtime_ns))
    return sorted(found)


def _distributions(paths: Iterable[str]) -> list[str]:
    names: list[str] = []
    for location in paths:
        try:
            names.extend(f"{location}/{name}" for name in os.listdir(location or ".")
                         if name.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
    return sorted(names)


def load(directory: Path, key: str) -> list[Diagnostic] | None:
    """The verdict kept under ``key``, or None."""
    try:
        entry = orjson.loads((directory / f"{key}.json").read_bytes())
        if entry.get("format") != FORMAT:
            return None
        return [_diagnostic(item) for item in entry["diagnostics"]]
    except (OSError, orjson.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError):
        return None


def store(directory: Path, key: str, diagnostics: Sequence[Diagnostic]) -> None:
    """Keep ``diagnostics`` under ``key``; a cache that cannot be written is left alone
    (the verdict stands, the next run checks again)."""
    records = [{**d.to_json(), "node_id": d.node_id} for d in diagnostics]
    data = orjson.dumps({"format": FORMAT, "diagnostics": records})
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = directory / f".{key}.{os.getpid()}.tmp"
        partial.write_bytes(data)
        os.replace(partial, directory / f"{key}.json")
        _prune(directory)
    except OSError:
        return


def _prune(directory: Path) -> None:
    entries = []
    for path in directory.glob("*.json"):
        try:
            entries.append((path.stat().st_mtime_ns, path))
        except OSError:
            continue
    for _, path in sorted(entries, reverse=True)[KEEP:]:
        try:
            path.unlink()
        except OSError:
            continue


def _diagnostic(item: dict[str, Any]) -> Diagnostic:
    return Diagnostic(
        code=str(item["code"]),
        severity=Severity(item["severity"]),
        message=str(item["message"]),
        file=item["file"],
        pointer=str(item["pointer"]),
        line=item["line"],
        column=item["column"],
        hint=item["hint"],
        node_id=item["node_id"],
    )
