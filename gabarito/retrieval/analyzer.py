"""ArcadeDB's default text analyzer, reproduced in Python: Lucene's ``StandardAnalyzer`` (UAX #29
word boundaries, lower case, no stop words), through the ``regex`` module's word boundaries.

The in-memory BM25 (:mod:`gabarito.retrieval.memory`) and the BM25 reference of the parity checks
(:mod:`gabarito.measure.parity`) tokenize with it. Tokens longer than 255 characters (which Lucene
splits) and emoji (which Lucene keeps) are the known differences; neither occurs in the classic
collections.
"""

from __future__ import annotations

from gabarito.errors import GabaritoError

_WORD_BREAK = None
_HAS_WORD_CHAR = None


def _patterns():
    global _WORD_BREAK, _HAS_WORD_CHAR
    if _WORD_BREAK is None:
        try:
            import regex
        except ImportError as exc:  # pragma: no cover - regex ships with transformers
            raise GabaritoError("the 'regex' package is needed for Lucene-like tokenization") from exc
        _WORD_BREAK = regex.compile(r"\b", flags=regex.WORD | regex.V1)
        _HAS_WORD_CHAR = regex.compile(r"[\p{L}\p{N}]")
    return _WORD_BREAK, _HAS_WORD_CHAR


def lucene_standard_tokens(text: str) -> list[str]:
    """Tokens as Lucene's ``StandardAnalyzer`` (no stop words) makes them: split at UAX #29 word
    boundaries, keep the segments holding a letter or digit, lower-case them.

    ``"Don't e-mail the U.S.A. 3.5"`` -> ``["don't", "e", "mail", "the", "u.s.a", "3.5"]``."""
    if not isinstance(text, str):
        raise GabaritoError(f"can only tokenize text, not {type(text).__name__}")
    breaks, word = _patterns()
    return [part.lower() for part in breaks.split(text) if word.search(part)]
