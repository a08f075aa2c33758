"""The two BM25 engines of ``gabarito evaluate``, as the evaluate chapter states it: functions of
``bm25_alignment.json`` (written by ``bm25_alignment.py``)."""

from __future__ import annotations

from typing import Mapping

from gabarito.errors import GabaritoError

#: the engines the measurement compares: the reference and the memory engine before and after alignment
REFERENCE, BEFORE, ALIGNED = "arcadedb", "memory_before", "memory_aligned"
#: the measure the chapter quotes for each engine
MEASURE = "RR@10"


def engines_agreement(alignment: Mapping) -> dict:
    """The collection and its number of questions; per memory flavour (``before``: a repeated
    question word counted per occurrence; ``aligned``: as ArcadeDB counts it, what ``evaluate``
    runs now) how many questions get ArcadeDB's very top 10 and its mean ``MEASURE``; the
    reference's mean ``MEASURE``; ``engines``, the engines ``evaluate`` offers, as the measurement names them (the reference
    and the memory engine as it runs now; both checked present above)."""
    agreement, metrics = alignment.get("agreement") or {}, ((alignment.get("report") or {}).get("metrics") or {})
    missing = [key for key in (BEFORE, ALIGNED) if key not in agreement] + \
              [key for key in (REFERENCE, BEFORE, ALIGNED) if MEASURE not in (metrics.get(key) or {})]
    if missing or alignment.get("reference") != REFERENCE:
        raise GabaritoError(f"does not hold the alignment measurement ({', '.join(missing) or 'reference'}); "
                            "rerun case-studies/peers/bm25_alignment.py", path="bm25_alignment.json")
    flavour = {key: {"identical_top10": agreement[key]["identical_topk"], "n_queries": agreement[key]["n_queries"],
                     "mean": metrics[key][MEASURE]} for key in (BEFORE, ALIGNED)}
    return {"collection": alignment["collection"], "questions": alignment["questions"],
            "repeated_word": alignment["questions_with_a_repeated_word"], "measure": MEASURE,
            "reference_mean": metrics[REFERENCE][MEASURE], "before": flavour[BEFORE], "aligned": flavour[ALIGNED],
            "all_identical": flavour[ALIGNED]["identical_top10"] == flavour[ALIGNED]["n_queries"],
            "engines": [REFERENCE, ALIGNED]}
