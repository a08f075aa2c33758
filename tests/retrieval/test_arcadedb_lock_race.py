"""The ArcadeDB build lock when its holder releases it between a waiter's refused insert and the
waiter's look at who holds it (CI saw it: two runs on one server, the second failed in one line)."""

from __future__ import annotations

import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.arcadedb import locking


class _Server:
    """A stand-in client: the lock's record, refused inserts while it exists, and a holder that
    releases it right after refusing the first insert (the race)."""

    def __init__(self, release_after_refusal: bool = True, always_refuse: bool = False):
        self.row, self.release, self.always = {"owner": "other:1:x", "beat": 0}, release_after_refusal, always_refuse

    def command(self, sql: str, params: dict | None = None):
        if sql.startswith("INSERT"):
            if self.row is not None or self.always:
                if self.release:
                    self.row = None  # the holder lets go just after the refusal
                raise GabaritoError("HTTP 409 Found duplicate key in index")
            self.row = {"owner": params["o"], "beat": 0}

    def query(self, sql: str, params: dict | None = None):
        return [self.row] if self.row is not None else []


def test_a_lock_released_between_the_refusal_and_the_look_is_taken_on_the_next_try():
    server = _Server()
    assert locking._try_insert(server, "Chunk", "me:2:y") is True
    assert server.row["owner"] == "me:2:y"


def test_a_lock_still_held_is_waited_for_and_a_server_that_keeps_refusing_is_one_line():
    held = _Server(release_after_refusal=False)
    assert locking._try_insert(held, "Chunk", "me:2:y") is False
    broken = _Server(always_refuse=True)
    with pytest.raises(GabaritoError, match="cannot take the build lock 'Chunk'"):
        locking._try_insert(broken, "Chunk", "me:2:y")
