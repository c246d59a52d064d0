"""Validation and preflight of a plan's specs inside the workspace, in one pass, in order.

Each spec is checked against the workspace *as the specs before it will have left it* (a
file an earlier spec creates can be read or overwritten by a later one; a file an earlier
spec deletes cannot be read). Paths are normalized (``./a//b`` → ``a/b``) and confined by
:meth:`sea.engine.tools.workspace.Workspace.locate`: absolute paths, ``..`` and symbolic
links leading out are refused, as are paths through a protected name and files with a
forbidden extension (:class:`~sea.engine.plans.policy.PlanPolicy`).

=========  ====================================================  =============================
kind       valid when                                            risk
=========  ====================================================  =============================
create     content given, within the size limit; nothing there   low; medium from
                                                                 ``medium_content_bytes``
write      content given, within the size limit; not a folder    as create for a new file;
                                                                 overwrite: medium, high for a
                                                                 file of ``large_file_bytes``
mkdir      no content; not a file (an existing folder: no-op)    low
read       no content; a file of at most ``max_read_bytes``      low
analyze    path optional (confined when given)                   low
run        content is a command line whose first word is on     high
           the allow-list; path is an existing folder
delete     no content; a file or an empty folder (not a link)    high
=========  ====================================================  =============================

Every kind's path and description are one line of text (no control character or line
break: a person reads them, one spec a line, when asked to approve).

The preflight of a spec is ``{exists, overwrite, diff_summary, fingerprint}``; the
fingerprint digests the spec and the state of its target (absent, a folder, or a file's
SHA-256), the two things its diff is made of, so a changed fingerprint means a changed diff.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Literal

from saimemory.plans import ActionSpec, ActionSpecExt, DiffSummary, PlanPreview, Preflight, Risk
from sea.engine.plans import fsops
from sea.engine.plans.commands import command_argv
from sea.engine.plans.diffs import Diff, line_count, unified
from sea.engine.plans.policy import RISK_WEIGHTS, PlanPolicy
from sea.engine.plans.specs import one_line, text_problem
from sea.engine.tools.workspace import Workspace, WorkspaceError

CHANGING_KINDS = ("create", "write", "mkdir", "delete")
"""The kinds whose paths a preview lists as files (they change the workspace)."""
_FILE_KINDS = ("create", "write", "read", "delete")


@dataclass(frozen=True, slots=True)
class _Node:
    """What is at a path: nothing, a file (its size; its content when a spec wrote it), a
    folder, or a special file; ``origin`` names the spec that will have made it so."""

    kind: Literal["absent", "file", "dir", "special"]
    size: int = 0
    data: bytes | None = None
    origin: str = ""


@dataclass(frozen=True, slots=True)
class Checked:
    """One spec after the pass: normalized, with its risk, validity and preflight; its
    issues; its diff; and its real target relative to the root (``None`` if it has none)."""

    spec: ActionSpecExt
    issues: tuple[str, ...]
    diff: DiffSummary
    parts: tuple[str, ...] | None

    @property
    def label(self) -> str:
        """How messages name the spec: ``spec 2 (write notes/a.md)``."""
        return f"spec {self.spec.id} ({self.spec.base.kind} {one_line(self.spec.base.path)})"


@dataclass(frozen=True, slots=True)
class Inspection:
    """The pass over some specs of a plan."""

    checked: tuple[Checked, ...]

    @property
    def ok(self) -> bool:
        """Whether every spec is valid."""
        return all(item.spec.validated for item in self.checked)

    @property
    def issues(self) -> tuple[str, ...]:
        """Every issue, each naming its spec."""
        return tuple(f"{item.label}: {issue}" for item in self.checked for issue in item.issues)

    def preview(self) -> PlanPreview:
        """The files the changing specs touch, each spec's diff, and the risk score (the
        highest risk weight among the specs, 0 for none)."""
        files = dict.fromkeys(item.diff.path for item in self.checked
                              if item.spec.base.kind in CHANGING_KINDS)
        score = max((RISK_WEIGHTS[item.spec.risk] for item in self.checked), default=0.0)
        return PlanPreview(tuple(files), tuple(item.diff for item in self.checked), score)


def normalize_path(raw: str) -> str:
    """A workspace path in normal form: spaces around it, ``.`` and repeated ``/`` removed;
    ``""`` is ``"."`` (the root). ``..`` and absolute paths are kept, for the confinement
    check to refuse."""
    text = raw.strip()
    return PurePosixPath(text).as_posix() if text else "."


def inspect_specs(
    workspace: Workspace, policy: PlanPolicy, specs: Sequence[tuple[str, ActionSpec]],
    known: Mapping[str, Diff] | None = None,
) -> Inspection:
    """Validate and preflight ``(id, spec)`` pairs, in order, against the workspace now.

    ``known``: diffs made before, by the fingerprint they were made for; a spec with one of
    these fingerprints keeps that diff instead of making it again (the same fingerprint means
    the same spec and target, so the same diff).
    """
    return _Pass(workspace, policy, known or {}).run(specs)


def known_diffs(specs: Sequence[ActionSpecExt], preview: PlanPreview | None
                ) -> dict[str, Diff]:
    """The diffs of a stored preview by the fingerprint of their spec's stored preflight
    (made by the same inspection), for :func:`inspect_specs`."""
    if preview is None:
        return {}
    shown = {diff.spec_id: diff for diff in preview.diffs}
    known = {}
    for spec in specs:
        diff = shown.get(spec.id)
        if diff is not None and spec.preflight is not None and spec.preflight.fingerprint:
            known[spec.preflight.fingerprint] = Diff(diff.diff, diff.added, diff.removed,
                                                     diff.truncated)
    return known


class _Pass:
    """One pass: the overlay of what earlier specs will have done, keyed by real path."""

    def __init__(self, workspace: Workspace, policy: PlanPolicy,
                 known: Mapping[str, Diff]) -> None:
        self.workspace = workspace
        self.root = workspace.root
        self.policy = policy
        self.known = known
        self.overlay: dict[tuple[str, ...], _Node] = {}
        self._made: Diff | None = None  # the diff known for the spec being checked

    def run(self, specs: Sequence[tuple[str, ActionSpec]]) -> Inspection:
        return Inspection(tuple(self._one(spec_id, spec) for spec_id, spec in specs))

    def _one(self, spec_id: str, spec: ActionSpec) -> Checked:
        path = normalize_path(spec.path)
        spec = replace(spec, path=path)
        issues = [problem for name in ("path", "description")
                  if (problem := text_problem(name, getattr(spec, name), one_line=True))]
        parts = None if issues else self._locate(spec, issues)
        if parts is not None:
            issues.extend(self._blocked(parts))
        node = self._node(parts) if parts is not None else _Node("absent")
        result = _Outcome()
        fingerprint = ""
        if not issues:
            fingerprint = self._fingerprint(spec, parts, node)
            self._made = self.known.get(fingerprint) if fingerprint else None
            _RULES[spec.kind](self, spec, parts or (), node, result)
            issues.extend(result.issues)
        valid = not issues
        diff = result.diff if valid else Diff()
        risk = result.risk if valid else _worst_case(spec.kind)
        summary = result.summary if valid else "not valid: " + "; ".join(issues)
        if valid and parts is not None and result.after is not None:
            self._apply(parts, result.after, f"spec {spec_id}")
        preflight = Preflight(
            exists=node.kind != "absent", overwrite=result.overwrite, diff_summary=summary,
            fingerprint=fingerprint if valid else "",
        )
        ext = ActionSpecExt(id=spec_id, base=spec, risk=risk, validated=valid,
                            preflight=preflight, notes="; ".join(issues) or result.note)
        summary_diff = DiffSummary(spec_id, spec.kind, path, risk, diff.added, diff.removed,
                                   diff.text, diff.truncated)
        return Checked(ext, tuple(issues), summary_diff, parts)

    # -- where -----------------------------------------------------------------------------

    def _locate(self, spec: ActionSpec, issues: list[str]) -> tuple[str, ...] | None:
        """The real target of ``spec`` relative to the root, after the confinement and name
        checks; ``None`` (with an issue) when refused."""
        if spec.kind == "analyze" and spec.path == ".":
            return None
        try:
            real, _, _ = self.workspace.locate(spec.path, missing_ok=True)
        except WorkspaceError as exc:
            issues.append(str(exc))
            return None
        parts = real.relative_to(self.root).parts
        shown = PurePosixPath(spec.path).parts
        protected = sorted({p for p in (*parts, *shown) if p in self.policy.protected_names})
        if protected:
            issues.append(f"the path goes through {', '.join(protected)}, which plans may not "
                          "touch")
        if spec.kind in _FILE_KINDS:
            suffixes = {PurePosixPath(name).suffix.lower() for name in (spec.path, *parts[-1:])}
            forbidden = sorted(suffixes & self.policy.forbidden_extensions)
            if forbidden:
                issues.append(f"files ending in {', '.join(forbidden)} are forbidden")
        return parts

    def _blocked(self, parts: tuple[str, ...]) -> list[str]:
        """The folders on the way that an earlier spec will have made files."""
        return [f"{'/'.join(parts[:end])!r} will be a file (made by {node.origin}), not a "
                "folder"
                for end in range(1, len(parts))
                if (node := self.overlay.get(parts[:end])) is not None and node.kind == "file"]

    def _node(self, parts: tuple[str, ...]) -> _Node:
        if parts in self.overlay:
            return self.overlay[parts]
        try:
            info = os.lstat(self.root.joinpath(*parts))
        except (FileNotFoundError, NotADirectoryError):
            return _Node("absent")
        if stat.S_ISREG(info.st_mode):
            return _Node("file", info.st_size)
        return _Node("dir" if stat.S_ISDIR(info.st_mode) else "special")

    def _apply(self, parts: tuple[str, ...], after: _Node, origin: str) -> None:
        """Record what a valid spec will have done (its folders made on the way, too)."""
        if after.kind in ("file", "dir"):
            for end in range(1, len(parts)):
                if self._node(parts[:end]).kind != "dir":
                    self.overlay[parts[:end]] = _Node("dir", origin=origin)
        self.overlay[parts] = replace(after, origin=origin)

    def content_of(self, parts: tuple[str, ...], node: _Node) -> bytes | None:
        """A file's content (from the overlay or the disk), or ``None`` when it is too large
        to diff or unreadable."""
        if node.data is not None:
            return node.data
        if node.size > self.policy.max_diff_bytes:
            return None
        try:
            return fsops.read_bytes(self.root, parts, self.policy.max_diff_bytes)
        except fsops.FsError:
            return None

    def diff(self, old: bytes | None, new: bytes | None, path: str) -> Diff:
        """The diff of the spec being checked: the one known for its fingerprint, else made
        within the policy's limits."""
        if self._made is not None:
            return self._made
        return unified(old, new, path, self.policy.max_diff_chars, self.policy.max_diff_lines)

    def children(self, parts: tuple[str, ...]) -> set[str]:
        """The names a folder will hold once the earlier specs ran."""
        try:
            names = set() if parts in self.overlay else set(os.listdir(self.root.joinpath(*parts)))
        except OSError:
            names = set()
        for key, node in self.overlay.items():
            if len(key) == len(parts) + 1 and key[:-1] == parts:
                (names.discard if node.kind == "absent" else names.add)(key[-1])
        return names

    def _fingerprint(self, spec: ActionSpec, parts: tuple[str, ...] | None, node: _Node) -> str:
        if spec.kind not in CHANGING_KINDS or parts is None:
            return ""
        if node.kind == "file" and node.data is not None:
            state = "file:" + hashlib.sha256(node.data).hexdigest()
        elif node.kind == "file":
            try:
                state = "file:" + fsops.digest(self.root, parts)
            except fsops.FsError as exc:
                state = f"unreadable:{exc}"
        else:
            state = node.kind
        made = hashlib.sha256((spec.content or "").encode()).hexdigest()
        return hashlib.sha256("\0".join((spec.kind, "/".join(parts), state, made)).encode()
                              ).hexdigest()


