"""Training a cross-encoder here: the pairs it is built from, and a tiny real training run."""

from __future__ import annotations

import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.rerank.memo import MemoReader
from gabarito.retrieval.rerank.training import (
    ASSUMED_NEGATIVE,
    JUDGED_NEGATIVE,
    POSITIVE,
    RANDOM_NEGATIVE,
    Pair,
    PairPlan,
    build_pairs,
    cached_weights_match,
    pair_counts,
    separability,
    trained_reader_folder,
)

QUERIES = {"q1": "first question", "q2": "second question", "q3": "unjudged question"}
DOCS = {d: f"text of {d}" for d in ("a", "b", "c", "d", "e", "f")}
QRELS = {"q1": {"a": 2, "b": 0, "f": 0}, "q2": {"c": 1}, "q3": {"d": 0}}
CANDIDATES = {"q1": ["b", "a", "c", "d", "f"], "q2": ["a", "b", "c", "d", "e"], "q3": ["d"]}


def test_pairs_label_positives_and_say_which_negatives_were_judged():
    pairs = build_pairs(QUERIES, DOCS, QRELS, CANDIDATES, PairPlan(negatives_per_positive=3, seed=1))
    by = {(p.query_id, p.doc_id): p for p in pairs}
    assert by[("q1", "a")].kind == POSITIVE and by[("q1", "a")].label == 1.0
    assert by[("q1", "b")].kind == JUDGED_NEGATIVE and by[("q1", "b")].label == 0.0
    assert by[("q1", "c")].kind == ASSUMED_NEGATIVE
    assert not any(p.query_id == "q3" for p in pairs)  # no relevant document: no pairs
    assert not any(p.label == 0.0 and QRELS[p.query_id].get(p.doc_id, 0) >= 1 for p in pairs)
    counts = pair_counts(pairs)
    assert counts["positive"] == 2 and counts["queries"] == 2
    assert counts["pairs"] == counts["positive"] + counts["judged non-relevant"] + counts["assumed non-relevant"]


def test_pairs_are_seeded_and_excluded_rows_are_neither_positive_nor_negative():
    plan = PairPlan(negatives_per_positive=1, seed=3)
    one = build_pairs(QUERIES, DOCS, QRELS, CANDIDATES, plan)
    assert one == build_pairs(QUERIES, DOCS, QRELS, CANDIDATES, plan)
    kept = build_pairs(QUERIES, DOCS, QRELS, CANDIDATES, PairPlan(negatives_per_positive=3),
                       exclude={"q1": {"b", "f"}}, prefix="x:")
    assert {p.doc_id for p in kept if p.query_id == "x:q1"} == {"x:a", "x:c", "x:d"}


def test_random_negatives_are_never_judged_and_never_a_hard_negative_again():
    plan = PairPlan(negatives_per_positive=1, random_negatives_per_positive=2, seed=4)
    pairs = build_pairs(QUERIES, DOCS, QRELS, CANDIDATES, plan)
    for p in pairs:
        if p.kind == RANDOM_NEGATIVE:
            assert p.doc_id not in QRELS[p.query_id] and p.label == 0.0
    q1 = [p.doc_id for p in pairs if p.query_id == "q1" and p.label == 0.0]
    assert len(q1) == len(set(q1)) == 3  # one hard, two random, all different
    assert pair_counts(pairs)[RANDOM_NEGATIVE] == 4


def test_a_relevant_document_missing_from_the_documents_is_an_error():
    with pytest.raises(GabaritoError, match="q2: relevant document c"):
        build_pairs(QUERIES, {k: v for k, v in DOCS.items() if k != "c"}, QRELS, CANDIDATES, PairPlan())


def test_separability_is_the_auc_of_positives_against_each_kind_of_negative():
    from sklearn.metrics import roc_auc_score

    kinds = [POSITIVE] * 4 + [ASSUMED_NEGATIVE] * 3 + [RANDOM_NEGATIVE] * 3
    scores = [0.9, 0.5, 0.5, 0.2, 0.5, 0.1, 0.6, 0.0, 0.1, 0.2]  # ties between kinds count one half
    pairs = [Pair("q", f"d{i}", "q", "t", float(k == POSITIVE), k) for i, k in enumerate(kinds)]
    out = separability(pairs, scores)
    for kind in (ASSUMED_NEGATIVE, RANDOM_NEGATIVE):
        sub = [(float(k == POSITIVE), s) for k, s in zip(kinds, scores) if k in (POSITIVE, kind)]
        assert out["auc"][kind] == pytest.approx(roc_auc_score([y for y, _ in sub], [s for _, s in sub]))
    # by hand: positives 0.9, 0.5, 0.5, 0.2 against 0.5, 0.1, 0.6 -> (3 + 1.5 + 1.5 + 1) / 12
    assert out["auc"][ASSUMED_NEGATIVE] == pytest.approx(7 / 12)
    assert out["by_kind"][POSITIVE] == {"n": 4, "mean": pytest.approx(0.525), "sd": pytest.approx(0.2487, abs=1e-4)}
    constant = separability(pairs, [0.3] * len(pairs))
    assert set(constant["auc"].values()) == {0.5}  # a reader that gives every pair the same score
    with pytest.raises(GabaritoError, match="10 pairs but 9 scores"):
        separability(pairs, scores[:-1])


