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