@dataclass
class _Outcome:
    """What a kind's rule found out about one spec."""

    issues: list[str] = field(default_factory=list)
    risk: Risk = "low"
    overwrite: bool = False
    summary: str = ""
    note: str = ""
    diff: Diff = Diff()
    after: _Node | None = None

    def refuse(self, issue: str) -> None:
        """Note that the spec is not valid, and why."""
        self.issues.append(issue)


def _worst_case(kind: str) -> Risk:
    return "high" if kind in ("run", "delete") else "medium" if kind == "write" else "low"


def _content(policy: PlanPolicy, spec: ActionSpec, out: _Outcome) -> bytes | None:
    if spec.content is None:
        out.refuse(f"{spec.kind} needs content (the text to put in the file)")
        return None
    data = spec.content.encode("utf-8", errors="surrogatepass")
    if len(data) > policy.max_content_bytes:
        out.refuse(f"content has {len(data)} bytes, over the limit of "
                   f"{policy.max_content_bytes}")
        return None
    return data


def _no_content(spec: ActionSpec, out: _Outcome) -> None:
    if spec.content:
        out.refuse(f"{spec.kind} takes no content")


def _busy(node: _Node, what: str, out: _Outcome) -> bool:
    """Refuse a target that is a folder or special file where a file is wanted."""
    if node.kind in ("dir", "special"):
        out.refuse(f"the path is {'a folder' if node.kind == 'dir' else 'a special file'}, "
                   f"not a file to {what}")
        return True
    return False