def test_the_memo_reader_scores_each_pair_once():
    calls = []

    class Reader:
        name = "counting"

        def score(self, query, texts):
            calls.append(list(texts))
            return [len(t) for t in texts]

        def provenance(self):
            return {"id": "counting"}

    memo = MemoReader(Reader())
    assert list(memo.score("q", ["aa", "b"])) == [2.0, 1.0]
    assert list(memo.score("q", ["b", "ccc", "aa"])) == [1.0, 3.0, 2.0]
    assert calls == [["aa", "b"], ["ccc"]] and memo.pairs_scored == 3
    assert memo.provenance() == {"id": "counting"}


# -- a real training run: the packaged MiniLM's BERT weights plus a new head --------------------

COLOURS = ["red", "green", "blue", "yellow", "purple", "orange", "black", "white"]
FRUITS = ["apple", "pear", "plum", "grape", "lemon", "mango", "peach", "cherry"]


def _synthetic():
    """Each question asks for one fruit of one colour; exactly one text has both."""
    queries, docs, qrels, cands = {}, {}, {}, {}
    for i, (colour, fruit) in enumerate(zip(COLOURS, FRUITS)):
        qid = f"q{i}"
        queries[qid] = f"which {fruit} is {colour}?"
        docs[f"{qid}-pos"] = f"the {fruit} here is {colour} and ripe"
        for j in range(3):
            other = FRUITS[(i + j + 1) % len(FRUITS)]
            docs[f"{qid}-neg{j}"] = f"the {other} here is {COLOURS[(i + 2 * j + 3) % len(COLOURS)]} and dry"
        qrels[qid] = {f"{qid}-pos": 1}
        cands[qid] = [f"{qid}-neg{j}" for j in range(3)] + [f"{qid}-pos"]
    return queries, docs, qrels, cands


@pytest.mark.integration
def test_a_tiny_training_run_ranks_the_planted_positive_first(tmp_path):
    from gabarito.retrieval.rerank import CrossEncoderReranker, rerank
    from gabarito.retrieval.rerank.training import TrainingConfig, train_cross_encoder

    queries, docs, qrels, cands = _synthetic()
    pairs = build_pairs(queries, docs, qrels, cands, PairPlan(negatives_per_positive=3, seed=5)) * 6
    config = TrainingConfig(max_steps=40, batch_size=8, learning_rate=1e-4, warmup_ratio=0.0, max_length=32,
                            seed=5, time_limit_s=120)
    record = train_cross_encoder(pairs, config, tmp_path / "model")
    assert record["steps"] > 0 and record["loss_curve"]
    assert record["loss_curve"][-1][1] < record["loss_curve"][0][1]
    assert cached_weights_match(tmp_path / "model", record["weights_sha256"])
    assert not cached_weights_match(tmp_path / "model", "0" * 64)
    reader = CrossEncoderReranker(tmp_path / "model", max_length=32)
    firsts = [rerank(queries[q], [(d, docs[d]) for d in cands[q]], reader)[0][0] for q in queries]
    assert firsts == [f"{q}-pos" for q in queries]  # planted last by the first stage, first after training


def test_a_trained_reader_is_found_by_fold_only_when_its_weights_match(tmp_path, monkeypatch):
    import json

    from gabarito.hashing import sha256_file

    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "cross-encoders" / "heldout-npl-0123abcd"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    results = tmp_path / "rerankers.json"
    reader = {"id": "/elsewhere/.cache/cross-encoders/heldout-npl-0123abcd",  # recorded on another machine
              "weights_sha256": sha256_file(folder / "model.safetensors")}
    results.write_text(json.dumps({"folds": {"npl": {"reader": reader}}}), encoding="utf-8")
    assert trained_reader_folder("trained:npl", results) == folder
    with pytest.raises(GabaritoError, match=r"'cisi' held out \(folds: npl\)"):
        trained_reader_folder("trained:cisi", results)
    (folder / "model.safetensors").write_bytes(b"other weights")
    with pytest.raises(GabaritoError, match="rerankers.json: trained reader heldout-npl-0123abcd is not in the cache"):
        trained_reader_folder("trained:npl", results)
    with pytest.raises(GabaritoError, match="no training results"):
        trained_reader_folder("trained:npl", tmp_path / "missing.json")


