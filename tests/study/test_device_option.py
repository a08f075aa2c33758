"""``--device`` on every study: offered by the runner (``gabarito study <name> --help``), not asked
means the CPU as before, a device it cannot read is one line and exit 2 before any work, and a
study that defines its own ``--device`` keeps it. Nothing here loads a model or runs a study."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gabarito import cli
from gabarito.retrieval.device import ENV
from gabarito.study.runner import run_study, study_main

sys.path.insert(0, str(Path(__file__).parent))
from toy import toy_study  # noqa: E402

#: the studies whose scripts load encoders or second readers
MODEL_STUDIES = ("benchmark_rrf", "standard_collections", "fusion", "helpcenter", "reranking")


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)


def _run(seen):
    def run(ctx):
        seen.append((ctx.device, ctx.args.device))
        return {"provenance": ctx.provenance(corpus={}, model=None, engine={"name": "none"}, parameters={})}
    return run


@pytest.mark.parametrize("name", MODEL_STUDIES)
def test_gabarito_study_help_offers_device(name, capsys):
    assert cli.main(["study", name, "--help"]) == 0  # argparse's --help, through the study's own script
    out = capsys.readouterr().out
    assert f"gabarito study {name}" in out and "--device DEVICE" in out and "auto" in out


@pytest.mark.parametrize("module", ["studies.peers.bench_encoders", "studies.peers.bench_vectors",
                                    "studies.standard_collections.bench_scaling"])
def test_the_benchmarks_that_encode_offer_device(module, capsys):
    import importlib

    with pytest.raises(SystemExit) as done:
        importlib.import_module(module).main(["--help"])
    assert done.value.code == 0 and "--device DEVICE" in capsys.readouterr().out


def test_a_bad_device_is_one_line_and_exit_2_before_any_work(tmp_path, capsys):
    spec, seen = toy_study(tmp_path), []
    (spec.dir / "run.py").write_text("")
    with pytest.raises(SystemExit) as done:
        study_main(spec.dir / "run.py", _run(seen), argv=["--device", "tpu"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1
    assert err.startswith("error: unknown device 'tpu'") and "auto, cpu, cuda" in err
    assert not seen and not (spec.dir / "results.json").exists()


def test_gabarito_study_with_a_bad_device_exits_2_naming_it(capsys):
    assert cli.main(["study", "benchmark_rrf", "--device", "gpu"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first == "error: unknown device 'gpu' (expected auto, cpu, cuda, cuda:<n> or mps)"


def test_not_asked_is_none_and_asked_is_passed_on(tmp_path):
    spec, seen = toy_study(tmp_path), []
    run_study(spec, _run(seen), [])
    run_study(spec, _run(seen), ["--device", "cpu"])
    assert seen == [(None, None), ("cpu", "cpu")]


def test_a_study_that_defines_its_own_device_keeps_it(tmp_path):
    spec, seen = toy_study(tmp_path), []
    own = lambda ap: ap.add_argument("--device", default="own-default", help="the study's own")  # noqa: E731
    run_study(spec, _run(seen), [], add_arguments=own)
    assert seen == [("own-default", "own-default")]


def test_the_collections_vectors_load_their_encoders_on_the_device(monkeypatch, tmp_path):
    from gabarito.retrieval.models import collection_vectors

    asked = []
    monkeypatch.setattr(collection_vectors, "load_encoder", lambda model_id, **kw: asked.append(kw) or object())
    collection_vectors.Vectors(tmp_path).encoder("minilm")
    collection_vectors.Vectors(tmp_path, device="auto").encoder("minilm")
    assert asked == [{"device": None}, {"device": "auto"}]


def test_the_help_center_study_records_the_devices_its_models_ran_on():
    from studies.helpcenter.run_evaluations import devices

    rec = lambda device: {"model": {"device": device} if device else None}  # noqa: E731
    groups = {"model": [{"tuning": rec("cpu"), "heldout": rec("cuda")}], "lexical": [{"tuning": rec(None),
                                                                                       "heldout": rec(None)}]}
    assert devices(groups) == ["cpu", "cuda"]
