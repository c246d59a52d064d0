"""Which server runs which run, and whether that server is alive.

A ``sea serve`` that runs pulses itself (a PostgreSQL store without ``--workers``) names
itself (host, process, a random tag) on the logs of the runs it starts
(``sea_run_logs.owner``) and holds a session advisory lock keyed by that name for its
life, on a connection of its own. PostgreSQL releases the lock when the process dies,
however it dies; another server that finds an open log whose owner's lock is free ends
that run in error (SEA596) so its streams end and its persona is free again. One server
claims each such run (the owner is cleared in the same statement), so it is ended once.
"""

from __future__ import annotations

import os
import socket
import uuid
from typing import Any

from sea.serve.pglog import PgEventLog

OWNER_SPACE = 0x5EA0A1
"""The advisory lock (OWNER_SPACE, hashtext(owner)) a live server holds."""
_ORPHANS = """
SELECT run_id, owner FROM sea_run_logs log
 WHERE closed_at IS NULL AND owner IS NOT NULL AND owner <> %s
   AND NOT EXISTS (
       SELECT 1 FROM pg_locks lock
        WHERE lock.locktype = 'advisory' AND lock.granted AND lock.objsubid = 2
          AND lock.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND lock.classid = %s::bigint::oid
          AND lock.objid = (hashtext(log.owner)::bigint & 4294967295)::oid)
"""


class Ownership:
    """This server's name on its runs, and the runs of servers that died.

    Args:
        log: The event log (its connections; its opens record the owner).
    """

    def __init__(self, log: PgEventLog) -> None:
        self.log = log
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._conn: Any = None

    async def hold(self) -> None:
        """Take this server's lock (once), then name it on the logs it opens."""
        if self._conn is not None:
            return
        conn = await self.log.connect()
        await conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))",
                           [OWNER_SPACE, self.name])
        self._conn = conn
        self.log.owner = self.name

    async def orphans(self) -> list[str]:
        """Claim the open runs whose server died; their ids (each claimed by one server)."""
        conn = await self.log.connect()
        try:
            found = await (await conn.execute(_ORPHANS, [self.name, OWNER_SPACE])).fetchall()
            claimed = []
            for run_id, owner in found:
                row = await (await conn.execute(
                    "UPDATE sea_run_logs SET owner = NULL WHERE run_id = %s AND owner = %s "
                    "RETURNING run_id", [run_id, owner])).fetchone()
                if row is not None:
                    claimed.append(str(run_id))
            return claimed
        finally:
            await conn.close()

    async def aclose(self) -> None:
        """Let go of the lock."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await conn.close()
