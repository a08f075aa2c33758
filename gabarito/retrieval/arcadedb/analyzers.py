"""Lucene analyzers for the FULL_TEXT index, and escaping a question for Lucene's query parser."""

from __future__ import annotations

import re

from gabarito.errors import GabaritoError

_JAVA_CLASS = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)+\Z")
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_LUCENE_OPERATOR = re.compile(r"\b(AND|OR|NOT)\b")


# Short names for the Lucene analyzers bundled in the wheel's lucene-analysis-common jar.
# Any other fully qualified Analyzer class on the server's class path may be named as well.
ANALYZERS = {
    "standard": "org.apache.lucene.analysis.standard.StandardAnalyzer",
    "english": "org.apache.lucene.analysis.en.EnglishAnalyzer",
    "portuguese": "org.apache.lucene.analysis.pt.PortugueseAnalyzer",
    "brazilian": "org.apache.lucene.analysis.br.BrazilianAnalyzer",
    "spanish": "org.apache.lucene.analysis.es.SpanishAnalyzer",
}


def analyzer_class(analyzer: str | None) -> str | None:
    """The Lucene class for ``analyzer``: a short name from :data:`ANALYZERS` or a fully qualified
    class name; ``None`` stays ``None`` (ArcadeDB's default, the StandardAnalyzer).

    The name ends up in DDL text, so anything but a dotted Java class name is refused."""
    if analyzer is None:
        return None
    if not isinstance(analyzer, str):
        raise GabaritoError(f"analyzer must be text, not {type(analyzer).__name__}")
    name = ANALYZERS.get(analyzer.strip().lower(), analyzer.strip())
    if not _JAVA_CLASS.match(name):
        raise GabaritoError(f"analyzer {analyzer!r} is neither one of {sorted(ANALYZERS)} "
                            f"nor a fully qualified Java class name")
    return name


def lucene_escape(text: str) -> str:
    """Make ``text`` a plain bag of words for Lucene's query parser.

    Every query-syntax character (``+ - && || ! ( ) { } [ ] ^ " ~ * ? : \\ /``) is
    backslash-escaped and the operator words AND/OR/NOT are lower-cased, so a question such
    as ``what's (this)? a: "test" AND -x`` is searched as the words it contains.
    """
    text = _LUCENE_OPERATOR.sub(lambda m: m.group(1).lower(), text)
    return _LUCENE_SPECIAL.sub(r"\\\1", text)
