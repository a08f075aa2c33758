"""What installing gabarito costs: size on disk, time and package count of a fresh environment;
written to ``case-studies/peers/install.json``.

Each install is a fresh virtual environment in a temporary folder, with no pip cache, done the way
the README and the site say: CPU torch first (``torch==2.13.0``, so nothing pulls a CUDA build),
then the project's wheel (built once, as the site builds the one it offers). ``core`` is the wheel
alone (what ``gabarito evaluate | compare | pool | judge`` need); ``full`` is the wheel with the
extras ``--extras`` (default ``site,train``: the report's build and training), in its own fresh
environment. For each: the environment's size in MB (every file under it, 10^6 bytes), torch's own
folder, the seconds of each step and of the whole, and the number of installed distributions. The
pip version and the load average before and after are kept beside them (the machine is shared:
times are what this machine took, not a promise).

    python scripts/bench_install.py                    # core and full -> case-studies/peers/install.json
    python scripts/bench_install.py --installs core    # the core alone
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.measure.timing import load_average
from gabarito.study.runner import say, variant_main

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "case-studies" / "peers"
TORCH = "torch==2.13.0"


def add_arguments(ap) -> None:
    ap.add_argument("--installs", default="core,full", help="which installs to measure (core, full)")
    ap.add_argument("--extras", default="site,train", help="the extras of the full install")
    ap.add_argument("--scratch", type=Path, default=None, help="folder for the environments (default: temp)")


def _env(home: Path) -> dict:
    """The environment of every child: no virtualenv or gabarito settings inherited, no pip cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "GABARITO_"))}
    env.update(HOME=str(home), PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _timed(cmd: list[str], env: dict, cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise GabaritoError(f"{' '.join(cmd[:6])} … exited with {proc.returncode}: {tail[:400]}")
    return round(time.perf_counter() - t0, 1)


def size_mb(folder: Path) -> float:
    """Bytes of every regular file under ``folder`` (links not followed), in MB (10^6 bytes)."""
    total = sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return round(total / 1e6, 1)


def build_wheel(dist: Path) -> tuple[Path, float]:
    """The wheel the site offers (:func:`gabarito.publish.packages.build_packages`: built from a
    copy of the tracked files, so nothing is left in the checkout) and the seconds it took."""
    from gabarito.publish.packages import build_packages

    t0 = time.perf_counter()
    wheel = build_packages(ROOT, dist)["wheel"]
    return wheel, round(time.perf_counter() - t0, 1)


def measure_install(name: str, target: str, scratch: Path, env: dict) -> dict:
    """A fresh environment ``scratch/name``: CPU torch, then ``target`` (the wheel, with extras)."""
    venv = scratch / name
    load_before = load_average()
    steps = {"venv_s": _timed([sys.executable, "-m", "venv", str(venv)], env, scratch)}
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--no-cache-dir"]
    steps["torch_s"] = _timed(pip + [TORCH], env, scratch)
    steps["gabarito_s"] = _timed(pip + [target], env, scratch)
    listed = subprocess.run([python, "-m", "pip", "list", "--format=json"], env=env, cwd=scratch,
                            capture_output=True, text=True, check=True).stdout
    pip_version = subprocess.run([python, "-m", "pip", "--version"], env=env, cwd=scratch, capture_output=True,
                                 text=True, check=True).stdout.split()[1]
    site = next((venv / "lib").glob("python*/site-packages"))
    result = {"target": target.rsplit("/", 1)[-1], "size_mb": size_mb(venv), "torch_mb": size_mb(site / "torch"),
              "packages": len(json.loads(listed)), "seconds": round(sum(steps.values()), 1), "steps_s": steps,
              "pip": pip_version, "load_average_before": load_before, "load_average_after": load_average()}
    say(f"{name}: {result['size_mb']} MB, {result['packages']} packages, {result['seconds']} s")
    return result


def run(ctx) -> dict:
    args = ctx.args
    installs = [s.strip() for s in args.installs.split(",") if s.strip()]
    unknown = set(installs) - {"core", "full"}
    if unknown:
        raise GabaritoError(f"--installs: unknown {sorted(unknown)}; use core, full")
    with tempfile.TemporaryDirectory(prefix="gabarito-install-", dir=args.scratch) as tmp:
        scratch = Path(tmp)
        env = _env(scratch)
        wheel, wheel_s = build_wheel(scratch / "dist")
        targets = {"core": str(wheel), "full": f"{wheel}[{args.extras}]"}
        measured = {name: measure_install(name, targets[name], scratch, env) for name in installs}
    prov = ctx.provenance(corpus={"installs": installs}, model=None,
                          engine={"python": {"name": "Python", "version": sys.version.split()[0]}},
                          parameters={"torch": TORCH, "extras": args.extras, "pip_cache": "none",
                                      "order": "fresh venv, CPU torch first, then the wheel",
                                      "index": "this machine's pip configuration (local mirror, then PyPI)"})
    return {"provenance": prov, "wheel_s": wheel_s, "installs": measured}


def main(argv=None) -> "NoReturn":  # noqa: F821
    variant_main(PEERS, run, add_arguments, name="peers/install",
                 title="What installing gabarito costs: the core and the full install, fresh environments",
                 results="install.json", doc=__doc__, argv=argv)


if __name__ == "__main__":
    main()
