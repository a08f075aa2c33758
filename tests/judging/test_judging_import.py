"""Importing grades: kappa (hand-computed and scikit-learn), adjudication pool, frozen graded qrels."""

import json
from fractions import Fraction

import pytest

from gabarito.core.runs import Qrels
from gabarito.errors import GabaritoError
from gabarito.evaluation.rows import grades_of
from gabarito.inputs.documents import load_documents, load_evaluation
from gabarito.inputs.gold import verify_frozen
from gabarito.judging.grades import read_grades
from gabarito.judging.importing import import_judgments
from gabarito.judging.pool import (known_answers, make_pool, pool_pairs, question_texts, read_pool, read_run,
                                   write_pool)

#: two assessors' grades, pair by pair in pool order: 7 of 10 agree.
#: Confusion (rows A, columns B): [[3,1,0],[0,2,1],[1,0,2]]; observed agreement 0.7; both margins
#: (0.4, 0.3, 0.3), so expected agreement 0.34: kappa = (0.7 - 0.34) / (1 - 0.34) = 6/11.
#: Linear weights |i-j|/2: observed disagreement (0.5 + 0.5 + 1) / 10 = 0.2, expected
#: 2 * (0.4*0.3*0.5 + 0.3*0.3*0.5 + 0.4*0.3*1) = 0.45: kappa = 1 - 0.2/0.45 = 5/9.
A = [0, 0, 0, 1, 1, 2, 2, 2, 0, 1]
B = [0, 0, 1, 1, 2, 2, 2, 0, 0, 1]


@pytest.fixture
def pool_path(collection, tmp_path):
    docs = load_documents(collection["documents"])
    known = tmp_path / "known.qrels"
    known.write_text("qa 0 d1 1\nqa 0 d5 2\nqb 0 d8 1\n", encoding="utf-8")
    pool = make_pool({str(p): read_run(p) for p in collection["runs"]}, docs,
                     question_texts(collection["evaluation"], docs), depth=3, seed=11,
                     known=known_answers(known, docs))
    path = tmp_path / "pool.json"
    write_pool(path, pool)
    assert pool["meta"]["n_pairs"] == len(A)
    return path


def export(path, pool_path, assessor, grades, *, sha=None, exported_at="2026-12-04T00:00:00Z", **edit):
    """A grades file as the judging page exports it (``edit``: record index -> field overrides)."""
    pool, real_sha = read_pool(pool_path)
    pairs = pool_pairs(pool)
    if isinstance(grades, dict):
        pairs = [p for p in pairs if p[0] in grades]
        grades = [grades[p[0]] for p in pairs]
    records = [{"pair": pid, "question": q, "doc": d, "grade": g} for (pid, q, d), g in zip(pairs, grades)]
    for i, fields in edit.get("records", {}).items():
        records[i].update(fields)
    path.write_text(json.dumps({"schema": "gabarito.grades/1", "pool_sha256": sha or real_sha,
                                "assessor": assessor, "exported_at": exported_at,
                                "complete": True, "grades": records}), encoding="utf-8")
    return path


def test_kappa_matches_hand_computation_and_scikit_learn(pool_path, tmp_path):
    from sklearn.metrics import cohen_kappa_score

    out = tmp_path / "out"
    result = import_judgments([export(tmp_path / "a.json", pool_path, "Ana", A),
                               export(tmp_path / "b.json", pool_path, "Bruno", B)], pool_path, out, resamples=500)
    agreement = json.loads((out / "agreement.json").read_text(encoding="utf-8"))
    assert agreement["confusion"] == [[3, 1, 0], [0, 2, 1], [1, 0, 2]]
    assert agreement["unweighted"]["kappa"] == pytest.approx(float(Fraction(6, 11)))
    assert agreement["linear"]["kappa"] == pytest.approx(float(Fraction(5, 9)))
    assert agreement["unweighted"]["kappa"] == pytest.approx(cohen_kappa_score(A, B))
    assert agreement["linear"]["kappa"] == pytest.approx(cohen_kappa_score(A, B, weights="linear"))
    low, high = agreement["unweighted"]["ci95"]
    assert low <= agreement["unweighted"]["kappa"] <= high
    assert agreement["assessors"] == ["Ana", "Bruno"] and result["n_disagreements"] == 3
    assert result["qrels"] is None and not (out / "qrels.trec").exists()  # disagreements wait for adjudication


