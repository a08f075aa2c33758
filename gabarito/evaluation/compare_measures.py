"""Which measures ``gabarito compare`` tests, whether the runs' lists are deep enough for them, and
the one Holm family they are corrected in.

* :func:`chosen_measures`: the measures named (``--measure`` repeated or as a comma list, each
  once), or by default :data:`SINGLE` (``RR@10``, ``hit@1``) and, when the questions have several
  relevant documents or graded judgments, :data:`gabarito.evaluation.rows.GRADED_DEFAULT` beside
  them; ``hit@1`` is always among them (its changes are the listed flips).
* :func:`depth_warnings`: a measure read from the ranked lists whose cutoff exceeds the documents
  a run searched its lists to (``run.json``'s ``ranked_lists.depth``) is refused in one line: it
  would be computed on a shorter list for that run than its name says. A measure with no cutoff
  is named at the shallowest run's depth (``AP`` -> ``AP@100``). A run written before runs
  recorded their depth is flagged per measure; so is a run whose scores tie (a dense run's cosines
  or a hybrid run's RRF sums alike) within the ranks the measures read.
* :func:`family_holm`: Holm's correction over every (measure, pair with the baseline) tested.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from gabarito.core.measures import Measure
from gabarito.core.runs import Qrels
from gabarito.errors import GabaritoError
from gabarito.evaluation.paired import FLIPS, parse_measure, rows_give
from gabarito.evaluation.rows import GRADED_DEFAULT
from gabarito.evaluation.runlog import QRELS_FILE
from gabarito.measure.stats import holm

#: The default measures when every question has one relevant document.
SINGLE = ("RR@10", "hit@1")


def run_depth(record: Mapping) -> int | None:
    """The documents each of the run's lists was searched to (None: a run written before runs
    recorded it)."""
    depth = (record.get("ranked_lists") or {}).get("depth")
    return int(depth) if isinstance(depth, int) and not isinstance(depth, bool) else None


def _graded(record: Mapping) -> bool:
    """Whether the run's judgments give a question several relevant documents or a grade above 1."""
    if any(len(r.get("expected") or ()) > 1 for r in record["per_query"]):
        return True
    folder = getattr(record, "folder", None)
    if folder is None or not record.get("trec") or not (folder / QRELS_FILE).is_file():
        return False
    from gabarito.evaluation.paired import verified

    qrels = Qrels.from_trec(verified(folder / QRELS_FILE))
    return any(g > 1 for grades in qrels.values() for g in grades.values())


def chosen_measures(records: Sequence[Mapping], given: str | Iterable[str] | None) -> list[Measure]:
    """The measures to test (see the module docstring), each once, ``hit@1`` last unless named."""
    if given is None:
        names = [*SINGLE[:1], *(GRADED_DEFAULT if _graded(records[0]) else ()), *SINGLE[1:]]
    else:
        items = [given] if isinstance(given, str) else list(given)
        names = [n.strip() for item in items for n in str(item).split(",") if n.strip()]
        if not names:
            raise GabaritoError("--measure names no measure")
    measures = list(dict.fromkeys(parse_measure(n) for n in names))
    return measures if FLIPS in measures else [*measures, FLIPS]


def named_at_depth(records: Sequence[Mapping], measures: Sequence[Measure]) -> list[Measure]:
    """``measures`` with each one that has no cutoff named at the shallowest run's depth."""
    depths = [run_depth(r) for r in records]
    out = []
    for m in measures:
        if m.cutoff is None:
            if None in depths:
                raise GabaritoError(f"measure {m} has no cutoff and run {records[depths.index(None)]['run_id']} "
                                    f"recorded no list depth; name one, e.g. {m.kind}@10")
            m = Measure.of(m.kind, min(depths))
        out.append(m)
    return list(dict.fromkeys(out))


def depth_warnings(records: Sequence[Mapping], measures: Sequence[Measure]) -> list[str]:
    """Refuse a measure deeper than a run's lists; the warnings for old runs and tied scores."""
    warnings = []
    for m in measures:
        if all(rows_give(m, rec) for rec in records):
            continue  # from the returned documents: no deeper than k
        for rec in records:
            depth = run_depth(rec)
            if depth is not None and m.cutoff > depth:
                raise GabaritoError(f"run {rec['run_id']} searched its lists to {depth} documents, so {m} would "
                                    f"be computed on a shorter list than its name says; compare on "
                                    f"{m.kind}@{depth} or evaluate again with --depth {m.cutoff}")
            if depth is None:
                chunks = (rec.get("ranked_lists") or {}).get("chunk_depth") or rec["config"].get("chunk_depth")
                warnings.append(f"{m}: run {rec['run_id']} recorded no list depth (its lists hold what "
                                f"{chunks} chunks gave); some may hold fewer than {m.cutoff} documents")
    deepest = max((m.cutoff for m in measures), default=0)
    for rec in records:
        tied = (rec.get("ranked_lists") or {}).get("ties") or {}
        if tied.get("first_rank") is not None and tied["first_rank"] <= deepest:
            warnings.append(f"{rec['run_id']}: in {tied['questions']} questions documents have equal scores (to 6 "
                            f"decimals), from rank {tied['first_rank']} on; their order among them is by document "
                            f"id, not by the search, and the measures down to rank {deepest} read it")
    return warnings


def family_holm(pairs: Sequence[Mapping]) -> None:
    """Set each test's ``p_holm`` to Holm's correction over every test of every pair (the family:
    measures x pairs), in place; ``holm_family`` says how many tests it holds."""
    raw = {(i, m): t["p_randomization"] for i, pair in enumerate(pairs) for m, t in pair["tests"].items()}
    adjusted = holm(raw) if raw else {}
    for (i, m), p in adjusted.items():
        pairs[i]["tests"][m]["p_holm"] = p
        pairs[i]["tests"][m]["holm_family"] = len(raw)
