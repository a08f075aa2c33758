"""The vector cache: keyed on the model's fingerprint, verified on read, healed, safe with
several writers, and able to use the stores earlier versions wrote."""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from gabarito.hashing import sha256_text
from gabarito.retrieval.models import EmbeddingCache, ModelSource, config_sha256, model_fingerprint
from gabarito.retrieval.models import cache as cache_module
from gabarito.retrieval.models.fingerprint import loaded_settings


def make_model_folder(folder: Path, pooling: str = "mean") -> Path:
    """A sentence-transformers-shaped folder (the files that matter; fake weights)."""
    (folder / "1_Pooling").mkdir(parents=True, exist_ok=True)
    (folder / "modules.json").write_text(json.dumps([{"idx": 0, "path": "", "type": "Transformer"},
                                                     {"idx": 1, "path": "1_Pooling", "type": "Pooling"}]))
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": pooling}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 256}))
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "README.md").write_text("about the model")
    return folder


class FakeEncoder:
    """Deterministic unit vectors from the text and the folder's pooling setting; records calls."""

    def __init__(self, folder: Path | None = None, model_id="fake/model", weights="ab" * 32,
                 document_prefix="doc: ", dim=4):
        self.model_id, self.weights_sha256, self.document_prefix, self.dim = model_id, weights, document_prefix, dim
        self.query_prefix = "q: "
        self.source = ModelSource(model_id, str(folder), "local folder") if folder else None
        self.calls: list[list[str]] = []

    def _pooling(self) -> str:
        if self.source is None:
            return "mean"
        return json.loads((Path(self.source.location) / "1_Pooling" / "config.json").read_text())["pooling_mode"]

    def vectors(self, texts):
        rows = []
        for t in texts:
            seed = int(sha256_text(self._pooling() + self.document_prefix + t)[:8], 16)
            v = np.random.default_rng(seed).normal(size=self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)

    def encode_documents(self, texts, **kw):
        self.calls.append(list(texts))
        return self.vectors(texts)


def quiet(root) -> EmbeddingCache:
    return EmbeddingCache(root, notice=None)


def packs(store: Path) -> list[Path]:
    return sorted(store.glob("*.npz"))


# -- the key: weights and every setting --------------------------------------------------------

def test_config_sha256_sees_settings_not_documentation(tmp_path):
    folder = make_model_folder(tmp_path / "m")
    first = config_sha256(folder)
    (folder / "README.md").write_text("other words")
    (folder / "model.safetensors").write_bytes(b"other weights")  # hashed as weights_sha256, not here
    assert config_sha256(folder) == first
    for path, text in (("1_Pooling/config.json", '{"pooling_mode": "cls"}'),
                       ("sentence_bert_config.json", '{"max_seq_length": 128}'),
                       ("config_sentence_transformers.json", '{"prompts": {"document": "passage: "}}'),
                       ("modules.json", "[]")):
        before = config_sha256(folder)
        (folder / path).write_text(text)
        assert config_sha256(folder) != before, path
    assert config_sha256(folder / "model.safetensors") is None  # a single-file model


def test_loaded_settings_of_a_sentence_transformers_like_model():
    class Pool:
        def __init__(self, mode):
            self.mode = mode

        def get_config_dict(self):
            return {"pooling_mode": self.mode}

    class Model(list):
        max_seq_length, prompts, default_prompt_name, truncate_dim = 256, {}, None, None

    mean, cls = loaded_settings(Model([Pool("mean")])), loaded_settings(Model([Pool("cls")]))
    assert mean["modules"] == [{"type": "Pool", "settings": {"pooling_mode": "mean"}}] and mean != cls
    assert loaded_settings(object()) is None and loaded_settings(None) is None


def test_a_pooling_change_with_the_same_weights_misses_and_reencodes(tmp_path):
    """Defect 1: vectors cached for mean pooling were served after a switch to cls pooling."""
    folder = make_model_folder(tmp_path / "m")
    cache, enc = quiet(tmp_path / "cache"), FakeEncoder(folder)
    texts = ["alpha", "beta", "gamma"]
    mean_vectors = cache.encode(enc, texts)
    assert cache.encode(enc, texts).tolist() == mean_vectors.tolist() and cache.hits == 3
    fp_mean = model_fingerprint(enc)

    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "cls"}))
    assert model_fingerprint(enc) != fp_mean
    enc.calls.clear()
    cls_vectors = cache.encode(enc, texts)
    assert (cache.hits, cache.misses) == (0, 3) and sorted(enc.calls[0]) == sorted(texts)
    assert np.allclose(cls_vectors, enc.vectors(texts)) and not np.allclose(cls_vectors, mean_vectors)


