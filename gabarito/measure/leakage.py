"""Leakage: how much of a question's vocabulary its writer took from the document it should find.

A question written by someone reading the expected document tends to reuse that document's
words, and a full-text index rewards exactly that. This module measures it, per question,
from text only (no search):

* **content words** are :func:`gabarito.inputs.gold.content_words` (lower-case alphabetic
  tokens of three letters or more; the tokenizer splits on anything that is not a letter, so
  ``Low_Cost`` gives ``low`` and ``cost``), minus a fuller English stop-word list
  (:data:`STOP_WORDS`: the gold rule's function words plus the Snowball English list);
* each word is reduced by the Snowball English stemmer (``communities`` and ``community``
  both become ``communiti``), and a text is represented by the *set* of its stems;
* ``leakage(question, text)`` is the share of the question's stems that occur in the
  text's stems. A question with no content word has leakage 0 by convention (nothing of
  it can have leaked), which keeps the value defined for every question.

The text compared is normally a concept's indexed text, :func:`indexed_text`: every field
of :data:`gabarito.inputs.corpus.SEARCH_FIELDS`, in that order, joined by spaces.
"""

from __future__ import annotations

import functools
from typing import Iterable, Mapping, Sequence

import snowballstemmer

from gabarito.errors import GabaritoError
from gabarito.inputs.corpus import SEARCH_FIELDS, Concept
from gabarito.inputs.gold import STOP_WORDS as RULE_STOP_WORDS
from gabarito.inputs.gold import content_words, rule_violations

#: The Snowball English stop list (https://snowballstem.org/algorithms/english/stop.txt),
#: written as the tokenizer sees it: contractions lose the apostrophe and their tail
#: (``isn't`` -> ``isn``; ``won't`` is left out, its ``won`` being also a content word), and
#: words shorter than three letters are already dropped.
SNOWBALL_STOP_WORDS = frozenset(
    """me my myself our ours ourselves you your yours yourself yourselves him his himself she
    her hers herself its itself they them their theirs themselves what which who whom this
    that these those are was were been being have has had having does did doing would
    should could ought isn aren wasn weren hasn haven hadn doesn don didn wouldn shan
    shouldn can cannot couldn mustn let here there when where why how all any both each few
    more most other some such nor not only own same than too very and but because until
    while for with about against between into through during before after above below from
    down out off over under again further then once the""".split()
)

#: Words that never count as content: the gold rule's list plus the Snowball English list.
STOP_WORDS = RULE_STOP_WORDS | SNOWBALL_STOP_WORDS

#: Default band edges for "Recall@1 by overlap band": [0, .25), [.25, .5), [.5, 1].
BANDS = (0.0, 0.25, 0.5, 1.0)


@functools.lru_cache(maxsize=1)
def _stemmer():
    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of one lower-case word."""
    return _stemmer().stemWord(word)


def stems(text: str) -> set[str]:
    """Stems of the content words of ``text`` (stop words removed before stemming)."""
    return {stem(w) for w in content_words(text) if w not in STOP_WORDS}


def shared_stems(question: str, text: str) -> set[str]:
    """Stems that the question and the text have in common."""
    return stems(question) & stems(text)


def leakage(question: str, text: str) -> float:
    """Share of the question's stems present in ``text`` (0.0 for a question with no content word)."""
    q = stems(question)
    return len(q & stems(text)) / len(q) if q else 0.0


def indexed_text(concept: Concept | Mapping[str, str]) -> str:
    """All indexed fields of a concept (a :class:`Concept` or its ``search_fields()`` mapping)."""
    fields = concept.search_fields() if isinstance(concept, Concept) else concept
    missing = [k for k in SEARCH_FIELDS if k not in fields]
    if missing:
        raise GabaritoError(f"indexed fields missing: {', '.join(missing)}")
    return " ".join(str(fields[k]) for k in SEARCH_FIELDS)


def _shown(question: str, found: set[str]) -> str:
    """``stem (question words)`` for each stem found, sorted, for messages."""
    words: dict[str, set[str]] = {}
    for w in content_words(question):
        if w not in STOP_WORDS and stem(w) in found:
            words.setdefault(stem(w), set()).add(w)
    return ", ".join(f"{s} ({'/'.join(sorted(words.get(s, ())))})" for s in sorted(found))


def name_stems(name: str, question: str) -> set[str]:
    """Stems of the concept ``name``'s words that the question repeats (catches inflections)."""
    return stems(name.replace("_", " ")) & stems(question)


def question_problems(name: str, question: str, text: str | None = None,
                      max_shared: int | None = None) -> list[str]:
    """What a protocol question breaks, as readable lines (empty list = it passes).

    Always: no content word of the concept name (:func:`gabarito.inputs.gold.rule_violations`)
    and no stem of one. With ``max_shared`` (the disjoint protocol): at most that many stems
    shared with ``text``, the concept's indexed text.
    """
    problems = []
    if not question or not question.strip():
        return ["empty question"]
    words = rule_violations(name, question)
    if words:
        problems.append(f"repeats name words: {', '.join(sorted(words))}")
    inflected = name_stems(name, question) - {stem(w) for w in words}
    if inflected:
        problems.append(f"repeats name stems: {_shown(question, inflected)}")
    if max_shared is not None:
        if text is None:
            raise GabaritoError("a shared-stem limit needs the concept's indexed text")
        shared = shared_stems(question, text)
        if len(shared) > max_shared:
            problems.append(f"shares {len(shared)} stems with the indexed text (at most "
                            f"{max_shared}): {_shown(question, shared)}")
    return problems


