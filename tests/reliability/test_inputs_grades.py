"""Issue 39, F3: graded relevance (``"relevance": {document id: grade}`` beside ``relevantIds``)
checked at the door, driven through ``gabarito evaluate``.

Before, every one of these was taken: an unknown id graded 2 was written into ``qrels.trec``
(nDCG@10 .842 instead of .845, R@100 .993 instead of 1.000, exit 0); a grade map naming another
document than ``relevantIds`` made MRR count one and nDCG the other; -1 dropped the question
from nDCG, AP and R; 1.5 became 1; NaN was a 31-line traceback. The rule now
(:mod:`gabarito.inputs.relevance`): known ids only, whole grades 0 to 3, one per document, and
the documents graded 1 or more are exactly ``relevantIds``.
"""

from __future__ import annotations

import json

import pytest

from tests.reliability.test_reliability_cli import (QUESTIONS, assert_one_line_error, evaluate,  # noqa: F401
                                                    project)


def _graded(project, relevance, *, relevant=("refunds",), raw: str | None = None) -> str:
    """An evaluation file whose first question carries ``relevance`` (``raw``: its JSON text as is)."""
    first = {**QUESTIONS[0], "relevantIds": list(relevant), "relevance": "@"}
    text = json.dumps([first, *QUESTIONS[1:]]).replace('"@"', raw if raw is not None else json.dumps(relevance))
    (project / "graded.json").write_text(text, encoding="utf-8")
    return "graded.json"


def _nothing_written(project) -> None:
    assert not list(project.rglob("run.json")) and not list(project.rglob("qrels.trec"))


@pytest.mark.parametrize(("relevance", "raw", "needle"), [
    ({"refunds": 1, "ghost": 2}, None, "graded id 'ghost' is not in the documents"),
    ({"shipping": 2}, None, "relevant id 'refunds' has no grade in 'relevance'"),
    ({"refunds": 0}, None, "relevant id 'refunds' is graded 0"),
    ({"refunds": 1, "shipping": 2}, None, "'shipping' is graded 2 in 'relevance' but is not in 'relevantIds'"),
    ({"refunds": -1}, None, "the grade of 'refunds' is -1; a grade is a whole number from 0 to 3"),
    ({"refunds": 4}, None, "the grade of 'refunds' is 4; a grade is a whole number from 0 to 3"),
    ({"refunds": 1.5}, None, "the grade of 'refunds' is 1.5"),
    (None, '{"refunds": NaN}', "the grade of 'refunds' is NaN"),
    (None, '{"refunds": Infinity}', "the grade of 'refunds' is Infinity"),
    ({"refunds": True}, None, "the grade of 'refunds' is true"),
    ({"refunds": "2"}, None, "the grade of 'refunds' is the string '2'"),
    (None, '{"refunds": 2, "refunds": 0}', "'relevance' grades 'refunds' twice"),
    ([["refunds", 2]], None, "'relevance' must be an object {document id: grade}, not a JSON list"),
    (None, '{"refunds": 1' + "0" * 5000 + "}", "a JSON number has more digits than can be read"),
], ids=["unknown-id", "other-document", "relevant-graded-0", "graded-not-listed", "minus-one", "above-range",
        "fraction", "nan", "inf", "bool", "string", "repeated-key", "not-an-object", "huge-number"])
def test_cli_a_grade_that_breaks_the_rule_is_one_line_and_nothing_is_written(project, relevance, raw, needle):
    proc = evaluate(project, evaluation=_graded(project, relevance, raw=raw))
    line = assert_one_line_error(proc, "graded.json", needle)
    if "digits" not in needle:  # the parser stops before any record
        assert "record 1 (q1)" in line
    _nothing_written(project)


def test_cli_grades_that_keep_the_rule_reach_qrels_trec_as_given(project):
    """The control: 0 to 3, 2.0 read as 2, graded 0 for a known document outside relevantIds."""
    proc = evaluate(project, "--measures", "nDCG@10", evaluation=_graded(
        project, None, relevant=("refunds", "shipping"), raw='{"refunds": 3, "shipping": 2.0, "account": 0}'))
    assert proc.returncode == 0, proc.stderr[-1500:]
    qrels = next(project.rglob("qrels.trec")).read_text(encoding="utf-8").splitlines()
    assert qrels[:3] == ["q1 0 refunds 3", "q1 0 shipping 2", "q1 0 account 0"]


def test_cli_a_fractional_beir_score_is_refused_not_rounded(project):
    """A BEIR qrels score 1.5 was kept as relevant and read as grade 1 by the graded measures."""
    beir = project / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "refund within thirty days"}\n', encoding="utf-8")
    (beir / "qrels" / "test.tsv").write_text("q1\trefunds\t1.5\n", encoding="utf-8")
    assert_one_line_error(evaluate(project, evaluation="beir"), "test.tsv", "line 1 (q1 refunds)",
                          "score '1.5' is not a whole number")
    _nothing_written(project)