def test_store_depends_on_model_weights_settings_and_prefix(tmp_path):
    cache = quiet(tmp_path)
    cache.encode(FakeEncoder(), ["x"])
    for other in (FakeEncoder(weights="cd" * 32), FakeEncoder(model_id="fake/other"), FakeEncoder(document_prefix=""),
                  FakeEncoder(make_model_folder(tmp_path / "m"))):
        cache.encode(other, ["x"])
        assert cache.misses == 1 and other.calls == [["x"]]
    assert len({cache.store(e) for e in (FakeEncoder(), FakeEncoder(make_model_folder(tmp_path / "m")))}) == 2


# -- verified on read, healed -------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["cut", "flip", "empty", "garbage"])
def test_a_damaged_pack_is_discarded_with_a_notice_and_recomputed(tmp_path, damage):
    """Defect 5: a cut-short cache file gave a raw traceback on every run until deleted by hand."""
    notices = []
    cache, enc = EmbeddingCache(tmp_path, notice=notices.append), FakeEncoder()
    first = cache.encode(enc, ["a", "b", "c"])
    (pack,) = packs(cache.store(enc))
    data = pack.read_bytes()
    pack.write_bytes({"cut": data[: len(data) // 2], "flip": data[:-9] + bytes([data[-9] ^ 1]) + data[-8:],
                      "empty": b"", "garbage": b"\x00not a pack"}[damage])
    enc.calls.clear()
    again = cache.encode(enc, ["a", "b", "c"])
    assert cache.misses == 3 and sorted(enc.calls[0]) == ["a", "b", "c"]
    assert np.array_equal(again, first)
    assert len(notices) == 1 and "discarded damaged" in notices[0] and "\n" not in notices[0]
    assert packs(cache.store(enc)) == [pack]  # content-addressed: the same vectors, the same name
    assert cache_module.read_pack(pack)[0] == sorted(sha256_text("doc: " + t) for t in "abc")
    cache.encode(enc, ["a", "b", "c"])
    assert cache.hits == 3 and len(notices) == 1  # healed


def test_a_row_that_does_not_match_its_digest_is_refused(tmp_path):
    """A pack whose name matches its bytes but whose vector was swapped for another key's."""
    cache, enc = quiet(tmp_path), FakeEncoder()
    keys = [sha256_text("doc: a"), sha256_text("doc: b")]
    right = enc.vectors(["a", "b"])
    data = cache_module.pack_bytes(keys, right)
    npz = dict(np.load(io.BytesIO(data)))
    npz["vectors"] = right[::-1].copy()  # the interleaving of two writers: rows under the wrong keys
    buf = io.BytesIO()
    np.savez(buf, **npz)
    store = cache.store(enc)
    store.mkdir(parents=True)
    (store / f"{hashlib.sha256(buf.getvalue()).hexdigest()}.npz").write_bytes(buf.getvalue())
    out = cache.encode(enc, ["a", "b"])
    assert cache.misses == 2 and np.allclose(out, right)
    assert "does not match its digest" in cache.notices[0]


def _writer(args):
    root, texts = args
    cache = EmbeddingCache(root, notice=None)
    enc = FakeEncoder()
    for i in range(0, len(texts), 3):
        cache.encode(enc, texts[i:i + 3])
    return len(texts)


def test_concurrent_writers_lose_nothing_and_never_mix_rows(tmp_path):
    """Defect 5: two writers interleaving made a later run read the other writer's vectors."""
    groups = [[f"w{w}-t{i}" for i in range(24)] for w in range(3)]
    with multiprocessing.get_context("fork").Pool(3) as pool:
        assert pool.map(_writer, [(str(tmp_path), g) for g in groups]) == [24, 24, 24]
    cache, enc = quiet(tmp_path), FakeEncoder()
    every = [t for g in groups for t in g]
    out = cache.encode(enc, every)
    assert cache.hits == len(every) and enc.calls == []
    assert np.allclose(out, enc.vectors(every))
    assert len(packs(cache.store(enc))) <= cache_module.MERGE_AT + 1  # merged as they grew


def test_many_packs_are_merged_into_one(tmp_path):
    cache, enc = quiet(tmp_path), FakeEncoder()
    texts = [f"t{i}" for i in range(cache_module.MERGE_AT + 1)]
    for t in texts:
        cache.encode(enc, [t])
    assert len(packs(cache.store(enc))) == 1
    assert np.allclose(cache.encode(enc, texts), enc.vectors(texts)) and cache.hits == len(texts)


def test_files_follow_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        cache, enc = quiet(tmp_path), FakeEncoder()
        cache.encode(enc, ["a"])
        (pack,) = packs(cache.store(enc))
        assert stat.S_IMODE(pack.stat().st_mode) == 0o640
    finally:
        os.umask(old)


# -- the stores earlier versions wrote ----------------------------------------------------------

def write_earlier_store(cache: EmbeddingCache, enc: FakeEncoder, texts, vectors) -> Path:
    folder = cache.legacy_store(enc)
    folder.mkdir(parents=True)
    (folder / "keys.json").write_text(json.dumps([sha256_text(enc.document_prefix + t) for t in texts]))
    np.save(folder / "vectors.npy", np.asarray(vectors, dtype=np.float32))
    return folder


def test_an_earlier_store_made_with_the_same_model_is_used_and_left_unchanged(tmp_path):
    cache, enc = quiet(tmp_path), FakeEncoder()
    texts = ["one", "two", "three", "four"]
    folder = write_earlier_store(cache, enc, texts, enc.vectors(texts))
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    out = cache.encode(enc, ["four", "two", "one", "five"])
    assert np.allclose(out, enc.vectors(["four", "two", "one", "five"]))
    assert cache.hits == 3 and cache.misses == 1
    assert sorted(map(sorted, enc.calls)) == [["five"], ["four", "one"]]  # two probes checked, one new text
    assert "took 3 vectors from the earlier store" in cache.notices[0]
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    enc.calls.clear()
    cache.encode(enc, ["four", "two", "one", "five"])
    assert cache.hits == 4 and enc.calls == []  # now in the new store


def test_an_earlier_store_made_with_other_settings_is_refused(tmp_path):
    """The same weights, other pooling: the earlier store (keyed by weights only) must not serve."""
    folder = make_model_folder(tmp_path / "m", pooling="cls")
    cache, enc = quiet(tmp_path / "cache"), FakeEncoder(folder)
    texts = ["one", "two", "three"]
    write_earlier_store(cache, enc, texts, FakeEncoder(make_model_folder(tmp_path / "mean")).vectors(texts))
    out = cache.encode(enc, texts)
    assert np.allclose(out, enc.vectors(texts)) and cache.misses == 3 and cache.hits == 0
    assert "made with other model settings" in cache.notices[0]
    cache.encode(enc, ["four"])
    assert len(cache.notices) == 1  # refused once, not re-checked every run


@pytest.mark.parametrize("damage", ["keys cut", "vectors cut", "rows differ"])
def test_a_damaged_earlier_store_is_a_notice_not_a_traceback(tmp_path, damage):
    cache, enc = quiet(tmp_path), FakeEncoder()
    texts = ["one", "two"]
    folder = write_earlier_store(cache, enc, texts, enc.vectors(texts))
    if damage == "keys cut":
        (folder / "keys.json").write_text((folder / "keys.json").read_text()[:40])
    elif damage == "vectors cut":
        (folder / "vectors.npy").write_bytes((folder / "vectors.npy").read_bytes()[:100])
    else:
        np.save(folder / "vectors.npy", enc.vectors(["one"]))
    out = cache.encode(enc, texts)
    assert np.allclose(out, enc.vectors(texts)) and cache.misses == 2
    if damage != "rows differ":
        assert "is unreadable" in cache.notices[0] and "\n" not in cache.notices[0]
    assert (folder / "keys.json").exists() and (folder / "vectors.npy").exists()
