"""Pins and short-term memory over an open transaction (tables of migration 5:
``pins`` and ``short_term_memory``)."""

from __future__ import annotations

from saimemory.errors import InvalidMessageError, PinLimitError
from saimemory.pins import MAX_PIN_CHARS, MAX_PINS, MAX_SUMMARY_CHARS, Pin, ShortTermMemory
from saimemory.prepare import check_identifier, from_micros
from saimemory.tx import Row, Tx

_PIN_COLUMNS = "id, persona, text, created_us"


def check_pin_text(text: object) -> str:
    """The pin's text, stripped; :class:`InvalidMessageError` when it cannot be kept."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidMessageError(f"a pinned item must be a non-empty string, got {text!r}")
    stripped = text.strip()
    if "\x00" in stripped or len(stripped) > MAX_PIN_CHARS:
        raise InvalidMessageError(
            f"a pinned item has at most {MAX_PIN_CHARS} characters without NUL "
            f"(got {len(stripped)})"
        )
    return stripped


def _pin(row: Row) -> Pin:
    return Pin(id=int(row[0]), persona=row[1], text=row[2], created_at=from_micros(row[3]))


PINS_SQL = f"SELECT {_PIN_COLUMNS} FROM pins WHERE persona = ? ORDER BY id"
"""The persona's pins (its one parameter), oldest first: rows for :func:`pins_of`."""


def pins_of(rows: list[Row]) -> list[Pin]:
    """The pins of rows of :data:`PINS_SQL`."""
    return [_pin(row) for row in rows]


def read_pins(tx: Tx, persona: str) -> list[Pin]:
    """The persona's pins, oldest first."""
    return pins_of(tx.fetch(PINS_SQL, (persona,)))


def insert_pin(tx: Tx, persona: str, text: str, now_us: int) -> Pin:
    """Pin ``text`` (the existing pin when the persona has it already); refuses a sixth."""
    check_identifier(persona, "persona")
    text = check_pin_text(text)
    pins = read_pins(tx, persona)
    for pin in pins:
        if pin.text == text:
            return pin
    if len(pins) >= MAX_PINS:
        listed = "; ".join(f"#{pin.id} {pin.text[:40]}" for pin in pins)
        raise PinLimitError(
            f"persona {persona!r} already keeps {MAX_PINS} pinned items ({listed}); "
            "unpin one first"
        )
    rows = tx.fetch(
        f"INSERT INTO pins (persona, text, created_us) VALUES (?, ?, ?) RETURNING {_PIN_COLUMNS}",
        (persona, text, now_us),
    )
    return _pin(rows[0])


def delete_pin(tx: Tx, persona: str, pin_id: int) -> bool:
    """Remove one of the persona's pins; False when it has no pin of that id."""
    found = tx.fetch("SELECT id FROM pins WHERE persona = ? AND id = ?", (persona, pin_id))
    if not found:
        return False
    tx.run("DELETE FROM pins WHERE persona = ? AND id = ?", (persona, pin_id))
    return True


SHORT_TERM_SQL = (
    "SELECT persona, text, through_id, updated_us FROM short_term_memory WHERE persona = ?")
"""The persona's short-term memory (its one parameter): rows for :func:`short_term_of`."""


def short_term_of(rows: list[Row]) -> ShortTermMemory | None:
    """The short-term memory of rows of :data:`SHORT_TERM_SQL`, if there is one."""
    if not rows:
        return None
    row = rows[0]
    return ShortTermMemory(row[0], row[1], int(row[2]), from_micros(row[3]))


def read_short_term(tx: Tx, persona: str) -> ShortTermMemory | None:
    """The persona's short-term memory, if it has one."""
    return short_term_of(tx.fetch(SHORT_TERM_SQL, (persona,)))


def write_short_term(
    tx: Tx, persona: str, text: str, through_id: int, now_us: int
) -> ShortTermMemory:
    """Replace the persona's short-term memory."""
    check_identifier(persona, "persona")
    if not isinstance(text, str) or "\x00" in text or len(text) > MAX_SUMMARY_CHARS:
        raise InvalidMessageError(
            f"short-term memory must be a string of at most {MAX_SUMMARY_CHARS} characters "
            "without NUL"
        )
    if isinstance(through_id, bool) or not isinstance(through_id, int) or through_id < 0:
        raise InvalidMessageError(f"through_id must be an integer >= 0, got {through_id!r}")
    tx.run("DELETE FROM short_term_memory WHERE persona = ?", (persona,))
    tx.run(
        "INSERT INTO short_term_memory (persona, text, through_id, updated_us) "
        "VALUES (?, ?, ?, ?)",
        (persona, text, through_id, now_us),
    )
    return ShortTermMemory(persona, text, through_id, from_micros(now_us))


def delete_pins_and_summary(tx: Tx, persona: str) -> None:
    """Remove the persona's pins and short-term memory."""
    tx.run("DELETE FROM pins WHERE persona = ?", (persona,))
    tx.run("DELETE FROM short_term_memory WHERE persona = ?", (persona,))
