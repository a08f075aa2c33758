"""The whole report from its archive alone (issue 43, item 1).

The project's own build is the site built from a fresh clone of ``HEAD`` (the checkout this test
runs in may hold other uncommitted work). Its downloads hold ``gabarito-<commit>.tar.gz``; the
test checks it with ``sha256sum -c``, unpacks it into a folder of its own, as a reader would, and
there runs ``gabarito studies`` (every study and every declared file current, with the data
mirror) and ``gabarito site``. Every file of that site must be byte for byte the project's own.

The pages name the same archive (the unpacked tree reads its ``ARCHIVE_COMMIT`` and finds the
archive beside it), and the package's wheel is built with the same ``SOURCE_DATE_EPOCH`` (the
commit's time, which the unpacked files carry). One difference is tolerated, and named in
:data:`SDIST_METADATA`: the times inside the package's source archive (sdist) and so its sha256;
its files must still be the same bytes.

Cost: the code runs from the unpacked tree (``PYTHONPATH``, and a folder where ``studies`` is that
tree's ``case-studies``) in this interpreter, so nothing is installed; the notebooks run once, in
the clone (its executed-notebook cache is seeded from this checkout's, used when its inputs are
the same), and the unpacked tree's build reuses the clone's executed copies (the cache is keyed by
the files' contents, not their paths). Each step's duration is printed (``pytest -s``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from gabarito.hashing import sha256_file
from gabarito.publish.packages import package_version

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


#: Both builds alike: smalldocs, and results computed on a dirty tree published as the project's own
#: site test publishes them (``real_site``: their pages say so); whether they are current is
#: ``gabarito studies``' question, asked of the unpacked tree.
SITE = ("--renderer", "smalldocs", "--allow-dirty")


def code_env(tree: Path, tmp: Path, mirror: Path) -> dict:
    """Run ``tree``'s own gabarito and studies with this interpreter, the data from the mirror."""
    shim = tmp / f"shim-{tree.name}"
    shim.mkdir()
    (shim / "studies").symlink_to(tree / "case-studies", target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GABARITO_ALLOW_DIRTY")}
    env.update(PYTHONPATH=os.pathsep.join([str(tree), str(shim)]), GABARITO_DATA_MIRROR=str(mirror),
               GABARITO_DATA_DIR=str(tmp / "data"), GABARITO_QUIET="1")
    return env


def gabarito(tree: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *args], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=1800)


def seed_cache(src: Path, dest: Path) -> None:
    """The executed notebooks of ``src``'s last build, for ``dest``'s build (used only where current)."""
    cache = src / ".cache" / "site"
    if (cache / "cache.json").is_file():
        (dest / ".cache" / "site").mkdir(parents=True, exist_ok=True)
        shutil.copy(cache / "cache.json", dest / ".cache" / "site" / "cache.json")
        if (cache / "executed").is_dir():
            shutil.copytree(cache / "executed", dest / ".cache" / "site" / "executed")


#: What two builds of one commit legitimately write differently: the package's source archive (sdist),
#: which setuptools writes with the build's clock in its gzip header and each file's modification
#: time in its entries, and ``SHA256SUMS``, which lists its sha256. Their contents must still agree.
SDIST_METADATA = (f"downloads/pacote/gabarito-{package_version(REPO)}.tar.gz", "downloads/pacote/SHA256SUMS",
                  "downloads/pacote/SHA256SUMS.html")


def sdist_sha(sums: Path) -> str:
    """The sdist's sha256 as a build's ``SHA256SUMS`` lists it."""
    return next(ln.split()[0] for ln in sums.read_text().splitlines() if ln.endswith(".tar.gz"))


def same_contents(a: Path, b: Path) -> bool:
    """The same files with the same bytes (an archive), or the same lines but the sdist's (the sums,
    and their readable page once each build's sdist sha256 is blanked)."""
    if a.name == "SHA256SUMS.html":
        blank = [p.read_text().replace(sdist_sha(p.with_name("SHA256SUMS")), "<sdist>") for p in (a, b)]
        return "<sdist>" in blank[0] and blank[0] == blank[1]
    if a.name == "SHA256SUMS":
        keep = [ln for ln in a.read_text().splitlines() if not ln.endswith(".tar.gz")]
        return bool(keep) and keep == [ln for ln in b.read_text().splitlines() if not ln.endswith(".tar.gz")]
    def read(path: Path) -> dict[str, bytes]:
        with tarfile.open(path, "r:gz") as tar:
            return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}

    return read(a) == read(b)


def files(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): sha256_file(p) for p in sorted(site.rglob("*")) if p.is_file()}


def test_the_report_rebuilt_from_its_archive_is_the_projects_own(tmp_path, mirror):
    times: dict[str, float] = {}
    t = time.perf_counter()

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip() == head
    seed_cache(REPO, clone)
    own = gabarito(clone, code_env(clone, tmp_path, mirror), "site", "--root", str(clone),
                   "--out", str(tmp_path / "own"), *SITE)
    assert own.returncode == 0, own.stderr[-3000:]
    times["the project's own build (clone of HEAD)"] = time.perf_counter() - t

    name = f"gabarito-{head[:12]}.tar.gz"
    fonte = tmp_path / "own" / "downloads" / "fonte"
    assert sorted(p.name for p in fonte.iterdir()) == [name, name + ".sha256"]
    reader = tmp_path / "reader"
    reader.mkdir()
    for p in fonte.iterdir():
        shutil.copy(p, reader / p.name)
    t = time.perf_counter()
    check = subprocess.run(["sha256sum", "-c", name + ".sha256"], cwd=reader, capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.strip() == f"{name}: OK", check.stdout + check.stderr
    subprocess.run(["tar", "-xzf", name], cwd=reader, check=True)
    tree = reader / name.removesuffix(".tar.gz")
    assert not (tree / ".git").exists() and (tree / "Makefile").is_file()
    times["check and unpack"] = time.perf_counter() - t

    env = code_env(tree, tmp_path, mirror)
    t = time.perf_counter()
    studies = gabarito(tree, env, "studies")
    assert studies.returncode == 0, studies.stderr[-3000:]
    lines = [ln for ln in studies.stdout.splitlines() if ln.strip()]
    assert lines, "gabarito studies listed no study"
    stale = [ln for ln in lines if not (ln.split(None, 1) + [""])[1].startswith("current")]
    assert stale == [], "not current in the unpacked archive:\n" + "\n".join(stale)
    times["gabarito studies"] = time.perf_counter() - t

    seed_cache(clone, tree)
    t = time.perf_counter()
    site = gabarito(tree, env, "site", "--out", str(tmp_path / "from-archive"), *SITE)
    assert site.returncode == 0, site.stderr[-3000:]
    assert f"site: source archive {name}\n" in site.stderr
    assert "ran in" not in site.stderr, "the unpacked tree ran a notebook again: its inputs differ from HEAD's"
    times["gabarito site in the unpacked tree"] = time.perf_counter() - t

    ours, theirs = files(tmp_path / "own"), files(tmp_path / "from-archive")
    differ = sorted(k for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k))
    assert sorted(set(differ) - set(SDIST_METADATA)) == [], f"{len(differ)} file(s) differ: {differ[:10]}"
    for rel in differ:  # the package's source archive: the same files, the same bytes; only times differ
        assert same_contents(tmp_path / "own" / rel, tmp_path / "from-archive" / rel), rel
    assert sum(1 for k in ours if k.endswith(".html")) > 1
    print("\n" + "\n".join(f"{k}: {v:.1f} s" for k, v in times.items()))
