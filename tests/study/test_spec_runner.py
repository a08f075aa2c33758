import json
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.study.runner import run_study
from gabarito.study.spec import StudySpec, find_study, in_order

sys.path.insert(0, str(Path(__file__).parent))
from toy import toy_study  # noqa: E402


def _study(tmp_path, gold_text='{"pairs": []}'):
    return toy_study(tmp_path, gold_text)


def test_runner_checks_gold_first_and_writes_results_with_provenance(tmp_path):
    spec = _study(tmp_path)
    seen = {}

    def run(ctx):
        seen["gold"] = ctx.gold_sha256
        with ctx.phase("work"):
            pass
        return {"provenance": ctx.provenance(corpus={"name": "toy"}, model=None, engine={"name": "none"},
                                             parameters={"k": 3}), "value": 1}

    path = run_study(spec, run, [])
    out = json.loads(path.read_text())
    assert out["study"] == "toy" and out["title"] == "A toy study" and out["value"] == 1
    assert out["provenance"]["gold_sha256"] == seen["gold"] and list(seen["gold"]) == ["questions.json"]
    assert out["provenance"]["parameters"] == {"k": 3, "seed": 11, "bootstrap_resamples": 200}
    assert "work" in out["phases_s"] and spec.staleness() is None


def test_runner_refuses_edited_gold_before_running(tmp_path):
    spec = _study(tmp_path)
    (spec.dir / "questions.json").write_text('{"pairs": [1]}')
    called = []
    with pytest.raises(GabaritoError, match="changed after it was frozen"):
        run_study(spec, lambda ctx: called.append(1), [])
    assert not called and not (spec.dir / "results.json").exists()


def test_spec_rejects_unknown_fields_and_unknown_studies(tmp_path):
    spec = _study(tmp_path)
    raw = json.loads((spec.dir / "study.json").read_text())
    (spec.dir / "study.json").write_text(json.dumps({**raw, "sed": 1}))
    with pytest.raises(GabaritoError, match="unknown field 'sed'"):
        StudySpec.load(spec.dir / "study.json")
    (spec.dir / "study.json").write_text(json.dumps(raw))
    with pytest.raises(GabaritoError, match="unknown study 'nope'; known: toy"):
        find_study("nope", tmp_path)


def test_gold_subset_and_missing_file(tmp_path):
    spec = _study(tmp_path)
    spec.gold = [{"manifest": "gold.lock.json", "files": ["questions.json"]}]
    assert list(spec.verify_gold()) == ["questions.json"]
    spec.gold = [{"manifest": "gold.lock.json", "files": ["other.json"]}]
    with pytest.raises(GabaritoError, match="not frozen"):
        spec.verify_gold()


def test_provenance_records_the_tree_as_it_was_when_the_run_started(tmp_path, monkeypatch):
    """A study's own tracked outputs (TREC runs written before the results) do not make the tree
    it ran on look dirty; a tree dirty at the start is recorded as dirty."""
    import subprocess

    from gabarito.study import records

    spec = _study(tmp_path)
    out_file = spec.dir / "runs.trec"
    out_file.write_text("old\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "toy"], check=True)
    monkeypatch.setattr(records, "ROOT", tmp_path)
    monkeypatch.setattr(records.git_state, "__defaults__", (tmp_path,))

    def run(ctx):
        out_file.write_text("new\n")  # a tracked output, changed by the run itself
        return {"provenance": ctx.provenance(corpus={}, model=None, engine={}, parameters={})}

    clean = json.loads(run_study(spec, run, []).read_text())["provenance"]["git"]
    assert clean["dirty"] is False and len(clean["commit"]) == 40
    dirty = json.loads(run_study(spec, run, []).read_text())["provenance"]["git"]  # runs.trec changed: dirty now
    assert dirty["dirty"] is True


def test_variant_main_shares_the_gold_and_writes_its_own_file(tmp_path):
    from gabarito.study.runner import variant_main

    spec = _study(tmp_path)

    def run(ctx):
        assert list(ctx.gold_sha256) == ["questions.json"] and ctx.args.extra == 5
        return {"provenance": ctx.provenance(corpus={}, model=None, engine={"name": "none"}, parameters={})}

    with pytest.raises(SystemExit) as done:
        variant_main(spec.dir, run, lambda ap: ap.add_argument("--extra", type=int, default=5),
                     name="toy/bench", title="A toy benchmark", results="bench.json", argv=[])
    assert done.value.code == 0 and not (spec.dir / "results.json").exists()
    out = json.loads((spec.dir / "bench.json").read_text())
    assert out["study"] == "toy/bench" and out["title"] == "A toy benchmark"


def test_variants_share_the_declaration_and_studies_wait_for_the_ones_they_read(tmp_path):
    import dataclasses

    spec = _study(tmp_path)
    raw = json.loads((spec.dir / "study.json").read_text())
    (spec.dir / "study.json").write_text(json.dumps({**raw, "variants": [{"script": "train.py",
                                                                            "results": "trained.json"}]}))
    spec = StudySpec.load(spec.dir / "study.json")
    variant = spec.variant(spec.variants[0])
    assert (variant.script, variant.results_path, variant.gold) == ("train.py", spec.dir / "trained.json", spec.gold)
    assert variant.name == f"{spec.name}/train" and variant.variants == []
    (spec.dir / "study.json").write_text(json.dumps({**raw, "variants": [{"script": "train.py"}]}))
    with pytest.raises(GabaritoError, match="'variants' must be a list"):
        StudySpec.load(spec.dir / "study.json")

    a, b, c = (dataclasses.replace(spec, name=n, after=after) for n, after in
               (("a", ["c"]), ("b", []), ("c", ["b"])))
    assert [s.name for s in in_order({"a": a, "b": b, "c": c})] == ["b", "c", "a"]
    with pytest.raises(GabaritoError, match="wait for each other: a -> c -> a"):
        in_order({"a": a, "c": dataclasses.replace(c, after=["a"])})
    with pytest.raises(GabaritoError, match="unknown study 'c'"):
        in_order({"a": a})
