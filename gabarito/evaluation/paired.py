"""The scores of several evaluation runs on the same questions, through the one scorer.

:func:`score_records` makes the :class:`~gabarito.measure.report.Report` of the runs being
compared (:func:`gabarito.measure.score.score_runs`: means, intervals, per-query values, paired
tests with Holm over the pairs of runs); its methods are the runs' positions ``#1`` (the
baseline), ``#2``, ... Each pair with the baseline is stored as (other run, baseline), so
:func:`pair_test` reads it through :meth:`Report.compare` with the difference ``other - baseline``.

Where the values come from:

* ``RR@n`` and ``hit@n`` with ``n`` up to every run's ``k``: the documents each per-question row
  of ``run.json`` returned, against its expected ids (what ``compare`` has always used);
* any other measure :class:`~gabarito.core.measures.Measure` parses (``nDCG@10``, ``R@100``,
  ``AP@100``, ``P@5``, ``RR@50``, ...): the ranked lists ``run.trec`` (as deep as the run searched)
  and the judgments ``qrels.trec`` each run wrote beside its ``run.json``, checked against the
  folder's manifest. A run without them (from the log alone, or written before they existed)
  cannot give such a measure: a one-line error says so. A run folder without a manifest is refused
  unless it is listed as older than manifests (:func:`verified`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from gabarito.core.measures import Measure
from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.evaluation.runlog import QRELS_FILE, RUN_FILE
from gabarito.measure import metrics
from gabarito.measure.report import Report
from gabarito.measure.score import per_query_values, score_runs
from gabarito.measure.stats import DEFAULT_SEED
from gabarito.study.integrity import LEGACY_ENV, MANIFEST, is_legacy
from gabarito.study.integrity import state as written_state

#: The measures a run record's rows give (from its returned documents and expected answers); any
#: other measure is computed from the run's ``run.trec`` and ``qrels.trec``.
COMPARED_KINDS = ("RR", "hit")


class LoadedRun(dict):
    """A run record as read, with ``folder``: the run folder it was read from (None: from the log
    alone, with no ranked lists)."""

    def __init__(self, data=(), *, folder: Path | None = None):
        super().__init__(data)
        self.folder = folder
        self.lists: tuple[Run, Qrels] | None = None  # its ranked lists and judgments, once read


def verified(path: Path) -> Path:
    """``path`` when its run folder's manifest records it unchanged, or when the folder is listed as
    written before manifests (:func:`gabarito.study.integrity.is_legacy`); else a one-line error
    naming the file. A missing manifest is refused: deleting it must not switch the check off."""
    if is_legacy(path.parent, user=True):
        return path
    if not (path.parent / MANIFEST).is_file():
        raise GabaritoError(f"its run folder has no {MANIFEST}, so nothing shows the run wrote it as it is: "
                            f"evaluate again, restore the manifest, or, for a folder older than manifests, "
                            f"list the folder in ${LEGACY_ENV}", path=path)
    why = written_state(path)
    if why == "missing":
        raise GabaritoError("file not found (its run recorded it)", path=path)
    if why is not None:
        raise GabaritoError(f"{why}: the run folder was changed after gabarito evaluate wrote it; "
                            f"evaluate again or restore the file", path=path)
    return path


#: The measure every comparison also reports (and whose changes are listed as flips).
FLIPS = Measure("hit@1")


def parse_measure(measure: str) -> Measure:
    """The measure named (:meth:`Measure.parse`, loosely: any case, ``MRR@n`` is ``RR@n``)."""
    try:
        return Measure.parse(measure, loose=True)
    except GabaritoError:
        raise GabaritoError(f"unknown measure {measure!r}; use RR@n, hit@n, nDCG@n, R@n, AP@n or P@n "
                            f"(e.g. RR@10, hit@1, nDCG@10)") from None


def uses_trec(records: Sequence[dict], measure: str) -> bool:
    """Whether :func:`score_records` reads ``measure`` from the runs' TREC files (not their rows)."""
    name = parse_measure(measure)
    return not all(rows_give(name, rec) for rec in records)