def _size_risk(policy: PlanPolicy, size: int) -> Risk:
    return "medium" if size >= policy.medium_content_bytes else "low"


def _create(p: _Pass, spec: ActionSpec, parts: tuple[str, ...], node: _Node,
            out: _Outcome) -> None:
    data = _content(p.policy, spec, out)
    if node.kind != "absent":
        where = f" (made by {node.origin})" if node.origin else ""
        out.refuse(f"the path already exists{where}; use write to replace a file")
    if data is None or out.issues:
        return
    out.risk = _size_risk(p.policy, len(data))
    out.diff = p.diff(None, data, spec.path)
    out.summary = f"new file, {line_count(data)} lines ({len(data)} bytes)"
    out.after = _Node("file", len(data), data)


def _write(p: _Pass, spec: ActionSpec, parts: tuple[str, ...], node: _Node,
           out: _Outcome) -> None:
    data = _content(p.policy, spec, out)
    if _busy(node, "write", out) or data is None:
        return
    if node.kind == "absent":
        _create(p, spec, parts, node, out)
        return
    out.overwrite = True
    out.risk = "high" if node.size >= p.policy.large_file_bytes else "medium"
    old = p.content_of(parts, node)
    if old is None or len(data) > p.policy.max_diff_bytes:
        out.summary = (f"replaces a file of {node.size} bytes with {len(data)} bytes "
                       f"(no line diff over {p.policy.max_diff_bytes} bytes)")
    else:
        out.diff = p.diff(old, data, spec.path)
        out.summary = (f"+{out.diff.added} -{out.diff.removed} lines (replaces a file of "
                       f"{node.size} bytes)")
    out.after = _Node("file", len(data), data)


