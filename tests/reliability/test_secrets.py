"""Issue 39: the ArcadeDB root password stays private, driven through the ``gabarito`` command.

F12: a user name or password inside ``--arcadedb-url`` (or ``$GABARITO_ARCADEDB_URL``) is refused
in one line that does not repeat it, before anything is contacted or written. F11 (integration,
a real embedded server): the JVM gets the password from the 0600 file (``rootPasswordPath``),
never as an option, and a crashing JVM writes its report into the private (0700) ``crash/``
folder, without the password.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.reliability.test_reliability_cli import PY, assert_one_line_error, project  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
SECRET = "S3cr3t-Pw-0f-th3-t3st"


def _evaluate(project: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "GABARITO_ARCADEDB_URL"}
    environ.update({"HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(project / "cache"),
                    "GABARITO_ARCADEDB_PASSWORD": SECRET, **(env or {})})
    return subprocess.run([PY, "-m", "gabarito.cli", "evaluate", "--documents", "docs", "--evaluation",
                           "evaluation.json", "--log", "runs/log.jsonl", "--method", "bm25", "--engine", "arcadedb",
                           *extra], cwd=project, env=environ, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("where", ["option", "environment"])
@pytest.mark.parametrize("userinfo", [f"root:{SECRET}", f"{SECRET}", f"root:{SECRET}:x"])
def test_credentials_inside_the_arcadedb_url_are_refused_and_never_echoed(project, where, userinfo):
    """Before: ``--arcadedb-url http://root:PW@host:port`` ran, and the password was stored in
    ``run.json`` (``engine.server``) and the log; an unreachable one printed it in the error line."""
    url = f"http://{userinfo}@127.0.0.1:9"
    if where == "option":
        done = _evaluate(project, "--arcadedb-url", url)
    else:
        done = _evaluate(project, env={"GABARITO_ARCADEDB_URL": url})
    line = assert_one_line_error(done, "http://***@127.0.0.1:9", "GABARITO_ARCADEDB_USER",
                                 "GABARITO_ARCADEDB_PASSWORD")
    assert SECRET not in line and SECRET not in done.stdout
    assert not (project / "runs").exists()


# -- F11: the password off the JVM's options; its crash report private -------------------------------

CRASH = """
import os, pathlib, signal, sys
from gabarito.retrieval.arcadedb.server import ArcadeServer
seen = pathlib.Path(sys.argv.pop())
real = ArcadeServer.start
def start(self):
    real(self)
    seen.write_bytes(pathlib.Path(f"/proc/{self.process.pid}/cmdline").read_bytes())
    os.kill(self.process.pid, signal.SIGSEGV)  # the JVM crashes: it writes its error report
    self.process.wait(120)
    return self
ArcadeServer.start = start
from gabarito.cli import entry
raise SystemExit(entry())
"""


@pytest.mark.integration
def test_the_jvm_gets_no_password_option_and_crashes_into_a_private_folder(project):
    """Before: ``-Darcadedb.server.rootPassword=…`` reached the JVM (through an @argfile), so a
    crash wrote ``hs_err_pid*.log`` into the root dir (mode 0644, the folder 0755) with the
    password twice, and it stayed there."""
    db = project / "db"
    db.mkdir()
    (db / "hs_err_pid1.log").write_text("jvm_args: -Darcadedb.server.rootPassword=an-old-one\n")  # an older run's
    os.chmod(db / "hs_err_pid1.log", 0o644)
    cmdline_file = project / "cmdline"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GABARITO_CACHE_DIR": str(project / "cache")}
    for name in ("GABARITO_ARCADEDB_URL", "GABARITO_ARCADEDB_PASSWORD", "GABARITO_ARCADEDB_TIMEOUT"):
        env.pop(name, None)
    done = subprocess.run([PY, "-c", CRASH, "evaluate", "--documents", "docs", "--evaluation", "evaluation.json",
                           "--log", "runs/log.jsonl", "--method", "bm25", "--engine", "arcadedb", "--db-dir", "db",
                           str(cmdline_file)], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr  # the server is gone: one line
    password = (db / "root-password").read_text(encoding="utf-8").strip()
    assert stat.S_IMODE((db / "root-password").stat().st_mode) == 0o600

    options = cmdline_file.read_bytes().decode().split("\0")
    assert not any(password in option for option in options)
    assert not any(option.startswith("-Darcadedb.server.rootPassword=") or option.startswith("@")
                   for option in options)
    assert f"-Darcadedb.server.rootPasswordPath={db.resolve() / 'root-password'}" in options
    assert f"-XX:ErrorFile={db.resolve() / 'crash' / 'hs_err_pid%p.log'}" in options
    assert "-XX:-CreateCoredumpOnCrash" in options

    crash = db / "crash"
    assert stat.S_IMODE(crash.stat().st_mode) == 0o700
    reports = [p for p in crash.glob("hs_err_pid*.log") if p.name != "hs_err_pid1.log"]
    assert len(reports) == 1, list(crash.iterdir())
    assert password not in reports[0].read_text(encoding="utf-8", errors="replace")
    # every report, the older run's too, is in the private folder, none left in the root dir
    assert sorted(p.relative_to(db) for p in db.rglob("hs_err*")) == sorted(
        [Path("crash/hs_err_pid1.log"), reports[0].relative_to(db)])
    assert not list(db.rglob("core*")) and not (project / "runs" / "log.jsonl").exists()