def rows_give(measure: Measure, record: dict) -> bool:
    """Whether the run's per-question rows give ``measure`` (RR@n or hit@n, ``n`` <= its ``k``)."""
    return (measure.kind in COMPARED_KINDS and measure.cutoff is not None
            and measure.cutoff <= int(record["config"]["k"]))


def measure_values(record: dict, measure: str) -> dict[str, float]:
    """``{query id: value}`` of ``RR@n`` or ``hit@n`` for the answerable queries of a run,
    recomputed from the returned documents by the scorer (:func:`gabarito.measure.score.per_query_values`)
    (``n`` may not exceed the run's ``k``)."""
    name = parse_measure(measure)
    if name.kind not in COMPARED_KINDS or name.cutoff is None:
        raise GabaritoError(f"the rows of a run give RR@n and hit@n only, not {name}")
    k = int(record["config"]["k"])
    if name.cutoff > k:
        raise GabaritoError(f"run {record['run_id']} kept only the top {k} documents, so it has no {name}; "
                            f"use --measure {name.kind}@{k} or less")
    rows = [r for r in record["per_query"] if r["answerable"]]
    run = {r["id"]: [x["id"] for x in r["returned"]] for r in rows}  # plain ids: the order as returned
    qrels = Qrels.from_lists({r["id"]: r["expected"] for r in rows})
    values = per_query_values({"run": run}, qrels, [name])["run"][name]
    return {r["id"]: values[r["id"]] for r in rows}


def ranked_lists(record: dict, measure: Measure) -> tuple[Run, Qrels]:
    """The run's ranked lists and judgments from the TREC files beside its ``run.json``, each
    checked against the folder's manifest; a one-line error when the run has none."""
    folder = getattr(record, "folder", None)
    if folder is None or not record.get("trec"):
        k = int(record["config"]["k"])
        hint = f"; RR@n and hit@n up to n={k} come from its rows" if measure.kind in COMPARED_KINDS else ""
        raise GabaritoError(f"run {record['run_id']} has no ranked lists (run.trec, qrels.trec beside its "
                            f"run.json), so it has no {measure}{hint}; evaluate again to get them")
    read = getattr(record, "lists", None)
    if read is None:
        read = (Run.from_trec(verified(folder / RUN_FILE), name=str(record["run_id"])),
                Qrels.from_trec(verified(folder / QRELS_FILE)))
        check_recorded_means(record, *read, path=folder / RUN_FILE)
        if isinstance(record, LoadedRun):
            record.lists = read  # read and checked once per comparison, whatever the measures
    return read


def check_recorded_means(record: dict, run: Run, qrels: Qrels, *, path: Path) -> None:
    """Refuse ranked lists that do not give the means the run recorded in its ``run.json`` (its
    ``report``): a second check, independent of the manifest (a file edited and its sha256 rewritten
    in the manifest). Skipped for a run without a report, or whose ``run.trec`` ranks some
    documents in another order than they were scored (:func:`reordered`)."""
    report = record.get("report")
    if not isinstance(report, dict) or (record.get("ranked_lists") or {}).get("order_as_scored") is False:
        return
    recorded = next(iter((report.get("metrics") or {}).values()), None)
    queries = report.get("queries")
    if not isinstance(recorded, dict) or not isinstance(queries, list) or not queries:
        return
    names = [m for m in report.get("measures", recorded) if isinstance(recorded.get(m), (int, float))]
    judged = set(qrels.judged())
    if not names:
        return
    if not judged.issuperset(queries):
        missing = sorted(set(queries) - judged)[:1]
        raise GabaritoError(f"qrels.trec does not judge the queries run.json recorded (e.g. {missing}): the folder "
                            f"was changed after its run; evaluate again", path=path.parent / QRELS_FILE)
    values = per_query_values({"run": run}, qrels, names)["run"]
    for m in names:
        now = metrics.mean([values[m][q] for q in queries])
        if abs(now - float(recorded[m])) > 1e-9:
            raise GabaritoError(f"run.trec does not give the means run.json recorded: {m} {now:.4f} vs "
                                f"{float(recorded[m]):.4f}; the folder was changed after its run (its manifest "
                                f"too): evaluate again", path=path)


