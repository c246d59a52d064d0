"""The records the SQL backends' store keeps beside messages: pinned items, short-term
memory, call records and plans."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from saimemory.call_rows import check_call, insert_calls, read_calls
from saimemory.calls import CallRecord
from saimemory.errors import NotFoundError
from saimemory.pin_rows import delete_pin, insert_pin, read_pins, read_short_term, write_short_term
from saimemory.pins import Pin, ShortTermMemory
from saimemory.plan_rows import (
    check_plan,
    check_plan_identifier,
    clear_current,
    list_plans,
    read_current_plan,
    read_plan,
    set_current,
    write_plan,
)
from saimemory.plans import Plan, PlanStatus
from saimemory.prepare import check_identifier, to_micros
from saimemory.sql_core import SqlCore


class SqlRecords(SqlCore):
    """Pins, short-term memory, call records and plans, each read and written."""

    def pins(self, persona: str) -> list[Pin]:
        """The persona's pinned items, oldest first."""
        with self._read_one() as tx:
            return read_pins(tx, persona)

    def pin(self, persona: str, text: str) -> Pin:
        """Pin ``text`` for the persona (see :meth:`MessageStore.pin`)."""
        check_identifier(persona, "persona")
        with self._write(persona) as tx:
            return insert_pin(tx, persona, text, to_micros(self._now()))

    def unpin(self, persona: str, pin_id: int) -> bool:
        """Remove one of the persona's pins; False when it has none of that id."""
        check_identifier(persona, "persona")
        with self._write(persona) as tx:
            return delete_pin(tx, persona, int(pin_id))

    def short_term(self, persona: str) -> ShortTermMemory | None:
        """The persona's short-term memory, if any."""
        with self._read_one() as tx:
            return read_short_term(tx, persona)

    def save_short_term(self, persona: str, text: str, through_id: int) -> ShortTermMemory:
        """Replace the persona's short-term memory."""
        check_identifier(persona, "persona")
        with self._write(persona) as tx:
            return write_short_term(tx, persona, text, through_id, to_micros(self._now()))

    def record_calls(self, records: Sequence[CallRecord]) -> None:
        """Store call records in one transaction (all or none)."""
        for record in records:
            check_call(record)
        personas = sorted({record.persona for record in records})
        if personas:
            self._write_calls(records, personas)

    def _write_calls(self, records: Sequence[CallRecord], personas: list[str]) -> None:
        """Write checked records in one transaction holding each of ``personas``' locks."""
        with self._write(*personas) as tx:
            insert_calls(tx, records, to_micros(self._now()))

    def call_records(
        self,
        persona: str | None = None,
        *,
        since: datetime | None = None,
        pulse_id: str | None = None,
    ) -> list[CallRecord]:
        """Stored call records, oldest first (see :meth:`MessageStore.call_records`)."""
        with self._read_one() as tx:
            return read_calls(tx, persona, since, pulse_id)

    # -- plans ----------------------------------------------------------------------------

    def save_plan(self, plan: Plan, *, make_current: bool = False) -> Plan:
        """Insert or update a plan (see :meth:`MessageStore.save_plan`)."""
        check_plan(plan)
        now = to_micros(self._now())
        with self._write(plan.persona) as tx:
            saved = write_plan(tx, plan, now, self.where)
            if make_current:
                set_current(tx, plan.persona, plan.id, now, self.where)
        return saved

    def get_plan(self, persona: str, plan_id: str) -> Plan:
        """The persona's plan with this id (:class:`NotFoundError` if none)."""
        check_plan_identifier(persona, "persona")
        with self._read_one() as tx:
            found = read_plan(tx, persona, plan_id)
        if found is None:
            raise NotFoundError(f"{self.where}: persona {persona!r} has no plan {plan_id!r}")
        return found

    def list_plans(
        self, persona: str, *, status: PlanStatus | Sequence[PlanStatus] | None = None
    ) -> list[Plan]:
        """The persona's plans, newest first (of ``status``, when given)."""
        check_plan_identifier(persona, "persona")
        statuses = (status,) if isinstance(status, str) else status
        with self._read_one() as tx:
            return list_plans(tx, persona, statuses)

    def current_plan(self, persona: str) -> Plan | None:
        """The persona's current plan, if one is set."""
        check_plan_identifier(persona, "persona")
        with self._read_one() as tx:
            return read_current_plan(tx, persona)

    def set_current_plan(self, persona: str, plan_id: str) -> None:
        """Make one of the persona's plans its current plan."""
        check_plan_identifier(persona, "persona")
        with self._write(persona) as tx:
            set_current(tx, persona, plan_id, to_micros(self._now()), self.where)

    def clear_current_plan(self, persona: str) -> str | None:
        """Unset the persona's current plan; the id it had, if any."""
        check_plan_identifier(persona, "persona")
        with self._write(persona) as tx:
            return clear_current(tx, persona)
