"""``--device auto``: the one choice of a device (CUDA when torch sees it, else the CPU), used by
the encoders and the second readers and recorded in their provenance. No GPU is needed: the
choice is tested with ``torch.cuda.is_available`` patched, the models run on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval import device as device_module
from gabarito.retrieval.device import ENV, add_device_argument, choose_device

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
sentence_transformers = pytest.importorskip("sentence_transformers")

WORDS = ["the", "a", "of", "is", "capital", "city", "france", "paris", "banana", "yellow", "fruit"]


@pytest.fixture()
def no_env(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)


@pytest.fixture()
def gpu(monkeypatch):
    """Pretend torch sees a GPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


def test_auto_is_cuda_when_torch_sees_it_else_the_cpu(no_env, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert choose_device("auto") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert choose_device("auto") == "cuda" and choose_device(" AUTO ") == "cuda"
    assert choose_device("auto", cpu_only=True) == "cpu"


def test_not_asking_is_the_variable_else_the_cpu(no_env, gpu, monkeypatch):
    assert choose_device() == "cpu" and choose_device(None) == "cpu"
    monkeypatch.setenv(ENV, "auto")
    assert choose_device() == "cuda"
    assert choose_device("cpu") == "cpu"  # asked explicitly: the variable does not matter


def test_explicit_devices_and_errors(no_env, gpu, monkeypatch):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert [choose_device(d) for d in ("cpu", "cuda", "cuda:1", "mps")] == ["cpu", "cuda", "cuda:1", "mps"]
    with pytest.raises(GabaritoError, match=r"sees 2 CUDA device\(s\) here"):
        choose_device("cuda:2")
    for bad in ("gpu", "cuda:", "tpu", "", 3):
        with pytest.raises(GabaritoError, match="unknown device"):
            choose_device(bad)
    with pytest.raises(GabaritoError, match="CPU only"):
        choose_device("cuda", cpu_only=True)


def test_device_argument(no_env):
    import argparse

    ap = argparse.ArgumentParser()
    add_device_argument(ap)
    assert ap.parse_args([]).device is None and ap.parse_args(["--device", "auto"]).device == "auto"


def test_no_torch_means_no_gpu(monkeypatch):
    import builtins

    real = builtins.__import__
    monkeypatch.setattr(builtins, "__import__",
                        lambda name, *a, **k: (_ for _ in ()).throw(ImportError(name)) if name == "torch"
                        else real(name, *a, **k))
    assert device_module.cuda_available() is False


# --- tiny models built here, on the CPU -------------------------------------------------------------

def _tiny_bert(folder, *, num_labels=None):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True,
                                               model_max_length=64)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                                     num_labels=num_labels or 2)
    torch.manual_seed(7)
    cls = transformers.BertForSequenceClassification if num_labels else transformers.BertModel
    cls(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    return _tiny_bert(tmp_path_factory.mktemp("tiny-ce"), num_labels=1)


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    bert = _tiny_bert(tmp_path_factory.mktemp("tiny-bert"))
    folder = tmp_path_factory.mktemp("tiny-st")  # a plain transformer folder loads with mean pooling
    sentence_transformers.SentenceTransformer(str(bert), device="cpu").save(str(folder))
    return folder


def test_cross_encoder_auto_on_a_cpu_machine_is_the_default(no_env, tiny_cross_encoder, monkeypatch):
    from gabarito.retrieval.rerank.loading import load_reranker

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    default = load_reranker(str(tiny_cross_encoder))
    auto = load_reranker(str(tiny_cross_encoder), device="auto")
    texts = ["paris is the capital of france", "banana is a yellow fruit"]
    assert np.array_equal(default.score("capital of france", texts), auto.score("capital of france", texts))
    assert default.provenance()["device"] == auto.provenance()["device"] == "cpu"


def test_encoder_auto_follows_torch_and_is_recorded(no_env, tiny_encoder, monkeypatch):
    from gabarito.retrieval.models import Encoder

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    default = Encoder(str(tiny_encoder), backend="torch")
    auto = Encoder(str(tiny_encoder), backend="torch", device="auto")
    assert default.provenance()["device"] == auto.provenance()["device"] == "cpu"
    assert np.array_equal(default.encode(["paris city"]), auto.encode(["paris city"]))

    asked = []
    real = sentence_transformers.SentenceTransformer

    def on_cpu(location, device=None, **kw):  # record the device asked for, build on the CPU
        asked.append(device)
        return real(location, device="cpu", **kw)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", on_cpu)
    on_gpu = Encoder(str(tiny_encoder), device="auto")
    assert asked == ["cuda"] and on_gpu.device == "cuda" and on_gpu.provenance()["device"] == "cuda"
    assert on_gpu.backend == "torch"  # ONNX Runtime is verified on the CPU only
