"""A lock kept in an ArcadeDB database, so that runs on one server never build, drop or rebuild
the same index at the same time -- whichever machine they run on.

The lock is a record of the type ``BuildLock`` under a ``UNIQUE`` index on ``name``: inserting
it succeeds for one process only (ArcadeDB refuses the duplicate key at commit). Its holder
updates the record's ``beat`` every few seconds; a waiter that sees the beat unchanged for
``stale_after`` seconds (by its own clock, so clocks need not agree), or whose holder is a
process of this machine that has exited, takes the lock over, after one line saying whose
lock it was. Released on exit from the ``with`` block, error or not.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from typing import Callable, Iterator

from gabarito.errors import GabaritoError
from gabarito.retrieval.arcadedb.client import ArcadeClient

LOCK_TYPE = "BuildLock"
_SCHEMA = (f"CREATE DOCUMENT TYPE {LOCK_TYPE} IF NOT EXISTS",
           f"CREATE PROPERTY {LOCK_TYPE}.name IF NOT EXISTS STRING",
           f"CREATE INDEX IF NOT EXISTS ON {LOCK_TYPE} (name) UNIQUE")


def _ensure_schema(client: ArcadeClient) -> None:
    for attempt in range(5):  # two processes creating the schema at once: one may be told to retry
        try:
            for sql in _SCHEMA:
                client.command(sql)
            return
        except GabaritoError:
            if attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))


def _holder(client: ArcadeClient, name: str) -> dict | None:
    rows = client.query(f"SELECT owner, beat FROM {LOCK_TYPE} WHERE name = :n", {"n": name})
    return rows[0] if rows else None


def _try_insert(client: ArcadeClient, name: str, owner: str, attempts: int = 3) -> bool:
    """True when this process now holds the lock, False when another holds it. A refused insert
    with no holder to be seen afterwards is the holder releasing it between the two: try again."""
    for _ in range(attempts):
        try:
            client.command(f"INSERT INTO {LOCK_TYPE} SET name = :n, owner = :o, beat = 0", {"n": name, "o": owner})
            return True
        except GabaritoError as exc:
            if _holder(client, name) is not None:  # the duplicate key: someone else holds it
                return False
            last = exc
    raise GabaritoError(f"cannot take the build lock {name!r} ({last})") from last


def _gone(owner: object) -> bool:
    """True when the lock's owner tag names a process of this machine that no longer runs."""
    from gabarito.retrieval.arcadedb.ownership import alive

    host, _, rest = str(owner).partition(":")
    pid = rest.partition(":")[0]
    return host == socket.gethostname() and pid.isdigit() and not alive(int(pid))


def _heartbeat(client: ArcadeClient, name: str, owner: str, every: float, stop: threading.Event) -> None:
    beat = 0
    beater = ArcadeClient(client.url, *client.session.auth, client.database, timeout=30)
    try:
        while not stop.wait(every):
            beat += 1
            try:
                beater.command(f"UPDATE {LOCK_TYPE} SET beat = :b WHERE name = :n AND owner = :o",
                               {"b": beat, "n": name, "o": owner})
            except GabaritoError:
                pass  # the server is gone: the build itself will fail and say so
    finally:
        beater.close()


@contextlib.contextmanager
def build_lock(client: ArcadeClient, name: str, *, echo: Callable[[str], None] = lambda _t: None,
               stale_after: float = 60.0, beat_every: float = 5.0, timeout: float | None = None) -> Iterator[str]:
    """Hold the lock ``name`` in the client's database while the block runs; yields the owner
    tag. Waits while another live process holds it (one line through ``echo``); ``timeout``
    bounds the wait (``None``: as long as the holder's beat goes on)."""
    _ensure_schema(client)
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: tuple[object, float] | None = None
    said = False
    while not _try_insert(client, name, owner):
        holder = _holder(client, name)
        if holder is None:
            continue
        now = time.monotonic()
        if seen is None or seen[0] != (holder.get("owner"), holder.get("beat")):
            seen = ((holder.get("owner"), holder.get("beat")), now)
        if not said and not _gone(holder.get("owner")):
            echo(f"ArcadeDB database {client.database}: {holder.get('owner')} is building {name}; waiting for it")
            said = True
        gone = _gone(holder.get("owner"))
        if gone or now - seen[1] > stale_after:
            why = "its process has exited" if gone else f"it has not moved for {stale_after:g}s"
            echo(f"ArcadeDB database {client.database}: the lock of {holder.get('owner')} on {name} is left over "
                 f"({why}); taking it over")
            client.command(f"DELETE FROM {LOCK_TYPE} WHERE name = :n AND owner = :o",
                           {"n": name, "o": holder.get("owner")})
            seen = None
            continue
        if deadline is not None and now > deadline:
            raise GabaritoError(f"ArcadeDB database {client.database}: {holder.get('owner')} still builds {name} "
                                f"after {timeout:g}s")
        time.sleep(0.5)
    stop = threading.Event()
    beater = threading.Thread(target=_heartbeat, args=(client, name, owner, beat_every, stop), daemon=True)
    beater.start()
    try:
        yield owner
    finally:
        stop.set()
        beater.join(10)
        try:
            client.command(f"DELETE FROM {LOCK_TYPE} WHERE name = :n AND owner = :o", {"n": name, "o": owner})
        except GabaritoError:
            pass  # the server is gone; the lock goes stale and the next run takes it over
