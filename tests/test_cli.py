import pytest

from gabarito import cli


def test_committed_results_are_current(mirror):
    """`make report` reruns nothing on a clean checkout: every committed results file matches
    its frozen gold (and corpus) as the report command computes it."""
    studies = cli.studies()
    assert "benchmark_rrf" in studies and "helpcenter" in studies
    for name, meta in studies.items():
        assert cli.study_staleness(meta, str(mirror)) is None, name


def test_unknown_subcommand_exits_nonzero(capsys):
    with pytest.raises(SystemExit) as err:
        cli.main(["nope"])
    assert err.value.code != 0


def test_fetch_with_bad_mirror_is_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GABARITO_DATA_DIR", str(tmp_path / "data"))
    code = cli.main(["--mirror", str(tmp_path / "empty"), "fetch", "social_acceptance"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("gabarito: error:") and "\n" not in err
