"""A toy study for the runner's tests: one frozen gold file, seed 11, 200 resamples."""

from __future__ import annotations

import json
from pathlib import Path

from gabarito.inputs.gold import freeze
from gabarito.study.spec import StudySpec


def toy_study(tmp_path: Path, gold_text: str = '{"pairs": []}') -> StudySpec:
    d = tmp_path / "toy"
    d.mkdir()
    (d / "questions.json").write_text(gold_text)
    freeze(d / "gold.lock.json", [d / "questions.json"])
    (d / "study.json").write_text(json.dumps({
        "name": "toy", "title": "A toy study", "script": "run.py",
        "gold": [{"manifest": "gold.lock.json"}], "seed": 11, "resamples": 200}))
    return StudySpec.load(d / "study.json")
