"""Text from a model, a tool, the store or a file, made safe to print on a terminal.

Such text may hold terminal control sequences (``ESC [ 2 J`` clears the screen, an OSC
sequence retitles the window or writes a hyperlink, ``CR`` overwrites what was printed).
:func:`printable` shows every C0 and C1 control character except newline and tab in a
visible form, so the sequence is printed as text and does nothing. JSON output
(``--json``, ``--events jsonl``) stays JSON: it escapes control characters already.
"""

from __future__ import annotations

_VISIBLE: dict[int, str] = {
    **{code: f"^{chr(code + 64)}" for code in range(0x20) if code not in (0x09, 0x0A)},
    0x7F: "^?",
    **{code: f"\\u{code:04x}" for code in range(0x80, 0xA0)},
}
"""C0 controls (but tab and newline) in caret notation (``ESC`` → ``^[``), ``DEL`` → ``^?``,
C1 controls (``CSI`` U+009B, ``OSC`` U+009D...) as ``\\u009b``."""


def printable(text: str) -> str:
    """``text`` with its control characters (but newline and tab) in a visible form."""
    return text.translate(_VISIBLE)


_VISIBLE_IN_NAMES: dict[int, str] = {**_VISIBLE, 0x09: "\\t", 0x0A: "\\n"}
"""In a file name, newline and tab are escaped too: a name is one item on one line."""


def printable_name(name: str) -> str:
    """A file name (or path) made safe to print on one line: control characters in a
    visible form (newline and tab as ``\\n`` and ``\\t``), and bytes that are not UTF-8 (read
    as lone surrogates) as ``\\xNN``."""
    shown = name.translate(_VISIBLE_IN_NAMES)
    try:
        shown.encode("utf-8")
        return shown
    except UnicodeEncodeError:
        pass
    try:
        raw = shown.encode("utf-8", errors="surrogateescape")  # the name's own bytes
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return shown.encode("utf-8", errors="backslashreplace").decode("utf-8")
    return raw.decode("utf-8", errors="backslashreplace")
