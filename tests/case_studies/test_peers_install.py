"""studies.peers.findings_install on a hand-made install.json, and on the committed one."""

from __future__ import annotations

from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.publish.provenance import load_json
from studies.peers.findings_install import install_summary

PEERS = Path(__file__).resolve().parents[2] / "case-studies" / "peers"


def _install(size, torch, packages, seconds):
    return {"size_mb": size, "torch_mb": torch, "packages": packages, "seconds": seconds, "pip": "24.0"}


def test_the_summary_states_the_core_and_what_the_extras_add():
    data = {"provenance": {"parameters": {"extras": "site,train"}},
            "installs": {"core": _install(1600.0, 800.0, 60, 150.0), "full": _install(2000.5, 800.0, 100, 300.0)}}
    s = install_summary(data)
    assert (s["size_mb"], s["packages"], s["seconds"], s["torch_share"], s["extras"]) == (1600.0, 60, 150.0, 0.5,
                                                                                          "site,train")
    assert s["full"] == {"size_mb": 2000.5, "packages": 100, "seconds": 300.0, "extra_mb": 400.5, "extra_packages": 40}


def test_the_core_alone_and_no_core():
    assert install_summary({"installs": {"core": _install(10.0, 5.0, 3, 1.0)}})["full"] is None
    with pytest.raises(GabaritoError, match="no core install"):
        install_summary({"installs": {"full": _install(10.0, 5.0, 3, 1.0)}})


def test_the_committed_measurement_is_a_fresh_core_install():
    s = install_summary(load_json(PEERS / "install.json"))  # refused when edited after its run
    assert 0 < s["torch_mb"] < s["size_mb"] and s["packages"] > 10 and s["seconds"] > 0
    assert s["full"] is None or s["full"]["extra_mb"] > 0


def test_the_script_refuses_an_unknown_install_in_one_line_before_any_work(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(PEERS.parents[1] / "scripts" / "bench_install.py"), "--installs",
                           "core,bogus", "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "'bogus'" in done.stderr, done.stderr
    assert not (tmp_path / "out" / "install.json").exists() and not list(tmp_path.glob("gabarito-install-*"))
