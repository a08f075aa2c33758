"""ONNX Runtime for a sentence-transformers :class:`~gabarito.retrieval.models.encoders.Encoder`.

The transformer module (the costly part) is exported once, in fp32, from the weights the
encoder loaded (``torch.onnx.export``, no network), and kept under
``<cache>/onnx/<model id>-<16 hex of the weights sha256>/<16 hex of the model fingerprint>/``.
Tokenisation and the modules after the transformer (pooling, dense, normalisation) stay the
sentence-transformers ones, so only the transformer's arithmetic changes engine.

The runtime is used only when its vectors are the torch ones (:mod:`.equivalence`: max |Δ| per
component and the top-10 rankings on a fixed sample); the verdict is kept beside the export,
keyed by the export's sha256, both runtimes' versions and the sample's hash, so the check runs
once per model fingerprint. Since vectors are used only when verified equal, the vector cache and
the index reuse keep their keys (the model fingerprint): whichever backend computed a vector,
it is the same vector. A quantised variant would be another model id, never this backend.

Texts are batched by token length (longest first), so a batch pads to lengths close to its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_bytes, file_mode, sha256_file
from gabarito.retrieval.models.fingerprint import model_fingerprint
from gabarito.retrieval.models.sources import cache_dir

#: ONNX opset of the export.
OPSET = 17
#: Environment variable that picks the encoder backend: ``auto`` (default), ``torch`` or ``onnx``.
BACKEND_ENV = "GABARITO_ENCODER_BACKEND"
BACKENDS = ("auto", "torch", "onnx")
#: Threads for ONNX Runtime's intra-op pool. ``None``: every core. Measured on this machine by
#: ``case-studies/peers/bench_encoders.py`` (``case-studies/peers/results/encoders.json``).
THREADS_ENV = "GABARITO_ONNX_THREADS"
#: Largest batch the runtime is given, whatever the caller asks: 16 was the fastest of 16, 32 and 64
#: for both models on this machine (``encoders.json``); larger batches of long texts ran slower.
MAX_BATCH = 16
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
Notice = Callable[[str], None]


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def chosen_backend(backend: str | None) -> str:
    """``backend``, or the environment's choice (:data:`BACKEND_ENV`), or ``auto``."""
    chosen = (backend or os.environ.get(BACKEND_ENV) or "auto").strip().lower()
    if chosen not in BACKENDS:
        raise GabaritoError(f"unknown encoder backend {chosen!r}; use one of {', '.join(BACKENDS)}")
    return chosen


def export_folder(encoder: Any) -> Path:
    """Where the export and its verdict live for this encoder (weights and fingerprint)."""
    model = encoder.model_id.replace("/", "__")
    return (cache_dir() / "onnx" / f"{model}-{encoder.weights_sha256[:16]}" / model_fingerprint(encoder)[:16])


def unsupported_reason(model: Any) -> str | None:
    """Why a loaded sentence-transformers model cannot run its transformer in ONNX (``None``: it can)."""
    try:
        modules = list(model)
    except TypeError:
        return "it is not a sentence-transformers model"
    first = modules[0] if modules else None
    if first is None or not hasattr(first, "auto_model") or type(first).__name__ != "Transformer":
        return "its first module is not a Transformer"
    if getattr(model, "default_prompt_name", None) or getattr(model, "truncate_dim", None):
        return "it has a default prompt or a truncation dimension"
    return None


class _Wrapped:
    """The transformer as a module taking positional tensors (what the exporter wants)."""

    def __new__(cls, transformer: Any, names: Sequence[str]):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.transformer = transformer

            def forward(self, *tensors):
                out = self.transformer(**dict(zip(names, tensors)), return_dict=True)
                return out.last_hidden_state

        return Wrapped().eval()


