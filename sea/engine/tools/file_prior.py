"""A structural rule that recognises a simple file question (seed 003, flow 4) from the user's
text and the workspace's real paths, so that no model is asked to plan its tool call.

"Is there a notes/todo.md?" asks ``file_exists``; "list my notes" or "notesフォルダの中身は？"
asks ``list_files``. A small model's intent does not say so reliably (it fills
``tool_operations`` with many operations), a large one's does; this rule decides before
either is asked, and only on messages it is sure of, so that every other message goes on to
the model as before.

The rule (:func:`spot`):

1. **Targets.** The paths the message names: the workspace's real files and folders
   (:func:`real_names`, the root and one level below it), matched by their path or, when
   only one has it, their name, letter case aside (``todo.md`` is ``notes/todo.md``); and
   path-like words (``notes/todo.md``, ``plan.txt``, ``drafts/``) as typed. An absolute path
   or one with ``..`` settles nothing (the workspace tools refuse it). At most two targets,
   and two only as a name in a folder ("a file called todo.md in notes").
2. **The rest is all question.** Without its targets, the message must consist only of the
   words of such questions (English: ``is there``, ``exist``, ``do I have``, ``list``,
   ``what's in``, ``files``, fillers such as ``a``, ``the``, ``my``, ``please``; Japanese:
   ``ある``, ``存在``, ``一覧``, ``中身``, ``何が入ってる``, ``ファイル``, particles). One other
   word (``delete``, ``milk``, ``summarize``, ``内容``, ``削除``) and the rule is sure of
   nothing: the message may edit, read, or be about something else.
3. **Which tool.** A listing cue (``list``, ``what's in``, ``which files``, ``中身``,
   ``一覧``) with a folder or no target: ``list_files`` on the folder (the root without
   one); with a file or a missing path it settles nothing (what is *in a file* is its
   content). Otherwise an existence cue (``is there``, ``exist``, ``have``, ``where``,
   ``ある``, ``存在``, ``どこ``) with a target: ``file_exists`` on it, whether it exists or
   not (a name matched in a folder answers where it is).

Deterministic and quick; it reads no file, only names (the caller lists them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["file", "dir"]
Operation = Literal["exists", "list"]
TOOLS: dict[Operation, str] = {"exists": "file_exists", "list": "list_files"}
"""The workspace tool of each operation."""
MAX_CHARS = 200
"""A longer message is never a simple file question."""

# English words of a simple file question (the cue each gives, if any, is in _CUES).
_EN = frozenset(
    "a an the any some my our your me i we you it is are am do does can could would will "
    "please pls tell check see know let whether if called named file folder directory dir "
    "workspace here currently now still yet all everything of at for got has have there "
    "there's exist exists existing show display list ls what what's whats which files "
    "folders directories documents entries contents in inside under within hey ok okay "
    "just where where's somewhere anywhere".split()
)
_CUES: dict[str, str] = {
    "exist": "exists", "exists": "exists", "existing": "exists", "have": "have", "has": "have",
    "got": "have", "there": "there", "there's": "there", "is": "be", "are": "be",
    "list": "list", "ls": "list", "contents": "list", "files": "files", "folders": "files",
    "directories": "files", "documents": "files", "entries": "files", "what": "what",
    "what's": "what_be", "whats": "what_be", "which": "what", "show": "show",
    "display": "show", "tell": "show", "see": "show", "in": "in", "inside": "in",
    "under": "in", "within": "in", "where": "exists", "where's": "exists",
    "somewhere": "exists", "anywhere": "exists",
}
# Japanese phrases of a simple file question and their cues; removed longest first.
_JA: dict[str, str] = {
    **dict.fromkeys(["存在しますか", "存在します", "存在する", "存在", "ありますか", "あります",
                     "あるか", "あるの", "ある", "どこに", "どこ"], "exists"),
    **dict.fromkeys(["一覧", "中身"], "list"),
    **dict.fromkeys(["リスト", "何が", "何", "なに", "どんな", "どの", "入っている", "入ってる",
                     "入って"], "what"),
    **dict.fromkeys(["ファイル", "フォルダー", "フォルダ", "ディレクトリ"], "ja_files"),
    **dict.fromkeys(["の中には", "の中に", "の中", "には", "に"], "in"),
    **dict.fromkeys(["見せて", "表示して", "表示", "教えて", "出して"], "show"),
    **dict.fromkeys(["ください", "下さい", "ちょうだい", "して", "という", "って", "います",
                     "いる", "は", "が", "の", "を", "か", "も", "ね", "よ", "全部", "すべて",
                     "全て", "私の", "僕の", "俺の", "ワークスペース", "確認", "名前"], ""),
}
_JA_ORDER = sorted(_JA, key=len, reverse=True)
_NEEDED = frozenset({"exists", "have", "there", "list", "files", "ja_files", "what", "what_be"})
"""The cues one of which every simple file question has (each branch of :func:`spot` asks
for one)."""
_NEEDED_EN = tuple(word for word, cue in _CUES.items() if cue in _NEEDED)
_NEEDED_JA = tuple(phrase for phrase, cue in _JA.items() if cue in _NEEDED)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_EDGE = r"A-Za-z0-9_\-"
_TYPED = re.compile(rf"(?<![{_EDGE}./~])([~/]?[{_EDGE}.]+(?:/[{_EDGE}.]+)*/?)")
_EXTENSION = re.compile(r"[^/.]\.[A-Za-z][A-Za-z0-9]{0,4}$")


@dataclass(frozen=True, slots=True)
class Spotted:
    """A simple file question: the operation and the path it asks about."""

    operation: Operation
    path: str
    reason: str

    @property
    def call(self) -> dict[str, object]:
        """The tool call that answers it (what a ``tool_call`` node runs)."""
        name = TOOLS[self.operation]
        return {"name": name, "args": {"path": self.path}, "id": f"spot_{name}"}


@dataclass(frozen=True, slots=True)
class _Target:
    start: int
    end: int
    path: str
    kind: Kind | None  # None: nothing is there


def spot(
    text: str, names: Sequence[str], kind_of: Callable[[str], Kind | None]
) -> Spotted | None:
    """The simple file question ``text`` asks (see the module's description), or None.

    Args:
        text: The user's message.
        names: The workspace's real paths to match the message's words with
            (:func:`real_names`).
        kind_of: Whether a path is a ``"file"``, a ``"dir"``, or None (nothing is there);
            called only on the few paths the message names.
    """
    text = unicodedata.normalize("NFKC", text).strip()
    if not text or len(text) > MAX_CHARS:
        return None
    targets = _targets(text, names, kind_of)
    if targets is None:
        return None
    residue = _without(text, targets)
    cues = _cues(residue)
    if cues is None:
        return None
    target = _one_target(targets, cues)
    if target is False:
        return None
    asking = bool(cues & {"what", "what_be"})
    listing = "list" in cues or (asking and "in" in cues) or (
        "files" in cues and bool(cues & {"what", "what_be", "show", "there", "have", "in",
                                          "exists"})) or (
        "ja_files" in cues and (target is None or "in" in cues)
        and bool(cues & {"show", "exists", "in", "what"}))
    if listing:
        if target is None:
            return Spotted("list", ".", "asks what the workspace holds")
        if target.kind == "dir":
            return Spotted("list", target.path, "asks what a folder holds")
        return None  # what is in a file is its content: not a simple question
    if target is not None and (cues & {"exists", "have"} or {"there", "be"} <= cues):
        return Spotted("exists", target.path, "asks whether a path is there")
    return None



def may_ask(text: str) -> bool:
    """False when ``text`` cannot be a simple file question whatever the workspace holds:
    none of the cues :func:`spot` needs is in it (so the workspace need not be listed).
    What is left of a message once its paths are taken out is made of its own words, so
    a cue there is a cue here."""
    text = unicodedata.normalize("NFKC", text)
    folded = text.casefold().replace("\u2019", "'")
    return any(phrase in text for phrase in _NEEDED_JA) or any(
        word in folded for word in _NEEDED_EN)

def real_names(entries: Iterable[tuple[str, str]]) -> list[str]:
    """The paths of ``entries`` (``(path, type)`` as ``list_files`` gives them) that a
    message may name."""
    return [path for path, kind in entries if kind in ("file", "dir") and path]


def _targets(
    text: str, names: Sequence[str], kind_of: Callable[[str], Kind | None]
) -> list[_Target] | None:
    """The paths the message names, in order; None when one is ambiguous or refused."""
    found = _named(text, names, kind_of)
    if found is None or not _typed(text, found, kind_of):
        return None
    return sorted(found, key=lambda t: t.start)


def _named(
    text: str, names: Sequence[str], kind_of: Callable[[str], Kind | None]
) -> list[_Target] | None:
    """The workspace's real paths the message names, by path or by a name only one has."""
    found: list[_Target] = []
    keyed: dict[str, set[str]] = {}
    for path in names:
        base = path.rstrip("/").rsplit("/", 1)[-1]
        if base != path and base.casefold() not in _EN:
            keyed.setdefault(base.casefold(), set()).add(path)
    for path in names:
        keyed[path.casefold()] = {path}  # a whole path is never ambiguous
    folded = text.casefold()
    for key in sorted(keyed, key=len, reverse=True):
        if len(key) < 2 or (key in _EN and "." not in key) or key not in folded:
            continue  # (a plain search first: a workspace has many names, a message few)
        for match in re.finditer(
            rf"(?<![{_EDGE}./]){re.escape(key)}/?(?![{_EDGE}/]|\.[A-Za-z0-9])", folded
        ):
            if _overlaps(match.start(), match.end(), found):
                continue
            if len(keyed[key]) > 1:
                return None  # the same name in two folders: which one is meant?
            (path,) = keyed[key]
            found.append(_Target(match.start(), match.end(), path, kind_of(path)))
    return found


def _typed(text: str, found: list[_Target], kind_of: Callable[[str], Kind | None]) -> bool:
    """Adds the path-like words of the message to ``found``; False when one lies outside
    the workspace."""
    for match in _TYPED.finditer(text):
        word = match.group(1).rstrip(".")
        end = match.start() + len(word)
        if not ("/" in word or _EXTENSION.search(word)) or _overlaps(match.start(), end, found):
            continue
        if word.startswith(("/", "~")) or ".." in word.split("/"):
            return False  # outside the workspace: not for this rule
        path = word.rstrip("/") or "."
        found.append(_Target(match.start(), end, path, kind_of(path)))
    return True


def _overlaps(start: int, end: int, found: Sequence[_Target]) -> bool:
    return any(start < t.end and t.start < end for t in found)


def _without(text: str, targets: Sequence[_Target]) -> str:
    out, at = [], 0
    for target in targets:
        out.append(text[at:target.start])
        out.append(" ")
        at = target.end
    out.append(text[at:])
    return "".join(out)


def _cues(residue: str) -> set[str] | None:
    """The cues of what is left of the message; None when a word is not a file question's."""
    cues: set[str] = set()
    rest = residue
    for phrase in _JA_ORDER:
        if phrase in rest:
            cues.add(_JA[phrase])
            rest = rest.replace(phrase, " ")
    rest = rest.casefold().replace("\u2019", "'")
    for word in _WORD.findall(rest):
        if word not in _EN:
            return None
        cues.add(_CUES.get(word, ""))
    rest = _WORD.sub(" ", rest)
    if any(unicodedata.category(c)[0] in "LN" for c in rest):
        return None  # a word of another kind (kanji, kana, digits) is left
    cues.discard("")
    return cues


def _one_target(targets: list[_Target], cues: set[str]) -> _Target | None | Literal[False]:
    """The one path asked about (None: none named); False when the targets do not make one."""
    if not targets:
        return None
    if len(targets) == 1:
        return targets[0]
    if len(targets) > 2:
        return False
    first, second = targets
    for inner, outer in ((first, second), (second, first)):
        if inner.path.startswith(outer.path + "/"):
            return inner  # "todo.md in notes": the name found already lies in the folder
    folder, name = (second, first) if first.kind != "dir" else (first, second)
    if folder.kind != "dir" or "in" not in cues or "/" in name.path:
        return False
    return _Target(name.start, name.end, f"{folder.path}/{name.path}", None)
