"""Who owns an embedded ArcadeDB server, and what happens to it when its owner goes.

* A root dir is used by one gabarito process at a time: the owner holds an exclusive ``flock``
  on ``root_dir/server.lock`` for as long as its server runs (:class:`RootLock`). The kernel
  drops the lock when the owner dies, however it dies, so a held lock always means a live
  owner; a second run waits for it, saying so in one line.
* The owner is recorded beside the server's PID (``server.owner``: owner PID and start time,
  server PID, port), so that a server left behind (its owner killed with SIGKILL) is
  recognised and stopped by the next run, with a one-line notice (:func:`reap_orphan`).
* The server is started with ``PR_SET_PDEATHSIG`` (Linux): the kernel sends it SIGTERM when its
  owner dies (:func:`die_with_parent`). SIGTERM and SIGHUP sent to the owner become a
  ``SystemExit`` (:class:`SignalGuard`), so context managers and ``atexit`` stop the server.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from gabarito.errors import GabaritoError

LOCK_FILE = "server.lock"
OWNER_FILE = "server.owner"
Notice = Callable[[str], None]


def stderr_notice(text: str) -> None:
    print(f"gabarito: {text}", file=sys.stderr, flush=True)


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state, ppid, ...), None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        return text[text.rindex(")") + 2:].split()
    except (OSError, ValueError):
        return None


def start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot), None when it is gone."""
    fields = _stat(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def parent_pid(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields and len(fields) > 1 else None


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def alive(pid: int | None, ticks: int | None = None) -> bool:
    """True when ``pid`` runs and is not a zombie (and, with ``ticks``, started at that time)."""
    fields = _stat(pid) if pid and pid > 0 else None
    if not fields or len(fields) < 20 or fields[0] in ("Z", "X"):
        return False
    return ticks is None or int(fields[19]) == ticks


def is_server_of(pid: int, root_dir: Path) -> bool:
    line = cmdline(pid)
    return "ArcadeDBServer" in line and str(root_dir) in line and alive(pid)


def owner_record(server_pid: int, port: int | None) -> dict:
    me = os.getpid()
    return {"owner_pid": me, "owner_start": start_ticks(me), "server_pid": server_pid, "port": port,
            "owner_command": " ".join(sys.argv)[:200], "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def read_owner(root_dir: Path) -> dict | None:
    try:
        rec = json.loads((root_dir / OWNER_FILE).read_text(encoding="utf-8"))
        return rec if isinstance(rec, dict) else None
    except (OSError, ValueError):
        return None


class RootLock:
    """The exclusive ``flock`` on ``root_dir/server.lock`` held while this process's server runs."""

    def __init__(self, root_dir: Path):
        self.path = root_dir / LOCK_FILE
        self.fd: int | None = None

    def _try(self) -> bool:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise

    def acquire(self, timeout: float | None, notice: Notice) -> None:
        """Take the lock; when another live process holds it, say so once and wait (``timeout``
        seconds at most, ``None``: as long as it takes)."""
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        if self._try():
            return
        rec = read_owner(self.path.parent) or {}
        if rec.get("owner_pid") == os.getpid():  # waiting for ourselves would never end
            self.release()
            raise GabaritoError(f"an ArcadeDB server started by this process (pid {rec.get('server_pid')}) still "
                                f"uses this root dir; stop it first", path=self.path.parent)
        who = (f"process {rec.get('owner_pid')} (its ArcadeDB server is pid {rec.get('server_pid')})"
               if rec else "another process")
        limit = "" if timeout is None else f" up to {timeout:g}s"
        notice(f"ArcadeDB root dir {self.path.parent} is in use by {who}; waiting{limit} for it to finish "
               f"(or pass another --db-dir for a server of your own)")
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._try():
            if deadline is not None and time.monotonic() > deadline:
                self.release()
                raise GabaritoError(f"ArcadeDB root dir still in use by {who} after {timeout:g}s; "
                                    f"pass another --db-dir", path=self.path.parent)
            time.sleep(0.5)

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # closing drops the flock


def terminate(pid: int, timeout: float = 30.0) -> None:
    """SIGTERM ``pid`` (not our child), wait for it to go, SIGKILL after ``timeout``."""
    ticks = start_ticks(pid)
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not alive(pid, ticks):
                return
            time.sleep(0.2)


def reap_orphan(root_dir: Path, pid_file: Path, notice: Notice, busy_timeout: float | None) -> None:
    """With the root lock held: stop a server left running on ``root_dir`` by an owner that has
    died (one notice), and clear the files that name it.

    A server recorded without an owner (started by a gabarito that did not record one) counts
    as owned while its parent process, a Python, still runs: that run is waited for, never
    stopped."""
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pid = None
    if pid is not None and is_server_of(pid, root_dir):
        rec = read_owner(root_dir)
        if rec is None or rec.get("server_pid") != pid:
            ppid = parent_pid(pid)
            if ppid not in (None, 0, 1) and ppid != os.getpid() and "python" in cmdline(ppid):
                _wait_for_unrecorded_owner(pid, ppid, root_dir, notice, busy_timeout)
                rec = None
        owner = f"process {rec['owner_pid']}" if rec and rec.get("owner_pid") else "a process"
        if is_server_of(pid, root_dir):
            notice(f"stopping the ArcadeDB server (pid {pid}) that {owner}, which has exited, left running "
                   f"on {root_dir}")
            terminate(pid)
    pid_file.unlink(missing_ok=True)
    (root_dir / OWNER_FILE).unlink(missing_ok=True)


def _wait_for_unrecorded_owner(pid: int, ppid: int, root_dir: Path, notice: Notice,
                               timeout: float | None) -> None:
    notice(f"ArcadeDB root dir {root_dir} is in use by process {ppid} (its server is pid {pid}); waiting "
           f"for it to finish (or pass another --db-dir)")
    deadline = None if timeout is None else time.monotonic() + timeout
    while is_server_of(pid, root_dir) and alive(ppid):
        if deadline is not None and time.monotonic() > deadline:
            raise GabaritoError(f"ArcadeDB root dir still in use by process {ppid} (server pid {pid}); "
                                f"pass another --db-dir", path=root_dir)
        time.sleep(0.5)


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child receive SIGTERM when this thread's process dies
    (Linux ``PR_SET_PDEATHSIG``); None where that is unavailable or unsafe (not the main thread:
    the kernel ties the signal to the thread that forks)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the owner died between fork and prctl
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


class SignalGuard:
    """While servers run, SIGTERM and SIGHUP (left at their defaults by the program) raise
    ``SystemExit(128 + signal)`` in the main thread, so the servers are stopped on the way out."""

    _servers: set = set()
    _previous: dict[int, object] = {}

    @classmethod
    def _handler(cls, signum, _frame) -> None:
        raise SystemExit(128 + signum)

    @classmethod
    def add(cls, server: object) -> None:
        cls._servers.add(server)
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if sig not in cls._previous and signal.getsignal(sig) is signal.SIG_DFL:
                cls._previous[sig] = signal.signal(sig, cls._handler)

    @classmethod
    def remove(cls, server: object) -> None:
        cls._servers.discard(server)
        if cls._servers or threading.current_thread() is not threading.main_thread():
            return
        for sig, previous in list(cls._previous.items()):
            if signal.getsignal(sig) == cls._handler:
                signal.signal(sig, previous)
            del cls._previous[sig]
