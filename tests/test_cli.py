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
