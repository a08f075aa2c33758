"""The reader-curve study packed for a lent GPU machine (issue 45, item 3): what travels fits the
transport, the base model is the float16 copy, the collections carry their checksums, and the
command it prints is the study's own script on the GPU from that pack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.study.records import write_measurement

REPO = Path(__file__).resolve().parents[2]
TRANSPORT = 64 * 2**20


def test_the_pack_fits_the_transport_and_names_its_command(tmp_path, mirror):
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "device_pack_reader.py"), "--out", str(tmp_path / "p"),
                          "--mirror", str(mirror)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr
    pack = json.loads((tmp_path / "p" / "pack.json").read_text())
    assert pack["model"]["dtype"] == "float16" and pack["collections"] == ["adi", "cranfield", "cisi", "medline", "npl"]
    assert all(sha256_file(tmp_path / "p" / f) == h for f, h in pack["files"].items())
    assert pack["bytes"] < 0.85 * TRANSPORT  # room left for the tracked tree that travels with it
    sums = (tmp_path / "p" / "datasets" / "SHA256SUMS").read_text().splitlines()
    assert sums and {line.split()[-1].split("/")[0] for line in sums} == set(pack["collections"])
    for line in sums:  # each listed file is there, as the mirror's checksum says
        digest, rel = line.split()
        assert sha256_file(tmp_path / "p" / "datasets" / rel) == digest
    cmd = pack["command"]
    assert "train_reader_curve.py --device cuda --base-folder" in cmd and '"$OUT"' in cmd and "--train-only" in cmd
    assert cmd in out.stdout


def test_merging_takes_the_gpu_runs_and_keeps_the_local_ones(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    from device_pack_reader import merge

    def ledger(folder, folds):
        folder.mkdir()
        path = folder / "rerankers_curve_progress.json"
        write_measurement(path, {"folds": folds, "provenance": {"git": {"commit": folder.name}}})
        return path

    cpu_old = {"device": "cpu", "training": {"pairs_seen": 8000}}
    cpu_new = {"device": "cpu", "training": {"pairs_seen": 24000}}
    gpu = {"device": "cuda", "training": {"pairs_seen": 67000}}
    returned = ledger(tmp_path / "device", {"cranfield/bce": cpu_old, "cranfield/bce/cuda": gpu})
    local = ledger(tmp_path / "here", {"cranfield/bce": cpu_new})
    assert merge(returned, local) == ["cranfield/bce/cuda"]
    merged = json.loads(local.read_text())
    assert merged["folds"] == {"cranfield/bce": cpu_new, "cranfield/bce/cuda": gpu}
    assert merged["provenance"]["merged"]["git"] == {"commit": "device"}
    returned.write_text(returned.read_text().replace("67000", "99000"))  # edited on the way: refused
    with pytest.raises(GabaritoError):
        merge(returned, local)
