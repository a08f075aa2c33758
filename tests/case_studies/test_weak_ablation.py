"""case-studies/standard_collections/train_weak_ablation.py: the configurations it knows, and a bad
one refused in one line before anything is loaded or written."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gabarito.errors import GabaritoError
from studies.standard_collections import train_weak_ablation as A

from copies import ROOT, studies_env


def test_configurations_cross_two_encoders_with_two_losses():
    assert set(A.CONFIGS) == {"minilm/bce", "minilm/grouped", "mpnet/bce", "mpnet/grouped"}
    assert set(A.DEFAULT_CONFIGS) < set(A.CONFIGS)  # the costliest one runs only when asked
    assert A.configs_of(" mpnet/bce, minilm/grouped ") == ["mpnet/bce", "minilm/grouped"]
    with pytest.raises(GabaritoError, match="mpnet/hinge"):
        A.configs_of("minilm/bce,mpnet/hinge")


def test_a_bad_configuration_is_one_line_and_writes_nothing(tmp_path):
    script = ROOT / "case-studies" / "standard_collections" / "train_weak_ablation.py"
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(script), "--configs", "mpnet/hinge", "--out", str(out)],
                          cwd=ROOT, env=studies_env(ROOT / "case-studies"), capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--configs" in lines[0] and "mpnet/hinge" in lines[0]
    assert not out.exists()
