"""Persona locks: one pulse at a time per persona, across processes.

A store hands out a :class:`PersonaLock` per persona (:meth:`MessageStore.persona_lock`).
The lock is not taken when it is made: the caller tries it (:meth:`PersonaLock.try_acquire`
never blocks, so a waiting caller can poll it from async code, give up after a timeout, or
be cancelled) and releases it when its pulse ends. A process that dies releases its locks
with it: the operating system closes its files, the PostgreSQL server ends its session.

- :class:`FilePersonaLock` (SQLite): ``flock`` on a small file per persona in a directory
  beside the store (``memory.sqlite.locks/``). ``flock`` belongs to an open file, so two
  processes, and two lock objects of one process, exclude each other. Lock files are
  never removed (removing a lock file races with a process about to lock it).
- :class:`PostgresPersonaLock`: a session advisory lock on its own connection, keyed by
  the store's schema and the persona in the two-key form, a key space apart from the
  one-key transaction locks the store's writes take (so a pulse's own writes never wait
  on its pulse lock). Connections are reused through a small idle pool.
- :class:`NullPersonaLock`: always free (a store that cannot be written, or a backend
  that has no cross-process lock).
"""

from __future__ import annotations

import hashlib
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from saimemory.errors import StoreUnavailableError

PG_LOCK_CLASS = 0x5EA1
"""The first key of every persona lock in PostgreSQL (the second is a hash of the
schema and persona)."""


class PersonaLock(ABC):
    """A lock on one persona, held by at most one holder across all processes."""

    local: bool = False
    """Its calls touch only this machine's file system and never wait on another process
    or a network (a caller with an event loop may make them on the loop itself)."""

    @abstractmethod
    def try_acquire(self) -> bool:
        """Take the lock if it is free, without waiting; True when it is now held.

        Raises:
            StoreUnavailableError: the lock's file or database cannot be reached.
        """

    @abstractmethod
    def release(self) -> None:
        """Release the lock if it is held, and free what it uses (idempotent)."""

    @property
    @abstractmethod
    def held(self) -> bool:
        """This object holds the lock."""


class NullPersonaLock(PersonaLock):
    """A lock that is always free: nothing to protect, or no way to protect it."""

    local = True

    def __init__(self) -> None:
        self._held = False

    def try_acquire(self) -> bool:
        """Always succeeds."""
        self._held = True
        return True

    def release(self) -> None:
        """Forget the hold."""
        self._held = False

    @property
    def held(self) -> bool:
        """Whether :meth:`try_acquire` was called since the last release."""
        return self._held


def lock_file_name(persona: str) -> str:
    """The lock file of a persona: a hash, so any persona id makes a safe file name."""
    return hashlib.sha256(persona.encode("utf-8")).hexdigest()[:40] + ".lock"


class FilePersonaLock(PersonaLock):
    """``flock`` on ``directory/<hash of persona>.lock`` (the directory is made on first use).

    Args:
        directory: Where the lock files live (beside the store's file).
        persona: The persona id.
    """

    local = True  # a non-blocking flock: it never waits

    def __init__(self, directory: Path, persona: str) -> None:
        self.path = directory / lock_file_name(persona)
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the file lock if no other open file holds it."""
        if self._fd is not None:
            return True
        try:
            import fcntl
        except ImportError:  # not a POSIX system: no lock across processes here
            self._fd = -1
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreUnavailableError(
                f"cannot open the persona lock file {self.path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        """Close the lock file, which releases the lock."""
        fd, self._fd = self._fd, None
        if fd is not None and fd >= 0:
            os.close(fd)

    @property
    def held(self) -> bool:
        """This object holds the file lock."""
        return self._fd is not None


LOCK_SESSION_KEEPALIVE = {"tcp_keepalives_idle": 10, "tcp_keepalives_interval": 5,
                          "tcp_keepalives_count": 3}
"""The server's TCP keepalive for a lock's session (seconds, probes). A process that dies
on the server's machine, or beside it, closes its connection at once; a machine that
vanishes (power, network) does not, and the server would keep its locks until its own
keepalive noticed, two hours by default. With these, about 25 seconds. (Ignored on a
Unix socket, where the peer cannot vanish that way.)"""


class PgLockConnections:
    """Connections for persona locks: opened on demand, kept idle for reuse (a few).

    Args:
        connect: Opens a new autocommit connection (psycopg).
        keep: How many idle connections to keep.
    """

    def __init__(self, connect: Callable[[], Any], keep: int = 4) -> None:
        self._connect = connect
        self._keep = keep
        self._idle: list[Any] = []
        self._mutex = threading.Lock()
        self._closed = False

    def take(self) -> Any:
        """An open connection (an idle one if there is one)."""
        with self._mutex:
            while self._idle:
                conn = self._idle.pop()
                if not (conn.closed or conn.broken):
                    return conn
        conn = self._connect()
        try:
            conn.execute("SELECT " + ", ".join(
                f"set_config('{name}', '{value}', false)"
                for name, value in LOCK_SESSION_KEEPALIVE.items()))
        except BaseException:
            conn.close()
            raise
        return conn

    def give_back(self, conn: Any) -> None:
        """Keep a connection that holds no lock for later, or close it."""
        with self._mutex:
            if not self._closed and len(self._idle) < self._keep and not conn.broken:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close every idle connection; later returns are closed at once."""
        with self._mutex:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class PostgresPersonaLock(PersonaLock):
    """A session advisory lock ``(PG_LOCK_CLASS, hashtext(schema:persona))``.

    Args:
        connections: Where its connection comes from and goes back to.
        schema: The store's schema (stores in two schemas lock apart).
        persona: The persona id.
    """

    def __init__(self, connections: PgLockConnections, schema: str, persona: str) -> None:
        self._connections = connections
        self._key = f"{schema}:{persona}"
        self._conn: Any = None

    def try_acquire(self) -> bool:
        """Try the advisory lock on a connection of its own."""
        import psycopg

        if self._conn is not None:
            return True
        try:
            conn = self._connections.take()
            row = conn.execute(
                "SELECT pg_try_advisory_lock(%s, hashtext(%s))", [PG_LOCK_CLASS, self._key]
            ).fetchone()
        except psycopg.Error as exc:
            raise StoreUnavailableError(f"cannot take the persona lock: {exc}") from None
        if row is not None and row[0]:
            self._conn = conn
            return True
        self._connections.give_back(conn)
        return False

    def release(self) -> None:
        """Unlock and hand the connection back (closing it if the unlock fails)."""
        import psycopg

        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))",
                         [PG_LOCK_CLASS, self._key])
        except psycopg.Error:
            conn.close()  # the server releases a closed session's locks
            return
        self._connections.give_back(conn)

    @property
    def held(self) -> bool:
        """This object holds the advisory lock."""
        return self._conn is not None
