"""A base model small enough to travel to a lent GPU machine (issue 45, item 3).

The device transport carries at most 64 MiB per call and the machine cannot download. The
readers are trained from all-MiniLM-L6-v2's BERT weights (90 MB in float32): :func:`half_copy`
writes the plain transformer (config, tokenizer, weights) with its floating-point weights cast to
float16 (about 45 MB) into an ignored folder that travels; there, ``train_reader_curve.py
--base-folder`` trains from it. Training always runs in float32
(:func:`gabarito.retrieval.rerank.resumable.train_resumable` upcasts what it loads), so the only
difference from the CPU's start is float16's rounding of the starting weights (relative error
below 1e-3), recorded with both weights' sha256.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.retrieval.rerank.training import transformer_folder


def half_copy(model_id: str, into: str | Path) -> dict:
    """The transformer of ``model_id`` (resolved offline, as every model here) in ``into``, its
    float32 weights stored as float16; returns what the copy records: the model id, both weights'
    sha256 and the bytes written."""
    from safetensors.torch import load_file, save_file
    import torch

    into = Path(into)
    tmp = into.with_name(into.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    transformer_folder(model_id, tmp)
    weights = tmp / "model.safetensors"
    if not weights.exists():
        shutil.rmtree(tmp, ignore_errors=True)
        raise GabaritoError(f"{model_id}: no model.safetensors to cast (a pytorch_model.bin does not travel)")
    source_sha = sha256_file(weights)
    tensors = load_file(str(weights))
    save_file({k: (v.to(torch.float16) if v.dtype == torch.float32 else v).contiguous() for k, v in tensors.items()},
              str(weights), metadata={"format": "pt"})
    record = {"model_id": model_id, "source_weights_sha256": source_sha, "weights_sha256": sha256_file(weights),
              "dtype": "float16", "bytes": sum(p.stat().st_size for p in tmp.iterdir() if p.is_file())}
    shutil.rmtree(into, ignore_errors=True)
    tmp.rename(into)
    return record