def _mkdir(p: _Pass, spec: ActionSpec, parts: tuple[str, ...], node: _Node,
           out: _Outcome) -> None:
    _no_content(spec, out)
    if node.kind in ("file", "special"):
        out.refuse("the path is a file, not a folder")
    out.summary = "folder exists already: nothing to do" if node.kind == "dir" else "new folder"
    out.note = "the folder exists already" if node.kind == "dir" else ""
    out.after = _Node("dir")


def _read(p: _Pass, spec: ActionSpec, parts: tuple[str, ...], node: _Node,
          out: _Outcome) -> None:
    _no_content(spec, out)
    if node.kind == "absent":
        out.refuse("no such file in the workspace" + (f" (deleted by {node.origin})"
                                                       if node.origin else ""))
    elif not _busy(node, "read", out) and node.size > p.policy.max_read_bytes:
        out.refuse(f"the file has {node.size} bytes, over the read limit of "
                   f"{p.policy.max_read_bytes}")
    out.summary = f"reads a file of {node.size} bytes"


def _analyze(p: _Pass, spec: ActionSpec, parts: tuple[str, ...], node: _Node,
             out: _Outcome) -> None:
    out.summary = "no change to the workspace"


def _run(p: _Pass, spec: ActionSpec, parts: tuple[str, ...], node: _Node,
         out: _Outcome) -> None:
    out.risk = "high"
    argv = command_argv(spec, p.policy, out.refuse, root=p.root,
                        cwd=p.root.joinpath(*parts))
    if node.kind != "dir":
        out.refuse("the working folder (path) is not an existing folder")
    if argv:
        out.summary = f"runs {shlex.join(argv)} in {spec.path}"


def _delete(p: _Pass, spec: ActionSpec, parts: tuple[str, ...], node: _Node,
            out: _Outcome) -> None:
    _no_content(spec, out)
    out.risk = "high"
    link = _link_target(p.root, spec.path)
    if link is not None:
        out.refuse(f"the path is a symbolic link (to {link!r}); delete removes files and "
                   "folders, never a link's target: delete the target by its own path")
    elif not parts:
        out.refuse("the workspace root cannot be deleted")
    elif node.kind == "absent":
        out.refuse("no such file or folder in the workspace"
                   + (f" (deleted by {node.origin})" if node.origin else ""))
    elif node.kind == "dir":
        if p.children(parts):
            out.refuse("the folder is not empty; delete its files first")
        out.summary = "deletes an empty folder"
    elif node.kind == "special":
        out.refuse("the path is a special file")
    else:
        old = p.content_of(parts, node)
        out.diff = p.diff(old, None, spec.path) if old is not None \
            else Diff()
        out.summary = f"deletes a file of {node.size} bytes"
    out.after = _Node("absent")


def _link_target(root: Path, path: str) -> str | None:
    """Where ``path`` leads when its last name is a symbolic link (the folders on the way
    were confined by the locate), else None."""
    try:
        return os.readlink(root / path)
    except OSError:  # not a link, or nothing there
        return None


_RULES = {
    "create": _create, "write": _write, "mkdir": _mkdir, "read": _read,
    "analyze": _analyze, "run": _run, "delete": _delete,
}