def test_disagreements_become_a_frozen_blind_pool_and_adjudication_freezes_qrels(pool_path, tmp_path):
    out = tmp_path / "out"
    files = [export(tmp_path / "a.json", pool_path, "Ana", A), export(tmp_path / "b.json", pool_path, "Bruno", B)]
    import_judgments(files, pool_path, out, resamples=200)
    pool, _ = read_pool(pool_path)
    differ = [pid for (pid, _, _), a, b in zip(pool_pairs(pool), A, B) if a != b]
    adj, adj_sha = read_pool(out / "adjudication_pool.json")  # verifies its freeze manifest
    assert adj["kind"] == "adjudication" and [p for p, _, _ in pool_pairs(adj)] == differ
    text = (out / "adjudication_pool.json").read_text(encoding="utf-8")
    assert '"grade"' not in text and "Ana" not in text and "Bruno" not in text
    c = dict(zip(differ, [2, 0, 1]))
    adj_file = export(tmp_path / "c.json", out / "adjudication_pool.json", "Carla", c)
    result = import_judgments(files, pool_path, out, adjudication=adj_file, resamples=200)
    expected = {}
    for (pid, q, d), a, b in zip(pool_pairs(pool), A, B):
        expected.setdefault(q, {})[d] = a if a == b else c[pid]
    assert Qrels.from_trec(out / "qrels.trec") == expected
    assert set(verify_frozen(out / "qrels.lock.json")) == {"qrels.trec", "evaluation.json", "evaluation_grade2.json",
                                                           "judgments.json"}
    assert result["adjudicator"] == "Carla"
    resolved = json.loads((out / "agreement.json").read_text(encoding="utf-8"))["adjudication"]
    assert resolved["n"] == 3 and resolved["assessor"] == "Carla"
    # the graded evaluation file is what `gabarito evaluate --evaluation` reads, grades included
    queries = {q.id: q for q in load_evaluation(out / "evaluation.json", load_documents(tmp_path / "docs.json"))}
    for q, grades in expected.items():
        assert grades_of(queries[q]) == grades
        assert set(queries[q].relevant_ids) == {d for d, g in grades.items() if g >= 1}
    full = {q.id: q for q in load_evaluation(out / "evaluation_grade2.json", load_documents(tmp_path / "docs.json"))}
    for q, grades in expected.items():
        assert set(full[q].relevant_ids) == {d for d, g in grades.items() if g == 2}
    with pytest.raises(GabaritoError, match="already frozen"):
        import_judgments(files, pool_path, out, adjudication=adj_file, resamples=200)


def test_agreement_everywhere_freezes_at_once_and_one_assessor_too(pool_path, tmp_path):
    a = export(tmp_path / "a.json", pool_path, "Ana", A)
    b = export(tmp_path / "b.json", pool_path, "Bruno", A, exported_at="2026-12-04T09:30:00Z")  # agreed, not copied
    result = import_judgments([a, b], pool_path, tmp_path / "o1", resamples=100)
    assert result["n_disagreements"] == 0 and not (tmp_path / "o1" / "adjudication_pool.json").exists()
    assert result["qrels"] and (tmp_path / "o1" / "qrels.lock.json").exists()
    single = import_judgments([a], pool_path, tmp_path / "o2")
    assert "agreement" not in single and not (tmp_path / "o2" / "agreement.json").exists()
    assert Qrels.from_trec(tmp_path / "o2" / "qrels.trec") == Qrels.from_trec(tmp_path / "o1" / "qrels.trec")


