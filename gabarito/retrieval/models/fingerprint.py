"""A model's fingerprint: everything about it that changes a document vector.

Two copies of a model with the same weights can still produce different vectors: another
pooling (``1_Pooling/config.json``: mean or cls), a ``Normalize`` module added or removed
(``modules.json``), another maximum length (``sentence_bert_config.json``), prompts
(``config_sentence_transformers.json``), another tokenizer. :func:`config_sha256` hashes every
configuration file of a model folder; :func:`model_fingerprint` combines it with the weights
sha256, the engine and the settings of the loaded model, and is what the vector cache and the
index reuse key on.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gabarito.hashing import sha256_file, sha256_text

#: Files that hold weights (hashed on their own, as ``weights_sha256``).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".onnx", ".h5", ".msgpack", ".ot", ".ckpt", ".gguf")
#: Files and folders that describe a model but never change what it computes.
_NOT_CONFIG = {"readme.md", ".gitattributes", "license", "license.txt", "license.md", "data_config.json",
               "train_script.py", "notice", "notice.txt"}
_OTHER_BACKENDS = {"onnx", "openvino", ".git", ".cache", "__pycache__"}


def config_files(folder: str | Path) -> list[Path]:
    """The configuration files of a model folder (sorted): every file but the weights, the
    documentation and other backends' exports (``onnx/``, ``openvino/``)."""
    folder = Path(folder)
    found = []
    for base, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _OTHER_BACKENDS)
        for name in files:
            low = name.lower()
            if low.endswith(WEIGHT_SUFFIXES) or low in _NOT_CONFIG or low.endswith(".md"):
                continue
            found.append(Path(base) / name)
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def config_sha256(folder: str | Path) -> str | None:
    """sha256 of a model folder's configuration files (names and contents); ``None`` when
    ``folder`` is not a folder (a single-file model: its weights hash covers everything)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    listing = {p.relative_to(folder).as_posix(): sha256_file(p) for p in config_files(folder)}
    return sha256_text(json.dumps(listing, sort_keys=True, separators=(",", ":")))


def _hub_folder(model_id: str) -> Path | None:
    """The local snapshot of a hub model, when the Hugging Face cache has one (no download)."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model_id, local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached, or huggingface_hub missing: nothing to hash
        return None


def _model_folder(encoder: Any) -> Path | None:
    source = getattr(encoder, "source", None)
    if source is None:
        return None
    if getattr(source, "origin", None) == "hub":
        return _hub_folder(source.model_id)
    location = Path(source.location)
    return location if location.is_dir() else None


def _plain(value: Any) -> Any:
    """A JSON-ready copy of a module's settings (anything else by its repr)."""
    try:
        return json.loads(json.dumps(value, sort_keys=True, default=repr))
    except (TypeError, ValueError):
        return repr(value)


def loaded_settings(model: Any) -> dict | None:
    """What a loaded sentence-transformers model will do to a text: its modules in order with
    their settings (pooling mode, normalisation, ...), maximum length, prompts and truncation.
    ``None`` for anything that is not a sentence-transformers model."""
    try:
        modules = list(model)
    except TypeError:
        return None
    if not modules or not hasattr(model, "max_seq_length"):
        return None
    described = []
    for module in modules:
        get = getattr(module, "get_config_dict", None)
        try:
            settings = _plain(get()) if callable(get) else None
        except Exception:  # noqa: BLE001 - a module that cannot describe itself: its type still counts
            settings = None
        described.append({"type": type(module).__name__, "settings": settings})
    return {"modules": described, "max_seq_length": _plain(getattr(model, "max_seq_length", None)),
            "prompts": _plain(getattr(model, "prompts", None)),
            "default_prompt_name": _plain(getattr(model, "default_prompt_name", None)),
            "truncate_dim": _plain(getattr(model, "truncate_dim", None))}


def fingerprint_parts(encoder: Any) -> dict:
    """The parts of :func:`model_fingerprint` (for provenance): model id, weights sha256, the
    configuration files' sha256, the engine and the loaded model's settings."""
    folder = _model_folder(encoder)
    return {
        "model_id": getattr(encoder, "model_id", None),
        "weights_sha256": getattr(encoder, "weights_sha256", None),
        "config_sha256": config_sha256(folder) if folder is not None else None,
        "engine": getattr(encoder, "engine", None) or type(encoder).__name__,
        "engine_version": getattr(encoder, "version", None),
        "settings": loaded_settings(getattr(encoder, "model", None)),
    }


def model_fingerprint(encoder: Any) -> str:
    """sha256 of everything about ``encoder`` that changes a document vector (see
    :func:`fingerprint_parts`). The document prefix is not part of it: the vector cache puts it
    in each text's key."""
    return sha256_text(json.dumps(fingerprint_parts(encoder), sort_keys=True, separators=(",", ":"),
                                  default=repr))