@pytest.mark.integration
def test_a_tiny_weakly_supervised_run_with_the_grouped_loss_learns_from_titles_alone(tmp_path):
    """No judgment: each document's title asks, its body answers; BM25-like candidates give the negatives."""
    from gabarito.inputs.items import Document
    from gabarito.retrieval.rerank import CrossEncoderReranker, rerank
    from gabarito.retrieval.rerank.training import TrainingConfig, train_cross_encoder
    from gabarito.retrieval.rerank.weak import pseudo_queries, weak_pairs

    documents = [Document(f"d{i}", f"{fruit} that is {colour} . the {fruit} we picked today is {colour} and "
                                   f"ripe enough to eat", title=f"{fruit} that is {colour}")
                 for i, (colour, fruit) in enumerate(zip(COLOURS, FRUITS))]
    found = pseudo_queries(documents)
    assert found["counts"]["title"] == len(documents)
    texts = {d.id: d.text for d in documents}
    cands = {d.id: [o.id for o in documents if o.id != d.id] for d in documents}
    pairs, counts = weak_pairs(found["pseudo"], texts, cands, PairPlan(negatives_per_positive=3, seed=2))
    assert counts["hard_negatives"] == 3 * len(documents)
    config = TrainingConfig(max_steps=30, batch_size=8, learning_rate=1e-4, warmup_ratio=0.0, max_length=32,
                            seed=5, time_limit_s=900, loss="grouped", grouped_negatives=3, logging_steps=5)
    record = train_cross_encoder(pairs * 4, config, tmp_path / "model")
    assert record["stopped_by"] == "step budget", record
    assert record["config"]["loss"] == "grouped" and record["loss_curve"][-1][1] < record["loss_curve"][0][1]
    reader = CrossEncoderReranker(tmp_path / "model", max_length=32)
    queries = [f"which {fruit} is {colour}?" for colour, fruit in zip(COLOURS, FRUITS)]  # never trained on
    firsts = [rerank(q, [(d.id, d.text) for d in documents], reader)[0][0] for q in queries]
    assert sum(f == d.id for f, d in zip(firsts, documents)) >= 6


def test_an_unknown_loss_is_refused_before_any_training(tmp_path):
    from gabarito.retrieval.rerank.training import TrainingConfig, train_cross_encoder

    queries, docs, qrels, cands = _synthetic()
    pairs = build_pairs(queries, docs, qrels, cands, PairPlan(seed=5))
    with pytest.raises(GabaritoError, match="unknown loss"):
        train_cross_encoder(pairs, TrainingConfig(loss="hinge"), tmp_path / "m")


def test_a_trained_reader_is_read_from_the_second_folder_only_when_the_cache_lacks_it(tmp_path, monkeypatch):
    """What ``gabarito report --check`` relies on: an empty cache, the user's readers elsewhere."""
    import json

    from gabarito.hashing import sha256_file
    from gabarito.retrieval.rerank.training import TRAINED_READERS_ENV

    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path / "empty"))
    mine = tmp_path / "mine" / "heldout-npl-0123abcd"
    mine.mkdir(parents=True)
    (mine / "model.safetensors").write_bytes(b"weights")
    results = tmp_path / "rerankers.json"
    reader = {"id": "/elsewhere/heldout-npl-0123abcd", "weights_sha256": sha256_file(mine / "model.safetensors")}
    results.write_text(json.dumps({"folds": {"npl": {"reader": reader}}}), encoding="utf-8")
    monkeypatch.delenv(TRAINED_READERS_ENV, raising=False)
    with pytest.raises(GabaritoError, match="not in the cache"):
        trained_reader_folder("trained:npl", results)
    monkeypatch.setenv(TRAINED_READERS_ENV, str(tmp_path / "mine"))
    assert trained_reader_folder("trained:npl", results) == mine
    cached = tmp_path / "empty" / "cross-encoders" / "heldout-npl-0123abcd"
    cached.mkdir(parents=True)
    (cached / "model.safetensors").write_bytes(b"weights")
    assert trained_reader_folder("trained:npl", results) == cached  # the cache first
    (mine / "model.safetensors").write_bytes(b"other weights")
    (cached / "model.safetensors").write_bytes(b"other weights")
    with pytest.raises(GabaritoError, match="weights differ"):
        trained_reader_folder("trained:npl", results)
