"""No tracked file outside ``tests/`` names a machine's own folders (issue 43, item 4).

A run record, a prompt, a provenance field or a usage example that holds an absolute path in a
home, work or temporary folder (``/home/…``, ``/work/…``, ``/tmp/…``, ``/root/…``, ``/Users/…``,
``/mnt/…``, ``/var/folders/…``, ``/private/var/…``, ``C:\\Users\\…``) names the machine it was made
on: a reader's clone has no such folder. Paths are kept relative to the project, or generic
(``DIR``, ``"$(mktemp -d)"``, "a folder of its own, outside the repository"). A URL's path
(``https://host/home/…``) is not a machine's folder. Fast (the tracked files are read once, and
only lines holding a candidate are matched); not an integration test.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Cheap substrings: a file holding none of them needs no regular expression.
NEEDLES = (b"/home/", b"/work/", b"/tmp/", b"/root/", b"/users/", b"/mnt/", b"/var/folders/", b"/private/var/",
           b":\\", b":/users/")
#: An absolute POSIX path in one of those folders: the ``/`` must start the path (not follow a
#: word, a dot, ``~``, ``$`` or another ``/``, as in a URL or ``.venv/tmp/``), unless after ``file://``.
POSIX = re.compile(rb"(?:(?<![\w.~$/-])|(?<=file://))/(?:home|work|tmp|root|Users|mnt|var/folders|private/var)/"
                   rb"(?=[\w.{<$%-])")
#: A Windows user or temporary folder, also as JSON or a Python string writes it (``C:\\Users``).
WINDOWS = re.compile(rb"(?<![\w])[A-Za-z]:(?:\\{1,2}|/)(?:Users|Documents and Settings|Temp|Windows\\{1,2}Temp)"
                     rb"(?:\\|/|\b)", re.IGNORECASE)


def machine_paths(data: bytes) -> list[tuple[int, str]]:
    """``(line number, the line cut to 160 characters)`` for each line of ``data`` naming one."""
    lowered = data.lower()
    if not any(n in lowered for n in NEEDLES):
        return []
    found = []
    for lineno, line in enumerate(data.split(b"\n"), start=1):
        if POSIX.search(line) or WINDOWS.search(line):
            text = line.decode("utf-8", errors="replace").strip()
            found.append((lineno, text[:160]))
    return found


def tracked_files() -> list[Path]:
    """Every file git tracks outside ``tests/`` (present in the working tree)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    names = [n for n in out.decode("utf-8", errors="surrogateescape").split("\0") if n]
    return [ROOT / n for n in names if not n.startswith("tests/") and (ROOT / n).is_file()]


@pytest.mark.parametrize("text", [
    "/home/ana/gabarito/data", "see /work/main/data/helpcenter/docs.", '"/tmp/pytest-1/x"', "(/root/.cache/x)",
    "/Users/ana/Library", "--mnt=/mnt/data/x", "/var/folders/xy/T/tmp", "/private/var/folders/x",
    r"C:\Users\ana\docs", r'"C:\\Users\\ana"', "C:/Users/ana", "file:///home/ana/x", "PATH=/usr/bin:/home/ana/bin",
])
def test_a_machine_path_is_found(text):
    assert machine_paths(text.encode()) == [(1, text.strip())]


@pytest.mark.parametrize("text", [
    "https://example.org/home/page", "data/helpcenter/docs", ".venv/tmp/x", "~/work/x", "$HOME/tmp/x",
    "case-studies/work/x", "os.path.join('/tmp', name)", r'"r:\\n\\n"', "a:\\n", "{REPO}/case-studies",
    "--out \"$(mktemp -d)/x\"",
])
def test_a_relative_or_generic_path_is_not(text):
    assert machine_paths(text.encode()) == []


def test_no_tracked_file_names_a_machine_path():
    found = [f"{path.relative_to(ROOT).as_posix()}:{lineno}: {line}"
             for path in tracked_files() for lineno, line in machine_paths(path.read_bytes())]
    assert not found, "absolute paths of a machine's own folders in tracked files:\n" + "\n".join(found)
