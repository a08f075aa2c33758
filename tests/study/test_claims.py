"""Every study declares, in its study.json, what each results file claims: the choices behind it
and what they were selected on, the comparison families its p-values were corrected over, and
what is exploratory (issue 41). The declaration is refused in one line when malformed, and it is
checked against the results: a declared family that is not the one the file's Holm ran over fails."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.study.claims import Family, check_family, groups, holm_family, is_exploratory, parse_claims
from gabarito.study.spec import StudySpec, all_studies

REPO = Path(__file__).resolve().parents[2]
STUDIES = all_studies()


def _results(study: str, name: str) -> dict:
    return json.loads((STUDIES[study].dir / name).read_text(encoding="utf-8"))


def _declared():
    """Every declared family of a results file that is there (a study declares its plan before
    its results exist)."""
    return [(name, results, fam) for name, spec in STUDIES.items() for results, fc in spec.claims.items()
            for fam in fc.families if (spec.dir / results).exists()]


def test_every_results_file_of_every_study_declares_its_claims():
    for name, spec in STUDIES.items():
        files = {spec.results, *(v["results"] for v in spec.variants)}
        assert files <= set(spec.claims), f"{name}: no claims for {sorted(files - set(spec.claims))}"


@pytest.mark.parametrize("study,results,family", _declared(), ids=lambda x: x if isinstance(x, str) else x.name)
def test_each_declared_family_is_the_one_the_results_holm_ran_over(study, results, family):
    assert check_family(_results(study, results), family) == []


def test_a_declared_family_of_another_size_fails_the_check():
    weak = STUDIES["standard_collections"].claims["rerankers_weak.json"]
    ran = weak.family("readings of one first stage")  # Holm over a stage's 12 readings, stored
    res = _results("standard_collections", "rerankers_weak.json")
    assert check_family(res, ran) == []
    smaller = Family(**{**ran.__dict__, "size": 11})
    assert any("12 comparisons, declared 11" in p for p in check_family(res, smaller))
    # the classic collections' tests: Holm ran per measure over 28 pairs; a family over both
    # measures' 56 (no per-measure split) is not what ran
    cls = STUDIES["standard_collections"].claims["results.json"].family("all pairs per measure")
    mixed = {"collections": {"adi": {"tests": [{k: v for k, v in row.items() if k != "measure"}
                                               for row in _results("standard_collections", "results.json")
                                               ["collections"]["adi"]["tests"]]}}}
    assert any("56 comparisons, declared 28" in p for p in check_family(mixed, cls))


def test_a_family_that_kept_only_some_rows_is_checked_against_its_whole_size():
    fam = STUDIES["standard_collections"].claims["rerankers.json"].family(
        "all pairs of a first stage and its readings, per measure")
    res = _results("standard_collections", "rerankers.json")
    assert (fam.size, fam.stored) == (15, 5) and check_family(res, fam) == []
    as_if_five = Family(**{**fam.__dict__, "size": 5, "stored": None})
    assert any("not Holm over the declared family" in p for p in check_family(res, as_if_five))


def test_the_check_compares_the_stored_holm_p_with_holm_over_the_declared_members():
    rows = {"t": [{"a": f"x{i}", "b": "base", "p_randomization": p, "p_holm": min(1.0, 3 * p)}
                  for i, p in enumerate((0.01, 0.02), 1)]
            + [{"a": "y", "b": "base", "p_randomization": 0.5, "p_holm": 1.0}]}
    three = Family(name="three", at=("t",), size=3, correction="holm")
    assert len(groups(rows, three)) == 1
    problems = check_family(rows, three)  # Holm's step-down gives .04 to the second, not .06
    assert len(problems) == 1 and "x2|base" in problems[0]
    fixed = {"t": [{**r, "p_holm": h} for r, h in zip(rows["t"], (0.03, 0.04, 0.5))]}
    assert check_family(fixed, three) == []
    assert holm_family(fixed, three) == {(): {"x1|base": pytest.approx(0.03), "x2|base": pytest.approx(0.04),
                                              "y|base": 0.5}}


def test_exploratory_parts_are_found_by_path():
    weak = STUDIES["standard_collections"].claims["rerankers_weak.json"]
    assert not weak.all_exploratory and not is_exploratory(weak)
    assert is_exploratory(weak, ["folds", "adi/weak", "first_stages", "bm25"])
    assert not is_exploratory(weak, ["primary", "weak"])
    assert is_exploratory(STUDIES["standard_collections"].claims["rerankers_weak_ablation.json"])


GOOD_FAMILY = {"name": "f", "at": ["t"], "size": 2, "correction": "holm"}
NONE_SELECTED = [{"what": "nothing", "on": "none", "note": "fixed in advance"}]
BAD = {
    "unknown field": ({"r.json": {"selection": NONE_SELECTED, "families": [GOOD_FAMILY], "claim": 1}},
                      "unknown field 'claim'"),
    "family of one called Holm": ({"r.json": {"selection": NONE_SELECTED,
                                              "families": [{**GOOD_FAMILY, "size": 1}]}},
                                  "family of one called Holm"),
    "empty family": ({"r.json": {"selection": NONE_SELECTED, "families": [{**GOOD_FAMILY, "size": 0}]}},
                     "empty family"),
    "empty members": ({"r.json": {"selection": NONE_SELECTED,
                                  "families": [{"name": "f", "at": ["t"], "members": [], "correction": "holm"}]}},
                      "empty family"),
    "selected on the test": ({"r.json": {"selection": [{"what": "N", "on": "test", "note": "best N on the test",
                                                        "page": "N escolhido no teste"}]}},
                             "selected on its test: declare it exploratory"),
    "unknown selection": ({"r.json": {"selection": [{"what": "N", "on": "dev", "note": "n"}]}}, "'selection' must be"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_claims_block_is_refused_in_one_line_naming_the_study_json(tmp_path, case):
    claims, message = BAD[case]
    path = tmp_path / "study.json"
    path.write_text(json.dumps({"name": "s", "title": "S", "script": "r.py", "gold": [{"manifest": "g"}],
                                "claims": claims}), encoding="utf-8")
    with pytest.raises(GabaritoError, match=message) as err:
        StudySpec.load(path)
    assert str(path) in str(err.value)


def test_a_choice_on_the_test_of_an_exploratory_file_is_allowed_and_must_say_it_for_the_page(tmp_path):
    path = tmp_path / "study.json"
    ok = {"r.json": {"selection": [{"what": "N", "on": "test", "note": "n", "page": "N escolhido no teste"}],
                     "exploratory": True}}
    assert parse_claims(ok, path)["r.json"].all_exploratory
    silent = {"r.json": {"selection": [{"what": "N", "on": "test", "note": "n"}], "exploratory": True}}
    with pytest.raises(GabaritoError, match="'page' must say it in Portuguese"):
        parse_claims(silent, path)


@pytest.fixture()
def checkout(tmp_path):
    """A checkout with the library and one study whose study.json a test edits."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "gabarito", root / "gabarito", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    study = root / "case-studies" / "toy"
    study.mkdir(parents=True)
    return root, study


@pytest.mark.parametrize("case", ["family of one called Holm", "selected on the test", "unknown field"])
def test_gabarito_studies_refuses_bad_claims_in_one_line_and_exit_2(checkout, case):
    root, study = checkout
    claims, message = BAD[case]
    (study / "study.json").write_text(json.dumps({"name": "toy", "title": "Toy", "script": "run.py",
                                                  "gold": [{"manifest": "gold.lock.json"}], "claims": claims}),
                                      encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "gabarito.cli", "studies"], cwd=root, capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": str(root)})
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "study.json" in lines[0] and message.split(":")[0] in lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""
