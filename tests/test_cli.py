import pytest

from gabarito import cli
from gabarito.study.spec import all_studies


def test_committed_results_are_current(mirror):
    """`make report` reruns nothing on a clean checkout: every committed results file matches
    its frozen gold (and corpus) as the report command computes it."""
    studies = all_studies()
    assert set(studies) >= {"benchmark_rrf", "helpcenter", "reranking", "standard_collections"}
    for name, spec in studies.items():
        assert spec.staleness(str(mirror)) is None, name
        for variant in map(spec.variant, spec.variants):
            assert variant.staleness(str(mirror)) is None, variant.name
    assert studies["standard_collections"].variants  # the trained readers: `make report` rebuilds them


def test_unknown_subcommand_exits_nonzero(capsys):
    with pytest.raises(SystemExit) as err:
        cli.main(["nope"])
    assert err.value.code != 0


def test_fetch_with_bad_mirror_is_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GABARITO_DATA_DIR", str(tmp_path / "data"))
    code = cli.main(["--mirror", str(tmp_path / "empty"), "fetch", "social_acceptance"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("gabarito: error:") and "\n" not in err


def test_unknown_study_is_one_line_error(capsys):
    code = cli.main(["study", "no_such_study"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "unknown study 'no_such_study'" in err and "benchmark_rrf" in err and "\n" not in err


def test_report_runs_stale_studies_and_their_variants_in_order(tmp_path, monkeypatch, capsys):
    import dataclasses
    import json

    from gabarito.inputs.gold import freeze
    from gabarito.study.spec import StudySpec

    d = tmp_path / "s"
    d.mkdir()
    (d / "q.json").write_text("{}")
    freeze(d / "gold.lock.json", [d / "q.json"])
    (d / "study.json").write_text(json.dumps({"name": "zeta", "title": "t", "script": "run.py",
                                              "gold": [{"manifest": "gold.lock.json"}],
                                              "variants": [{"script": "train.py", "results": "trained.json"}]}))
    zeta = StudySpec.load(d / "study.json")
    alpha = dataclasses.replace(zeta, name="alpha", variants=[], after=["zeta"])
    ran = []
    monkeypatch.setattr(cli, "all_studies", lambda: {"alpha": alpha, "zeta": zeta})
    monkeypatch.setattr(cli, "run_study", lambda spec, extra: ran.append((spec.name, spec.script)))
    monkeypatch.setattr(cli, "_build_site", lambda args: None)
    assert cli.main(["report"]) == 0
    assert ran == [("zeta", "run.py"), ("zeta/train", "train.py"), ("alpha", "run.py")]


def test_site_and_report_leave_allow_dirty_to_the_environment_unless_told(monkeypatch):
    """Before: --allow-dirty defaulted to False, so GABARITO_ALLOW_DIRTY=1 (which the build's own
    error recommends) never reached the build."""
    from gabarito import cli

    seen = []
    monkeypatch.setattr(cli, "_build_site", lambda args: seen.append(args.allow_dirty))
    monkeypatch.setattr(cli, "all_studies", lambda: {})
    assert cli.main(["site"]) == 0 and cli.main(["site", "--allow-dirty"]) == 0
    assert cli.main(["report"]) == 0
    assert seen == [None, True, None]


def test_python_dash_m_gabarito_is_the_gabarito_command():
    import subprocess
    import sys

    ok = subprocess.run([sys.executable, "-m", "gabarito", "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "usage: gabarito" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "gabarito", "nosuch"], capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
