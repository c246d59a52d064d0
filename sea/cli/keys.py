"""``sea keys add|list|revoke``: the API keys of ``sea serve``, kept in the store's database.

A key is printed once, by ``add``, alone on standard output (``KEY=$(sea keys add ...)``);
the store keeps only its digest. ``list`` never prints a secret, only each key's first
characters. While the store holds no key, ``sea serve`` runs in dev mode (loopback only, a
token printed at start).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sea.cli._setup import add_db_argument, store_location
from sea.jsontypes import json_text

if TYPE_CHECKING:
    from sea.serve.keys import ApiKey, KeyStore

ROLE_HELP = "read, run, approve, author, memory, admin"


def register(subparsers: Any) -> None:
    """Add ``sea keys``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "keys", help="the API keys of sea serve: add (printed once), list, revoke")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="make a key and print it, once")
    add.add_argument("key_name", metavar="NAME",
                     help="who or what uses the key; approvals record it as the approver")
    add.add_argument("--role", action="append", default=[], required=True, metavar="ROLE",
                     help=f"what the key may do (repeatable): {ROLE_HELP} (admin: all)")
    add.add_argument("--tenant", default="default",
                     help="the tenant whose personas the key reaches (default: default)")
    add.add_argument("--personas", action="append", default=[], metavar="PATTERN",
                     help="persona ids the key reaches, e.g. 'acme-*' (repeatable; "
                     "default: every persona of the tenant)")
    add_db_argument(add)
    add.add_argument("--json", action="store_true",
                     help="print the key and its record as one JSON object")
    add.set_defaults(func=add_command)
    listing = actions.add_parser("list", help="the keys (never their secrets)")
    listing.add_argument("--active", action="store_true", help="leave out revoked keys")
    add_db_argument(listing)
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(func=list_command)
    revoke = actions.add_parser("revoke", help="stop accepting a key (it stays listed)")
    revoke.add_argument("key", metavar="ID|NAME", help="the key's id (key_...) or name")
    add_db_argument(revoke)
    revoke.set_defaults(func=revoke_command)


@contextmanager
def opened_keys(db: str | None) -> Iterator[KeyStore]:
    """The keys in the store of ``--db`` (see :func:`sea.cli._setup.store_location`)."""
    from sea.serve.db import ServerDB
    from sea.serve.keys import KeyStore

    opened = ServerDB(store_location(db))
    try:
        yield KeyStore(opened)
    finally:
        opened.close()


def add_command(args: argparse.Namespace) -> int:
    """Handler of ``sea keys add``."""
    with opened_keys(args.db) as keys:
        key, secret = keys.add(args.key_name, args.role, tenant=args.tenant,
                               personas=args.personas)
    if args.json:
        print(json_text({**key.to_json(), "secret": secret}))
    else:
        print(secret)
    print(f"key {key.id} {key.name!r}: {describe(key)}. It is shown once: keep it now "
          "(the store keeps only its digest).", file=sys.stderr)
    return 0


def list_command(args: argparse.Namespace) -> int:
    """Handler of ``sea keys list``."""
    with opened_keys(args.db) as keys:
        found = keys.list(include_revoked=not args.active)
    if not found and not args.json:
        print("no API key: sea serve runs in dev mode (loopback only, a token printed at "
              "start); make one with: sea keys add NAME --role ROLE", file=sys.stderr)
    for key in found:
        print(json_text(key.to_json()) if args.json else line_of(key))
    return 0


def revoke_command(args: argparse.Namespace) -> int:
    """Handler of ``sea keys revoke``."""
    with opened_keys(args.db) as keys:
        key, done = keys.revoke(args.key)
    when = key.revoked.isoformat(timespec="seconds") if key.revoked else "?"
    if done:
        print(f"key {key.id} {key.name!r} revoked (servers refuse it within seconds)")
    else:
        print(f"key {key.id} {key.name!r} was revoked already, at {when}")
    return 0


def describe(key: ApiKey) -> str:
    """A key's reach in words: roles, tenant, personas."""
    return (f"roles {', '.join(key.roles)}; tenant {key.tenant}; "
            f"personas {', '.join(key.personas)}")


def line_of(key: ApiKey) -> str:
    """One key on one line: id, name, its first characters, reach, dates, status."""
    used = key.last_used.isoformat(timespec="seconds") if key.last_used else "never"
    status = (f"revoked {key.revoked.isoformat(timespec='seconds')}" if key.revoked
              else "active")
    return (f"{key.id}  {key.name:<16} {key.shown}...  {','.join(key.roles):<22} "
            f"tenant={key.tenant} personas={','.join(key.personas)}  "
            f"created {key.created.isoformat(timespec='seconds')}  last used {used}  {status}")
