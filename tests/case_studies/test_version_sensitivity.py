"""The engine-version study of the flagship: the worker on a real ArcadeDB (integration), the part
that compares versions, the statements sent, and the committed results read back."""

import json
import sys
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.measure import metrics
from gabarito.core.runs import Qrels, Run
from studies.benchmark_rrf import version_sensitivity as vs

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "case-studies" / "benchmark_rrf"


TINY = [
    {"doc_id": "solar", "title": "solar panels", "body": "photovoltaic modules on the roof of a house"},
    {"doc_id": "wind", "title": "wind turbines", "body": "an offshore wind farm far from the coast"},
    {"doc_id": "tide", "title": "tidal power", "body": "electricity from ocean currents and the tide"},
    {"doc_id": "heat", "title": "heat pumps", "body": "keeping the house warm in winter"},
]


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["server", "embedded"])
def test_worker_ranks_the_obvious_answer_first(mode):
    questions = [{"id": "q1", "q": vs.lucene_escape("offshore turbines: how far?")},
                 {"id": "q2", "q": vs.lucene_escape("ocean currents")}]
    job = {"mode": mode, "database": "version_test", "type_name": vs.TYPE_NAME, "rows": TINY,
           "queries": questions, "explain": True, **vs.statements(["title", "body"], batch=3)}
    out = vs.run_worker(sys.executable, job, timeout=300)  # the project's venv: arcadedb-embedded 26.10
    assert out["mode"] == mode and out["engine_version"].startswith("26.10")
    assert out["documents"] == len(TINY) and len(out["buckets"]) == 1
    run = Run(out["results"])
    assert run.ids("q1")[0] == "wind" and run.ids("q2")[0] == "tide"
    assert "solar" not in run.ids("q2")  # no shared word: not retrieved at all
    stats = vs.scoring_stats(out["explain"]["q1"])
    assert stats["similarity"] == "BM25" and stats["total_docs"] == len(TINY)
    assert stats["df"]["offshore"] == 1 and stats["df"]["how"] == 0


def test_statements_are_the_flagships_without_the_vector_index():
    sql = vs.statements(["a", "b"])
    assert not any("embedding" in s or "LSM_VECTOR" in s or "IndexInfo" in s for s in sql["ddl"])
    assert sql["ddl"][-1] == "CREATE INDEX ON Concept (a, b) FULL_TEXT"
    assert sql["bm25"] == ("SELECT doc_id, $score AS score FROM Concept WHERE SEARCH_INDEX('{index}', :q) = true "
                           "ORDER BY score DESC LIMIT :k")
    assert sql["insert_rows"].endswith("CONTENT :rows RETURN @rid") and ":row " in sql["insert_row"]
    assert sql["fetch"] == 20  # depth 10 + the index's tie margin
    classic = vs.statements(["a"], similarity="CLASSIC")["ddl"][-1]
    assert classic.endswith('FULL_TEXT METADATA {"similarity": "CLASSIC"}')


def test_compare_counts_agreement_moves_and_fixes():
    published = {"a": 1, "b": None, "c": 3, "d": 2}
    ranks = {"old": {"a": 1, "b": None, "c": 2, "d": 5},
             "new": {"a": 2, "b": None, "c": 2, "d": 5},
             "control": {"a": 2, "b": 4, "c": 3, "d": 2}}
    out = vs.compare(ranks, published, ["old", "new"])
    ag = out["agreement"]
    assert ag["old"]["exact"] == 2 and ag["old"]["both_beyond_top10"] == 1 and ag["old"]["differ"] == ["c", "d"]
    assert ag["new"]["exact"] == 1 and ag["control"]["exact"] == 2
    assert ag["old"]["versus_new"] == {"moved": 1, "fixed": 1, "broken": 0}
    assert ag["control"]["versus_new"] == {"moved": 3, "fixed": 2, "broken": 1}
    assert out["n_moving"] == 1 and out["moves"] == [{"id": "a", "ranks": {"old": 1, "new": 2}, "published": 1}]
    assert out["pairwise_exact"]["old"]["new"] == 3
    with pytest.raises(GabaritoError, match="other questions"):
        vs.compare({"x": {"a": 1}}, published, ["x"])


def test_engine_statistics_are_read_and_checked():
    plan = ("+ FETCH FROM INDEXED FUNCTION SEARCH_INDEX('T[a]', :q) = true ()\n"
            '  SCORING {"similarity":"BM25","k1":1.2,"b":0.75,"totalDocs":3,"avgDocLength":2.0,'
            '"terms":[{"term":"cat","df":1,"idf":0.98},{"term":"the","df":1,"idf":0.98}]}\n+ LIMIT\n')
    stats = vs.scoring_stats(plan)
    assert stats["total_docs"] == 3 and stats["df"] == {"cat": 1, "the": 1}
    assert vs.scoring_stats("+ FETCH FROM INDEX\n") is None
    df = vs.corpus_df(["the cat", "the dog", "a bird"])
    check = vs.df_check({"q": stats, "q2": None}, df)
    assert check["terms"] == 2 and check["wrong"] == 1
    assert check["largest_gap"] == {"question": "q", "term": "the", "engine": 1, "corpus": 2}


def test_field_mapping_reads_ontology_description_as_ours():
    m = vs.field_mapping()
    assert m["mapping"]["ontology_description"] == "description" and m["same_set"]
    assert vs.field_mapping(["search_name", "title"], ["search_name"])["mapping"]["title"] is None


def test_committed_results_recompute():
    path = STUDY / "version_sensitivity.json"
    if not path.exists():
        pytest.skip("no committed version_sensitivity.json")
    res = json.loads(path.read_text(encoding="utf-8"))
    gold = json.loads((STUDY / vs.GOLD_FILE).read_text(encoding="utf-8"))
    from gabarito.hashing import sha256_file

    assert res["provenance"]["gold_sha256"] == {vs.GOLD_FILE: sha256_file(STUDY / vs.GOLD_FILE)}
    qrels = Qrels.single({p["id"]: p["gold"] for p in gold["pairs"]})
    for key, rec in res["runs"].items():
        scored = metrics.evaluate(Run({q: [tuple(x) for x in v] for q, v in rec["top10"].items()}), qrels, vs.MEASURES)
        assert {m: metrics.mean(scored[m]) for m in vs.MEASURES} == pytest.approx(rec["metrics"]), key
    again = vs.compare({k: r["ranks"] for k, r in res["runs"].items()}, res["published"]["ranks"], res["versions"])
    assert again == res["comparison"]