# --- bands and distributions ---------------------------------------------------------------

def _check_edges(edges: Sequence[float]) -> None:
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise GabaritoError(f"band edges must increase, got {list(edges)}")


def band_index(value: float, edges: Sequence[float] = BANDS) -> int:
    """Band of ``value``: ``i`` when ``edges[i] <= value < edges[i+1]``; the last band is closed."""
    _check_edges(edges)
    if not edges[0] <= value <= edges[-1]:
        raise GabaritoError(f"value {value} outside the bands [{edges[0]}, {edges[-1]}]")
    for i in range(len(edges) - 2):
        if value < edges[i + 1]:
            return i
    return len(edges) - 2


def band_labels(edges: Sequence[float] = BANDS) -> list[str]:
    """``['[0, 0.25)', '[0.25, 0.5)', '[0.5, 1]']`` for the default edges."""
    _check_edges(edges)
    last = len(edges) - 2
    return [f"[{edges[i]:g}, {edges[i + 1]:g}{']' if i == last else ')'}" for i in range(last + 1)]


def by_band(values: Sequence[float], outcomes: Sequence[float],
            edges: Sequence[float] = BANDS) -> list[dict]:
    """Mean outcome per band of ``values`` (e.g. Recall@1 by leakage band); ``None`` when empty."""
    if len(values) != len(outcomes):
        raise GabaritoError(f"{len(values)} values but {len(outcomes)} outcomes")
    groups: list[list[float]] = [[] for _ in range(len(edges) - 1)]
    for v, o in zip(values, outcomes):
        groups[band_index(v, edges)].append(float(o))
    return [{"band": label, "lo": edges[i], "hi": edges[i + 1], "n": len(g),
             "mean": (sum(g) / len(g)) if g else None}
            for i, (label, g) in enumerate(zip(band_labels(edges), groups))]


def distribution(values: Iterable[float], edges: Sequence[float] = BANDS) -> dict:
    """Summary of leakage values: n, mean, median, min, max, how many are 0, count per band."""
    vals = sorted(float(v) for v in values)
    if not vals:
        raise GabaritoError("no values to summarise")
    n = len(vals)
    median = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
    counts = [0] * (len(edges) - 1)
    for v in vals:
        counts[band_index(v, edges)] += 1
    return {"n": n, "mean": sum(vals) / n, "median": median, "min": vals[0], "max": vals[-1],
            "zero": sum(v == 0 for v in vals),
            "bands": [{"band": lab, "n": c} for lab, c in zip(band_labels(edges), counts)]}


# --- per gold set ------------------------------------------------------------------------

def leakage_rows(rows: Sequence[Mapping], texts: Mapping[str, str], wrong_from: str) -> list[dict]:
    """Per question: leakage against the expected concept's indexed text and against the
    best-scoring *wrong* concept, which is the first document of method ``wrong_from``'s list
    that is not the expected one (the wrong concept that method preferred).

    ``rows`` are :func:`gabarito.measure.per_question.per_question` rows (their ``top`` lists
    must hold at least two documents); ``texts`` maps a concept id to its indexed text.
    Returns ``[{"id", "gold", "leakage", "wrong", "wrong_leakage"}]``.
    """
    out = []
    for r in rows:
        top = r[wrong_from]["top"]
        wrong = next((d for d in top if d != r["gold"]), None)
        out.append({"id": r["id"], "gold": r["gold"], "leakage": leakage(r["question"], texts[r["gold"]]),
                    "wrong": wrong,
                    "wrong_leakage": leakage(r["question"], texts[wrong]) if wrong is not None else None})
    return out


def leakage_summary(rows: Sequence[Mapping], methods: Sequence[str], texts: Mapping[str, str], *,
                    wrong_from: str, edges: Sequence[float] = BANDS) -> dict:
    """One gold set's leakage: the distribution against the expected and the best wrong concept,
    how often the wrong one leaks more, and each method's Recall@1 by leakage band.

    Returns ``{"wrong_from", "edges", "expected": distribution, "wrong": distribution,
    "wrong_higher": n, "recall1_by_band": {method: by_band}, "per_question": leakage_rows}``.
    """
    per = leakage_rows(rows, texts, wrong_from)
    values = [x["leakage"] for x in per]
    wrong = [x["wrong_leakage"] for x in per if x["wrong_leakage"] is not None]
    hits = {m: [1.0 if r[m]["rank"] == 1 else 0.0 for r in rows] for m in methods}
    return {"wrong_from": wrong_from, "edges": list(edges), "expected": distribution(values, edges),
            "wrong": distribution(wrong, edges) if wrong else None,
            "wrong_higher": sum(x["wrong_leakage"] is not None and x["wrong_leakage"] > x["leakage"] for x in per),
            "recall1_by_band": {m: by_band(values, hits[m], edges) for m in methods},
            "per_question": per}
