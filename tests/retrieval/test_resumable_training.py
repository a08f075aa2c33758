"""The resumable trainer: a run cut and resumed equals one that never stopped; a finished run is
never trained again; the checkpoint is chosen on validation alone; a tiny real run learns."""

from __future__ import annotations

import json
import random

import pytest

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.measure.reader_validation import validation
from gabarito.retrieval.rerank.recipe import EpochGroups, PseudoSource, Source, split_validation
from gabarito.retrieval.rerank.resumable import CurveConfig, batches, finished, train_resumable
from gabarito.retrieval.rerank.weak import pseudo_queries

TOPICS = ("volcano lava eruption", "violin orchestra concert", "glacier ice melting", "tax income revenue",
          "tomato garden soil", "satellite orbit launch", "bakery bread flour", "river flood dam")


def _source(name: str, seed: int) -> Source:
    """Questions whose relevant documents share their words; the rest of the texts do not."""
    rng = random.Random(seed)
    texts, queries, qrels, candidates = {}, {}, {}, {}
    for t, topic in enumerate(TOPICS):
        words = topic.split()
        for j in range(2):
            texts[f"d{t}{j}"] = f"{words[j]} {words[2]} report about the {topic} and more {words[0]}"
        queries[f"q{t}"] = f"what about {words[0]} {words[1]}"
        qrels[f"q{t}"] = {f"d{t}0": 2, f"d{t}1": 1}
    ids = sorted(texts)
    for q in queries:
        cands = ids[:]
        rng.shuffle(cands)
        candidates[q] = cands
    return Source(name, queries, texts, qrels, candidates)


def _config(**kw) -> CurveConfig:
    base = dict(budget_pairs=48, checkpoint_pairs=16, batch_size=8, max_length=32, seed=5, torch_threads=1,
                learning_rate=1e-4)
    return CurveConfig(**{**base, **kw})


def _fixture(seed: int = 1):
    train, val = split_validation(_source("toy", seed), 0.25, seed=seed)
    return EpochGroups([train], [], seed=seed), validation([val], n=8, seed=seed), train, val


def test_the_validation_questions_are_never_trained_on():
    groups, _, train, val = _fixture()
    assert val.queries and train.queries and not set(val.queries) & set(train.queries)
    trained = {p.query for g in groups(0) for p in g}
    assert not trained & set(val.queries.values())


def test_negatives_are_drawn_again_each_epoch_but_each_epoch_is_fixed():
    groups, *_ = _fixture()
    assert [[p.doc_id for p in g] for g in groups(0)] == [[p.doc_id for p in g] for g in groups(0)]
    assert [[p.doc_id for p in g] for g in groups(0)] != [[p.doc_id for p in g] for g in groups(1)]
    assert all(g[0].label == 1.0 and all(p.label == 0.0 for p in g[1:]) for g in groups(0))
    cfg = _config()
    assert batches(groups(0), cfg, 0) == batches(groups(0), cfg, 0)
    assert sum(len(b) for b in batches(groups(0), cfg, 0)) == sum(map(len, groups(0)))


def test_a_held_out_collection_gives_pseudo_queries_and_never_its_judgments():
    class Doc:
        def __init__(self, i, title, text):
            self.id, self.title, self.text = i, title, text

    docs = [Doc(f"h{i}", f"study of {w} effects", f"study of {w} effects . the {w} was measured in many ways here "
                                                  f"and the results are reported below in detail")
            for i, w in enumerate(("heat", "noise", "wind", "rain", "light"))]
    found = pseudo_queries(docs)
    assert found["counts"]["title"] == 5
    texts = {d.id: d.text for d in docs}
    cands = {p.doc_id: sorted(texts) for p in found["pseudo"]}
    groups = EpochGroups([], [PseudoSource("held", found["pseudo"], texts, cands)], seed=3)(0)
    assert len(groups) == 5
    for g in groups:
        assert g[0].query.startswith("study of") and g[0].doc_id.startswith("held:")
        assert all(p.doc_id != g[0].doc_id for p in g[1:])  # never the source document as a negative


def _weights(folder):
    return sha256_file(folder / "state" / "model" / "model.safetensors")