def _from_rows(records: Sequence[dict]) -> tuple[dict, Qrels, list[str]]:
    lists = [{r["id"]: [x["id"] for x in r["returned"]] for r in rec["per_query"] if r["answerable"]}
             for rec in records]
    base = records[0]
    qids = list(lists[0])
    for rec, other in zip(records[1:], lists[1:]):
        if set(other) != set(qids):
            raise GabaritoError(f"runs {base['run_id']} and {rec['run_id']} cover different queries")
    qrels = Qrels.from_lists({r["id"]: r["expected"] for r in base["per_query"] if r["answerable"]})
    return dict(enumerate(lists)), qrels, qids


def _from_trec(records: Sequence[dict], measure: Measure) -> tuple[dict, Qrels, list[str]]:
    read = [ranked_lists(rec, measure) for rec in records]
    qrels = read[0][1]
    for rec, (_run, other) in zip(records[1:], read[1:]):
        if other != qrels:
            raise GabaritoError(f"runs {records[0]['run_id']} and {rec['run_id']} were scored against "
                                f"different judgments (qrels.trec)")
    judged = set(qrels.judged())
    qids = [r["id"] for r in records[0]["per_query"] if r["id"] in judged]
    if set(qids) != judged:
        raise GabaritoError(f"run {records[0]['run_id']}: its qrels.trec judges queries its rows do not hold")
    return {i: run for i, (run, _q) in enumerate(read)}, qrels, qids


def reordered(records: Sequence[dict]) -> list[str]:
    """A warning for each run whose ``run.trec`` ranks some documents in another order than they were
    scored (two scores equal to 6 decimals): a measure read from it may differ from its summary's."""
    return [f"{rec['run_id']}: its run.trec ranks some documents in another order than they were scored "
            f"(scores equal to 6 decimals); measures read from it may differ slightly from its summary"
            for rec in records if (rec.get("ranked_lists") or {}).get("order_as_scored") is False]


def score_records(records: Sequence[dict], measure: str, *, seed: int = DEFAULT_SEED) -> tuple[Report, list[str]]:
    """The :class:`Report` of ``records`` on ``measure`` and hit@1 (see the module docstring) and
    the runs' labels (``#1``, ``#2``, ...) in the records' order. The queries are resampled in the
    baseline's order (its rows' order, answerable or judged queries only); :func:`uses_trec` tells
    whether the values came from the TREC files."""
    name = parse_measure(measure)
    measures = list(dict.fromkeys([name, FLIPS]))
    if all(rows_give(name, rec) for rec in records):
        runs, qrels, qids = _from_rows(records)
    elif name.kind in COMPARED_KINDS and name.cutoff is not None and not all(
            getattr(rec, "folder", None) is not None and rec.get("trec") for rec in records):
        short = min(records, key=lambda rec: int(rec["config"]["k"]))
        k = int(short["config"]["k"])
        raise GabaritoError(f"run {short['run_id']} kept only the top {k} documents, so it has no {name}; "
                            f"use --measure {name.kind}@{k} or less")
    else:
        runs, qrels, qids = _from_trec(records, name)
    labels = [f"#{i}" for i in range(1, len(records) + 1)]
    stored = [*range(1, len(records)), 0]  # the baseline last: each pair with it is (other, baseline)
    report = score_runs({labels[i]: runs[i] for i in stored}, qrels, measures, seed=seed, order=qids)
    return report, labels


def pair_test(report: Report, other: str, baseline: str, measure: str) -> dict:
    """The paired test of ``other`` against ``baseline`` on ``measure``, read through
    :meth:`Report.compare`: ``mean_a`` is the baseline's mean, ``mean_b`` the other's, ``mean_diff``
    and ``ci95_diff`` are other - baseline, wins are the queries where the other run is higher."""
    c = report.compare(other, baseline, measure)
    return {"mean_a": c.mean_b, "mean_b": c.mean_a, "mean_diff": c.diff, "wins": c.wins, "losses": c.losses,
            "ties": c.ties, "p_sign": c.p_sign, "p_randomization": c.p, "p_holm": c.p_holm,
            "ci95_diff": None if c.ci is None else list(c.ci)}
