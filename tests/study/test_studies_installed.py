"""`gabarito studies` in an installed gabarito (the wheel: the package, no case-studies/ beside it)."""

import shutil
import subprocess
import sys

from gabarito.paths import PACKAGE


def test_studies_in_an_installed_layout_is_one_line_naming_where_the_studies_are(tmp_path):
    """Issue 42 item 10: the package alone (as the wheel installs it) printed nothing and exited 0."""
    site = tmp_path / "site-packages"
    shutil.copytree(PACKAGE, site / "gabarito", ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": str(site), "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path),
           "PATH": "/usr/bin:/bin"}
    for args in (["studies"], ["study", "helpcenter"]):
        done = subprocess.run([sys.executable, "-m", "gabarito.cli", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stdout == "", (done.returncode, done.stdout, done.stderr[-2000:])
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gabarito: error: no case studies here"), done.stderr
        assert "downloads/pacote/" in lines[0] and "clone the repository" in lines[0]


def test_studies_in_the_checkout_still_lists_them():
    done = subprocess.run([sys.executable, "-m", "gabarito.cli", "studies"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert any(line.split()[0] == "helpcenter" for line in done.stdout.splitlines())
