"""studies.helpcenter.judging_findings on hand-made results (a verdict that flips between answer
keys, one that holds, the run ahead changing sides, no known answer rejected, the kappa without
the zero pairs going either way), and the committed judging.json against the committed files
(gold, pool, judgments and run hashes; kappa; the comparison read again from its reports)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from gabarito.core.runs import Qrels
from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.measure.report import Report
from gabarito.publish import formatting as fmt
from gabarito.publish import labels
from gabarito.study.records import check_results_gold
from gabarito.study.integrity import MANIFEST, read_manifest
from studies.helpcenter import judging_findings as jf
from studies.helpcenter import run_judging as rj

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "case-studies" / "helpcenter"
E5 = "intfloat/multilingual-e5-small"


def _report(cells: dict, n: int = 20) -> dict:
    """A report block: ``cells`` maps a measure to ``(mean bm25, mean e5, Holm p)``; the test row is
    stored as bm25 - e5, so that reading it as e5 - bm25 needs the orientation."""
    tests = [{"measure": m, "a": "bm25", "b": "e5", "mean_a": b, "mean_b": e, "mean_diff": b - e,
              "ci_low": b - e - 0.05, "ci_high": b - e + 0.05, "p_randomization": p, "p_holm": p, "p_sign": p,
              "wins": 3, "losses": 5, "ties": n - 8, "dz": 0.1} for m, (b, e, p) in cells.items()]
    return Report(metrics={"bm25": {m: c[0] for m, c in cells.items()}, "e5": {m: c[1] for m, c in cells.items()}},
                  ci={r: {m: [c[i] - 0.1, c[i] + 0.1] for m, c in cells.items()} for i, r in enumerate(("bm25", "e5"))},
                  tests=tuple(tests), n=n, measures=tuple(cells)).to_dict()


def _cells(ndcg=(0.80, 0.82, 0.6), rr=(0.70, 0.72, 0.6)) -> dict:
    return {"hit@1": (0.6, 0.62, 0.7), "RR@10": rr, "R@5": (0.9, 0.91, 0.8), "nDCG@10": ndcg}


def _results(gold=None, graded=None, grade2=None, *, rejected=2, nonzero_kappa=0.7, adjudicated=3) -> dict:
    regimes = {"gold": gold or _cells(), "graded": graded or _cells(), "grade2": grade2 or _cells()}
    return {"inputs": {"pool": {"depth": 5}, "runs": {"bm25": {"model": None}, "e5": {"model": E5}}},
            "assessors": {"kind": "language_model", "family": "Claude", "names": ["A", "B"],
                          "n_adjudicated": adjudicated},
            "agreement": {"n_pairs": 100, "unweighted": {"kappa": 0.8, "ci95": [0.7, 0.9]},
                          "linear": {"kappa": 0.85, "ci95": [0.75, 0.92]},
                          "either_nonzero": {"n_pairs": 30, "unweighted": {"kappa": nonzero_kappa,
                                                                           "ci95": [0.5, 0.9]}}},
            "key_changes": {"n_questions": 24, "gained": ["q1", "q2", "q3"], "gained_without_gold_answer": ["q3"],
                            "known_answers": 20, "known_rejected": [{"question": "q9", "doc": "d"}] * rejected},
            "regimes": {g: {"n": 20 + i, "report": _report(c, 20 + i)} for i, (g, c) in enumerate(regimes.items())}}


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+(?=[A-ZÁÉÍÓÚÂÊÔÃÕÇ])", text) if s]


def test_comparison_is_e5_against_bm25_whatever_the_stored_order():
    c = jf.comparison(_results(), "gold", "nDCG@10")
    assert (c.a, c.b) == ("e5", "bm25") and c.diff == pytest.approx(0.02) and c.mean_a == 0.82
    rows = jf.comparison_rows(_results())
    assert len(rows) == len(jf.MEASURES) * len(jf.REGIMES)
    assert rows[0]["higher"] == "e5" and rows[0]["n"] == 20 and rows[0]["verdict"] == "same"


def test_the_verdict_word_flips_when_the_data_do():
    flipped = _results(graded=_cells(ndcg=(0.70, 0.85, 0.001)))
    ch = jf.changes(flipped)["nDCG@10"]
    assert ch["verdicts"] == {"gold": "same", "graded": "better", "grade2": "same"} and ch["changed"]
    text = jf.judging_text(flipped)
    assert "não muda de forma detectável com o gabarito original (+0,020, p = 0,600)" in text
    assert "melhora com as notas (+0,150, p = 0,001)" in text
    assert "o veredito muda de um julgamento para outro em 1 (nDCG@10)" in text
    assert "nenhuma diferença é significativa" not in text
    worse = jf.judging_text(_results(graded=_cells(ndcg=(0.90, 0.70, 0.0001))))
    assert "piora com as notas (\u22120,200, p < 0,001)" in worse


def test_one_verb_when_every_key_agrees():
    same = jf.judging_text(_results())
    assert "não muda de forma detectável com nenhum dos três julgamentos: +0,020 (p = 0,600) com o gabarito" in same
    assert "nenhuma diferença é significativa com nenhum dos três julgamentos" in same
    better = _cells(ndcg=(0.7, 0.8, 0.01))
    text = jf.judging_text(_results(better, better, better))
    assert "melhora com os três julgamentos:" in text
    assert "o veredito é o mesmo com os três julgamentos" in text


def test_the_run_ahead_changing_sides_is_said():
    text = jf.judging_text(_results(graded=_cells(rr=(0.75, 0.70, 0.5))))
    assert jf.changes(_results(graded=_cells(rr=(0.75, 0.70, 0.5))))["RR@10"]["higher_changed"]
    assert "no MRR@10, a busca de média mais alta não é a mesma nos três" in text
    assert "média mais alta" not in jf.judging_text(_results())


def test_who_judged_agreement_and_key_sentences():
    text = jf.judging_text(_results())
    assert text.startswith("Dois modelos de linguagem (Claude) julgaram")
    assert "desempatou 3 pares" in text and "sem saber que busca trouxe cada documento" in text
    assert ("kappa de Cohen = 0,800 (IC 95%: 0,700 a 0,900); sem os 70 pares a que ambos deram 0, cai para 0,700 "
            "(IC 95%: 0,500 a 0,900)") in text
    assert "sobe para 0,900" in jf.judging_text(_results(nonzero_kappa=0.9))
    assert "em 3 das 24 perguntas (1 delas sem resposta no gabarito) e deram nota 0 a 2 das 20" in text
    assert "não deram nota 0 a nenhuma das 20 respostas conhecidas" in jf.judging_text(_results(rejected=0))
    assert "não houve discordância a desempatar" in jf.judging_text(_results(adjudicated=0))
    none_gained = _results()
    none_gained["key_changes"].update(gained=[], gained_without_gold_answer=[])
    assert "em nenhuma das 24 perguntas (nenhuma delas sem resposta no gabarito)" in jf.judging_text(none_gained)
    assert 1 <= len(_sentences(text)) <= 5


def test_summary_and_table():
    s = jf.judging_summary(_results(graded=_cells(ndcg=(0.70, 0.85, 0.001))))
    assert s["n_changed"] == 1 and s["n_both_zero"] == 70 and s["n"] == {"gold": 20, "graded": 21, "grade2": 22}
    assert s["headline"]["graded"].verdict == "better" and s["other_label"] == labels.model(E5)
    table = jf.judging_table(_results())
    assert table.count("<tr>") == 1 + len(jf.MEASURES) * len(jf.REGIMES)
    for word in ("Medida", "Julgamento", "Perguntas", "p não ajustado", "gabarito original", "só nota 2",
                 "0,820 (IC 95%: 0,720 a 0,920)", "não muda de forma detectável"):
        assert word in table
    assert "p de Holm" not in table  # one test per measure and key: a family of one is not Holm


# --- the committed results ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads((STUDY / "judging.json").read_text(encoding="utf-8"))


def _lock(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["files"]


def test_committed_results_match_the_committed_files(committed):
    check_results_gold(STUDY / "judging.json")  # unchanged since its run; every recorded gold file as it was
    gold = committed["provenance"]["gold_sha256"]
    assert gold[rj.GOLD] == _lock(REPO / "data" / "helpcenter" / "gold.lock.json")["evaluation.json"]
    assert committed["inputs"]["gold"]["sha256"] == gold[rj.GOLD]
    pool_sha = _lock(rj.JUDGING / "pool.lock.json")["pool.json"]
    assert committed["inputs"]["pool"]["sha256"] == pool_sha == gold["judging/pool.json"] == sha256_file(rj.POOL)
    qrels = _lock(rj.ROUND / "qrels.lock.json")
    assert committed["inputs"]["qrels"]["sha256"] == qrels["qrels.trec"] == gold["judging/round1/qrels.trec"]
    for name, folder in rj.RUNS.items():
        run = committed["inputs"]["runs"][name]
        assert run["run_trec_sha256"] == read_manifest(folder / MANIFEST)["run.trec"]["sha256"]
        assert run["run_id"] == json.loads((folder / "run.json").read_text(encoding="utf-8"))["run_id"]
    stored = json.loads((rj.ROUND / "agreement.json").read_text(encoding="utf-8"))
    assert committed["agreement"]["unweighted"] == stored["unweighted"] and stored["pool_sha256"] == pool_sha


def test_committed_comparison_and_key_changes_read_again(committed):
    assert committed["comparison"] == jf.comparison_rows(committed)
    assert committed["changes"] == jf.changes(committed)
    assert all(s["at_5"] == 1.0 for s in committed["judged_share"].values())  # the pool went 5 deep
    qids = [q["id"] for q in json.loads(rj.POOL.read_text(encoding="utf-8"))["questions"]]
    gold = Qrels.from_trec(rj.RUNS["bm25"] / "qrels.trec")
    assert committed["key_changes"] == rj.gold_against_judgments(gold, Qrels.from_trec(rj.ROUND / "qrels.trec"), qids)
    for block in committed["regimes"].values():
        assert block["n"] + len(block["left_out"]) == len(qids) == committed["key_changes"]["n_questions"]
    text, table = jf.judging_text(committed), jf.judging_table(committed)
    assert fmt.num(committed["agreement"]["unweighted"]["kappa"]) in text and len(_sentences(text)) <= 5
    for regime in jf.REGIMES:  # the sentence's differences are the table's
        diff = fmt.signed(jf.comparison(committed, regime, jf.HEADLINE_MEASURE).diff)
        assert diff in text and diff in table


def test_a_changed_pool_is_refused_before_anything(tmp_path, monkeypatch):
    for name in ("pool.json", "pool.lock.json"):
        shutil.copy(rj.JUDGING / name, tmp_path / name)
    text = (tmp_path / "pool.json").read_text(encoding="utf-8")
    (tmp_path / "pool.json").write_text(text.replace('"seed": 20261205', '"seed": 20261206'), encoding="utf-8")
    monkeypatch.setattr(rj, "POOL", tmp_path / "pool.json")
    with pytest.raises(GabaritoError, match="changed after it was frozen"):
        rj.verified_inputs(committed_gold())


def committed_gold() -> dict:
    return json.loads((STUDY / "judging.json").read_text(encoding="utf-8"))["provenance"]["gold_sha256"]


def test_the_pool_options_are_those_the_judging_recorded():
    assert jf.pool_options({"inputs": {"pool": {"depth": 10, "seed": 7, "runs": ["a", "b"]}}}) == {"depth": 10, "seed": 7}
    committed = json.loads((STUDY / "judging.json").read_text(encoding="utf-8"))
    options = jf.pool_options(committed)
    assert isinstance(options["depth"], int) and options["depth"] > 0 and "seed" in options
