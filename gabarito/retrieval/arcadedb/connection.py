"""Reaching a server: an external one (URL and password from the arguments or the environment)
or one started here; :func:`connect` returns both ends as an :class:`ArcadeConnection`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from gabarito.errors import GabaritoError
from gabarito.retrieval.arcadedb.client import ArcadeClient, check_url
from gabarito.retrieval.arcadedb.server import ArcadeServer


class ArcadeConnection(NamedTuple):
    """``(client, server)``; ``server`` is None for an external server. Closing stops ours."""

    client: ArcadeClient
    server: ArcadeServer | None

    def close(self) -> None:
        self.client.close()
        if self.server is not None:
            self.server.stop()

    def __enter__(self) -> "ArcadeConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ensure_database(client: ArcadeClient) -> bool:
    """Create the client's database unless it exists; True when this call created it. Two
    processes creating the same database at once both succeed: the one that loses the race
    (HTTP 409 "already exists") finds it there and goes on."""
    if client.database_exists():
        return False
    try:
        client.create_database()
        return True
    except GabaritoError:
        if client.database_exists():
            return False
        raise


def connect(url: str | None = None, *, root_dir: str | Path | None = None, database: str,
            user: str | None = None, password: str | None = None, timeout: float = 120.0,
            heap: str = "2g", create: bool = True, **server_options) -> ArcadeConnection:
    """Connect to ``url`` (or ``$GABARITO_ARCADEDB_URL`` with ``_USER``/``_PASSWORD``), else start a
    server under ``root_dir`` (``server_options`` go to :class:`ArcadeServer`: ``busy_timeout``,
    ``notice``, ...). Creates ``database`` when missing unless ``create`` is False."""
    url = url or os.environ.get("GABARITO_ARCADEDB_URL") or None
    server = None
    if url:
        check_url(url)  # before any message could repeat a password inside it
        user = user or os.environ.get("GABARITO_ARCADEDB_USER") or "root"
        password = password if password is not None else os.environ.get("GABARITO_ARCADEDB_PASSWORD")
        if not password:
            raise GabaritoError(f"ArcadeDB at {url}: no password given; set GABARITO_ARCADEDB_PASSWORD")
        client = ArcadeClient(url, user, password, database, timeout)
    else:
        if root_dir is None:
            raise GabaritoError("no ArcadeDB URL given and no root dir to start a server in")
        server = ArcadeServer(root_dir, heap=heap, **server_options).start()
        client = ArcadeClient(server.url, server.user, server.password, database, timeout)
    try:
        client.ping()
        if create:
            ensure_database(client)
    except BaseException:
        client.close()
        if server is not None:
            server.stop()
        raise
    return ArcadeConnection(client, server)