def test_a_run_cut_and_resumed_ends_with_the_weights_of_one_that_never_stopped(tmp_path):
    groups, validate, *_ = _fixture()
    whole = train_resumable(groups, _config(), tmp_path / "whole", validate=validate)
    assert whole["status"] == "finished" and whole["pairs_seen"] >= 48
    steps, told = iter(range(100)), []
    cut = train_resumable(groups, _config(), tmp_path / "cut", validate=validate, should_stop=lambda: next(steps) == 2,
                          on_checkpoint=told.append)
    assert cut["status"] == "interrupted" and 0 < cut["pairs_seen"] < 48
    # told at each checkpoint after the first point, the curve so far, while still training
    assert [r["status"] for r in told] == ["training"] and told[0]["curve"] == cut["curve"][:2]
    assert told[0]["pairs_seen"] == 16 and told[0]["sessions"][0]["to_pairs"] == 16
    assert not (tmp_path / "cut" / "done.json").exists()
    resumed = train_resumable(groups, _config(), tmp_path / "cut", validate=validate)
    assert resumed["status"] == "finished"
    assert _weights(tmp_path / "cut") == _weights(tmp_path / "whole")
    assert resumed["best"] == whole["best"]
    assert [p["pairs"] for p in resumed["curve"]] == [p["pairs"] for p in whole["curve"]]
    assert len(resumed["sessions"]) == 2


def test_a_finished_run_is_not_trained_again_and_a_changed_one_is_refused(tmp_path):
    groups, validate, *_ = _fixture()
    train_resumable(groups, _config(budget_pairs=16), tmp_path / "r", validate=validate)
    calls = []
    again = train_resumable(groups, _config(budget_pairs=16), tmp_path / "r",
                            validate=lambda reader: calls.append(1) or validate(reader))
    assert again["status"] == "finished earlier" and not calls
    best = tmp_path / "r" / "best" / "model.safetensors"
    best.write_bytes(best.read_bytes()[:-4] + b"\0\0\0\0")
    assert finished(tmp_path / "r") is None
    with pytest.raises(GabaritoError, match="recorded sha256"):
        train_resumable(groups, _config(budget_pairs=16), tmp_path / "r", validate=validate)


def test_the_checkpoint_kept_is_the_one_validation_prefers(tmp_path):
    groups, _, *_ = _fixture()
    chosen = iter([0.1, 0.9, 0.3, 0.5])  # the second point (after 16 pairs) is validation's best
    record = train_resumable(groups, _config(), tmp_path / "r", validate=lambda reader: {"select": next(chosen)})
    assert [p["select"] for p in record["curve"]] == [0.1, 0.9, 0.3, 0.5]
    assert record["best"]["pairs"] == record["curve"][1]["pairs"] == 16
    saved = json.loads((tmp_path / "r" / "done.json").read_text())
    assert saved["best"]["weights_sha256"] == sha256_file(tmp_path / "r" / "best" / "model.safetensors")


def test_a_tiny_real_run_learns(tmp_path):
    """Loss falls and the validation AUC against random documents rises above chance."""
    groups, validate, *_ = _fixture(seed=2)
    record = train_resumable(groups, _config(budget_pairs=240, checkpoint_pairs=80, learning_rate=2e-4),
                             tmp_path / "r", validate=validate)
    curve = record["curve"]
    assert curve[0]["train_loss"] is None and curve[-1]["pairs"] >= 240
    losses = [p["train_loss"] for p in curve[1:]]
    assert losses[-1] < losses[0]
    auc = [p["auc"]["random, assumed non-relevant"] for p in curve]
    assert auc[-1] > auc[0] and auc[-1] > 0.75


def test_a_float16_copy_of_the_base_travels_and_trains_in_float32(tmp_path):
    """The copy that fits the GPU machine's transport: half the bytes, the same tensors to float16's
    rounding, and a run from it trains (and saves) float32 weights."""
    from safetensors.torch import load_file

    from gabarito.retrieval.rerank.transport import half_copy
    from gabarito.retrieval.rerank.training import transformer_folder

    record = half_copy("sentence-transformers/all-MiniLM-L6-v2", tmp_path / "f16")
    full = load_file(str(transformer_folder("sentence-transformers/all-MiniLM-L6-v2", tmp_path / "f32") / "model.safetensors"))
    half = load_file(str(tmp_path / "f16" / "model.safetensors"))
    assert record["dtype"] == "float16" and record["weights_sha256"] != record["source_weights_sha256"]
    assert set(half) == set(full) and all(half[k].dtype.itemsize == 2 for k in half if full[k].is_floating_point())
    assert (tmp_path / "f16" / "model.safetensors").stat().st_size < 0.55 * (tmp_path / "f32" / "model.safetensors").stat().st_size
    k = "embeddings.word_embeddings.weight" if "embeddings.word_embeddings.weight" in full else next(iter(full))
    assert (half[k].float() - full[k]).abs().max() <= 1e-3 * full[k].abs().max()
    groups, validate, *_ = _fixture()
    run = train_resumable(groups, _config(budget_pairs=16), tmp_path / "r", validate=validate, base_folder=tmp_path / "f16")
    assert run["status"] == "finished"
    saved = load_file(str(tmp_path / "r" / "best" / "model.safetensors"))
    assert all(v.dtype.itemsize == 4 for v in saved.values() if v.is_floating_point())