@pytest.mark.parametrize("kind,match", [
    ("other_pool", "another pool"),
    ("unknown_doc", r"record 2: document 'd99' is not the pool's candidate"),
    ("bad_grade", r"record 3: grade 3 is not one of"),
    ("bool_grade", r"record 1: grade True"),
    ("missing", "1 of 10 pairs have no grade"),
    ("unknown_pair", r"record 1: pair 'P99999' is not in the pool"),
])
def test_bad_grades_files_are_one_line_and_write_nothing(pool_path, tmp_path, kind, match):
    path = tmp_path / "a.json"
    if kind == "other_pool":
        export(path, pool_path, "Ana", A, sha="0" * 64)
    elif kind == "unknown_doc":
        export(path, pool_path, "Ana", A, records={1: {"doc": "d99"}})
    elif kind == "bad_grade":
        export(path, pool_path, "Ana", A, records={2: {"grade": 3}})
    elif kind == "bool_grade":
        export(path, pool_path, "Ana", A, records={0: {"grade": True}})
    elif kind == "missing":
        pool, _ = read_pool(pool_path)
        export(path, pool_path, "Ana", {pid: 1 for pid, _, _ in pool_pairs(pool)[:-1]})
    else:
        export(path, pool_path, "Ana", A, records={0: {"pair": "P99999"}})
    out = tmp_path / "out"
    with pytest.raises(GabaritoError) as err:
        import_judgments([path, export(tmp_path / "b.json", pool_path, "Bruno", B)], pool_path, out)
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    assert __import__("re").search(match, message), message
    assert not out.exists()


def test_same_assessor_twice_and_adjudication_before_its_pool_are_refused(pool_path, tmp_path):
    a = export(tmp_path / "a.json", pool_path, "Ana", A)
    with pytest.raises(GabaritoError, match="same assessor 'Ana'"):
        import_judgments([a, export(tmp_path / "b.json", pool_path, "Ana", B)], pool_path, tmp_path / "o")
    with pytest.raises(GabaritoError, match="adjudication_pool.json"):
        import_judgments([a, export(tmp_path / "b.json", pool_path, "Bruno", B)], pool_path, tmp_path / "o",
                         adjudication=a)
    assert not (tmp_path / "o").exists()


def test_read_grades_returns_every_pair(pool_path, tmp_path):
    pool, sha = read_pool(pool_path)
    name, grades = read_grades(export(tmp_path / "a.json", pool_path, " Ana ", A), pool, sha)
    assert name == "Ana" and list(grades.values()) == A


def test_numeric_question_ids_also_get_trec_topics_for_evaluate_qrels(tmp_path):
    from gabarito.core.runs import Run
    from gabarito.inputs.items import Document
    from gabarito.inputs.trec_topics import load_trec_evaluation

    docs = [Document(f"d{i}", f"texto {i}", f"Título {i}") for i in range(1, 5)]
    pool = make_pool({"r": Run({"1": ["d1", "d2"], "2": ["d3", "d4"]})}, docs,
                     {"1": "Primeira pergunta?", "2": "Segunda pergunta?"}, depth=2, seed=1)
    write_pool(tmp_path / "pool.json", pool)
    want = {"d1": 2, "d2": 0, "d3": 1, "d4": 2}
    pool, sha = read_pool(tmp_path / "pool.json")
    grades = export(tmp_path / "a.json", tmp_path / "pool.json", "Ana",
                    [want[d] for _, _, d in pool_pairs(pool)])
    result = import_judgments([grades], tmp_path / "pool.json", tmp_path / "out")
    assert str(tmp_path / "out" / "topics.txt") in result["written"]
    assert "topics.txt" in verify_frozen(tmp_path / "out" / "qrels.lock.json")
    queries = {q.id: q for q in load_trec_evaluation(tmp_path / "out" / "topics.txt", tmp_path / "out" / "qrels.trec",
                                                    docs)}
    assert queries["1"].query == "Primeira pergunta?" and grades_of(queries["1"]) == {"d1": 2}
    assert grades_of(queries["2"]) == {"d3": 1, "d4": 2}


def test_no_topics_when_question_ids_are_not_numbers(pool_path, tmp_path):
    import_judgments([export(tmp_path / "a.json", pool_path, "Ana", A)], pool_path, tmp_path / "out")
    assert not (tmp_path / "out" / "topics.txt").exists()