def export(encoder: Any) -> Path:
    """The fp32 ONNX export of ``encoder``'s transformer (made once, under a lock, atomically)."""
    folder = export_folder(encoder)
    target = folder / "model.onnx"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".export.lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if target.is_file():
            return target
        import torch

        model = encoder.model
        sample = model.preprocess(["an export sample", "a second, somewhat longer export sample text"])
        names = [k for k in _INPUTS if k in sample]
        fd, tmp = tempfile.mkstemp(prefix=".model.", suffix=".onnx", dir=folder)
        os.close(fd)
        try:
            with torch.inference_mode(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # tracer notes on branches the encoder never takes
                torch.onnx.export(_Wrapped(model[0].auto_model, names), tuple(sample[k] for k in names), tmp,
                                  input_names=names, output_names=["token_embeddings"],
                                  dynamic_axes={**{k: {0: "batch", 1: "tokens"} for k in names},
                                                "token_embeddings": {0: "batch", 1: "tokens"}},
                                  opset_version=OPSET, dynamo=False)
            os.chmod(tmp, file_mode())  # mkstemp made it 0600: follow the umask like every cache file
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        info = {"model_id": encoder.model_id, "weights_sha256": encoder.weights_sha256,
                "fingerprint": model_fingerprint(encoder), "opset": OPSET, "inputs": names,
                "torch": version("torch"), "onnx_sha256": sha256_file(target)}
        atomic_write_bytes(folder / "export.json", (json.dumps(info, indent=1) + "\n").encode())
    return target


def threads() -> int | None:
    raw = os.environ.get(THREADS_ENV)
    return int(raw) if raw else None


@dataclass
class OnnxTransformer:
    """An ONNX Runtime session for the transformer, and the encoding loop around it."""

    model: Any           # the loaded SentenceTransformer: tokeniser and the modules after the transformer
    path: Path
    intra_op_threads: int | None = None
    max_batch: int | None = MAX_BATCH  # None: the caller's batch size as it is (the benchmark)

    def __post_init__(self):
        import onnxruntime as ort

        options = ort.SessionOptions()
        if self.intra_op_threads:
            options.intra_op_num_threads = int(self.intra_op_threads)
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.sha256 = sha256_file(self.path)

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """Token count of each text (after truncation), what a batch pads to."""
        tokenizer = self.model.tokenizer
        limit = self.model.max_seq_length
        ids = tokenizer(list(texts), truncation=True, max_length=limit, add_special_tokens=True)["input_ids"]
        return [len(x) for x in ids]

    def _batch(self, texts: list[str]) -> np.ndarray:
        import torch

        features = self.model.preprocess(texts)
        feed = {k: np.asarray(features[k].numpy(), dtype=np.int64) for k in self.inputs}
        hidden = self.session.run(None, feed)[0]
        out = {"token_embeddings": torch.from_numpy(hidden), "attention_mask": features["attention_mask"]}
        with torch.inference_mode():
            for module in list(self.model)[1:]:
                out = module(out)
            vecs = torch.nn.functional.normalize(out["sentence_embedding"], p=2, dim=1)
        return vecs.numpy().astype(np.float32)

    def encode(self, texts: Sequence[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """Vectors of ``texts``, longest first in batches of at most ``min(batch_size, max_batch)``."""
        texts = list(texts)
        if not texts:
            get_dim = getattr(self.model, "get_embedding_dimension", None) or \
                self.model.get_sentence_embedding_dimension
            return np.zeros((0, int(get_dim())), dtype=np.float32)
        order = np.argsort([-n for n in self.lengths(texts)], kind="stable")
        out: np.ndarray | None = None
        step = max(1, min(int(batch_size), self.max_batch or int(batch_size)))
        from gabarito.progress import bar as progress_bar

        with progress_bar(total=len(texts), unit="text", desc="encoding", show=progress) as bar:
            for start in range(0, len(texts), step):
                rows = order[start:start + step]
                vecs = self._batch([texts[i] for i in rows])
                if out is None:
                    out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
                out[rows] = vecs
                bar.update(len(rows))
        return out


def provenance(runner: OnnxTransformer | None, verdict: dict | None) -> dict:
    """What the encoder's provenance says about the backend."""
    if runner is None:
        return {"backend": "torch", "torch": version("torch")}
    return {"backend": "onnxruntime", "onnxruntime": version("onnxruntime"), "onnx_sha256": runner.sha256,
            "threads": runner.intra_op_threads, "equivalence": {k: verdict[k] for k in
                                                              ("max_abs_delta", "top10_identical", "texts")}}
