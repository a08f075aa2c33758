"""Comparing evaluation runs query by query: did a change help, and is that more than noise?

The first run is the baseline; every other run is compared with it on the answerable queries
(paired by query id). Runs judged against different gold are refused, since their numbers
do not measure the same thing. When a run differs from the baseline in more than one setting
(corpus, segmentation, model, ...), a warning says so: the difference cannot be credited to any
one of them. A setting a run does not use (``None``: the model of a BM25 run, the analyzer of a
dense run) does not count as a difference.

The runs are scored together by the one scorer (:func:`gabarito.measure.score.score_runs`, a
:class:`~gabarito.measure.report.Report` whose methods are the runs ``#1``, ``#2``, ...), on each
chosen measure (:mod:`gabarito.evaluation.compare_measures`: named, or chosen from the judgments)
and on hit@1: ``RR@n`` and ``hit@n`` (n up to the runs' ``k``) from the per-question rows of
``run.json``, any other measure ``Measure`` parses (``nDCG@10``, ``R@100``, ``AP@100``, ``P@5``,
``RR@50``...) from the ranked lists and judgments each run wrote beside it (``run.trec``,
``qrels.trec``), never deeper than every run searched its lists. Each pair is read through
:meth:`Report.compare`: wins (the other run scores higher than the baseline), losses and ties, an
exact two-sided sign test, a paired randomization test of the mean difference (fixed seed) and its
Holm-corrected p over every measure tested times every pair. ``flipped`` lists the queries whose
hit@1 changed.

A run folder written by ``gabarito evaluate`` records each file's sha256
(``results.sha256.json``, :mod:`gabarito.study.integrity`); a file changed since is refused in one
line naming it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Sequence


from gabarito.core.measures import Measure
from gabarito.errors import GabaritoError
from gabarito.evaluation.compare_measures import (chosen_measures, depth_warnings, family_holm, named_at_depth,
                                                  run_depth)
from gabarito.evaluation.paired import (COMPARED_KINDS, FLIPS, LoadedRun, measure_values, pair_test,
                                        reordered, score_records, uses_trec, verified)
from gabarito.evaluation.runlog import read_log, warn_damaged
from gabarito.inputs.textfiles import TOO_DEEP
from gabarito.measure import metrics
from gabarito.measure.report import Report
from gabarito.measure.stats import DEFAULT_SEED

__all__ = ["COMPARED_KINDS", "VARIABLES", "load_runs", "config_differences", "measure_values", "compare_runs",
           "format_comparison", "verified"]

#: The settings compared between runs (``corpus`` is the documents' content hash).
VARIABLES = ("corpus", "segmentation", "prefix_title", "model", "method", "engine", "analyzer", "k",
             "depth", "chunk_depth", "rrf_k", "fusion", "fusion_in", "reranker", "rerank_n", "rerank_fuse")
# --- loading ---------------------------------------------------------------------------------

def _read_json(path: Path) -> dict:
    verified(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GabaritoError(f"cannot read the run ({exc.strerror or exc})", path=path) from None
    except json.JSONDecodeError as exc:
        raise GabaritoError(f"invalid JSON at line {exc.lineno}: {exc.msg}", path=path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except RecursionError:
        raise GabaritoError(TOO_DEEP, path=path) from None
    return LoadedRun(_checked(record, path), folder=path.parent)


def _checked(record: object, where: object) -> dict:
    if not isinstance(record, dict) or not all(k in record for k in ("run_id", "config", "per_query",
                                                                       "evaluation_sha256")):
        raise GabaritoError("not a gabarito evaluate run record", path=where)
    return record


def _warn_stderr(text: str) -> None:
    print(f"gabarito: warning: {text}", file=sys.stderr, flush=True)


def load_runs(refs: Sequence[str], log_path: str | Path, *, warn: Callable[[str], None] = _warn_stderr) -> list[dict]:
    """The run records named by ``refs``, in order: each is the path of a ``run.json`` (or of
    the folder holding one), or a run id found in the JSONL log at ``log_path``. A damaged line
    of the log (cut short, not JSON) is skipped and reported through ``warn`` (one line on
    stderr by default): it cannot make the other runs of the log unreadable. A run id whose
    folder is beside the log (``<log folder>/<run id>/run.json``) is read from that folder, so
    that its files are checked against their manifest and its ranked lists can be used; a log
    record that differs from it is refused."""
    log_path = Path(log_path)
    logged: dict[str, list[dict]] | None = None
    records = []
    for ref in refs:
        path = Path(ref)
        if path.is_dir() and (path / "run.json").is_file():
            records.append(_read_json(path / "run.json"))
            continue
        if path.is_file():
            records.append(_read_json(path))
            continue
        if logged is None:
            logged = {}
            for _lineno, rec in read_log(log_path, warn_damaged(log_path, warn)):
                if "run_id" in rec:
                    logged.setdefault(str(rec["run_id"]), []).append(rec)
        found = logged.get(ref, [])
        if not found:
            where = f"in the log {log_path}" if log_path.is_file() else f"(no log at {log_path})"
            raise GabaritoError(f"no run {ref!r}: not a run.json file and not a run id {where}")
        if len(found) > 1:
            raise GabaritoError(f"run id {ref!r} appears {len(found)} times in the log; "
                                f"name its run.json instead", path=log_path)
        folder = log_path.parent / ref
        if (folder / "run.json").is_file():
            record = _read_json(folder / "run.json")
            if dict(record) != found[0]:
                raise GabaritoError(f"run {ref}: its record in the log differs from {folder / 'run.json'}; one of "
                                    f"them was changed after the run", path=log_path)
            records.append(record)
        else:
            records.append(LoadedRun(_checked(found[0], log_path)))
    return records


# --- comparing -------------------------------------------------------------------------------

#: Settings recorded beside the config, each named only when the setting it refines is the same
#: in both runs (another model id already implies other weights and another fingerprint).
DETAILS = {"model_settings": "model", "encoder_backend": "model", "engine_version": "engine",
           "reranker_weights": "reranker"}


def run_settings(record: dict) -> dict:
    cfg = record["config"]
    model, engine = record.get("model") or {}, record.get("engine") or {}
    reranker = record.get("reranker") or {}
    out = {"corpus": record.get("corpus_sha256"), **{v: cfg.get(v) for v in VARIABLES if v != "corpus"}}
    out["depth"] = run_depth(record)  # the documents each list holds, as searched (None: not recorded)
    out.update(model_settings=model.get("fingerprint"), encoder_backend=model.get("backend"),
               engine_version=engine.get("version"), reranker_weights=reranker.get("weights_sha256"))
    return out


def config_differences(a: dict, b: dict) -> list[str]:
    """The settings that differ between two run records: those of :data:`VARIABLES`, then the
    recorded details (:data:`DETAILS`: the model's fingerprint -- weights and every setting that
    changes a vector, such as its pooling --, the encoder backend, the engine's version, the
    reader's weights) when the setting they refine is the same. A setting that one of them does
    not use or did not record (``None``) does not count."""
    sa, sb = run_settings(a), run_settings(b)
    differ = [v for v in (*VARIABLES, *DETAILS) if sa[v] is not None and sb[v] is not None and sa[v] != sb[v]]
    return [v for v in differ if DETAILS.get(v) not in differ]


def _leaves(value: object, path: str = "") -> dict[str, object]:
    """``{dotted path: value}`` of the scalars of a JSON value (list items by position)."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _leaves(item, f"{path}.{key}" if path else str(key)).items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _leaves(item, f"{path}[{i}]").items()}
    return {path: value}


def setting_details(a: dict, b: dict, limit: int = 3) -> list[str]:
    """What differs in the models' recorded settings (pooling, normalisation, maximum length,
    prompts), as ``path: a -> b``, at most ``limit`` of them; empty when either run did not record
    them."""
    sa, sb = (a.get("model") or {}).get("settings"), (b.get("model") or {}).get("settings")
    if not isinstance(sa, dict) or not isinstance(sb, dict):
        return []
    la, lb = _leaves(sa), _leaves(sb)
    keys = [k for k in (*la, *(k for k in lb if k not in la)) if la.get(k) != lb.get(k)]
    return [f"{k}: {la.get(k)!r} -> {lb.get(k)!r}" for k in keys[:limit]]


def check_consistent(record: dict, means: dict[str, float | None]) -> None:
    """Refuse a run record whose per-question rows no longer give the summary the run wrote:
    ``means`` holds ``top1`` and ``mrr`` recomputed from the returned documents. A record edited
    after its run would otherwise be compared as if it were measured."""
    summary = record.get("summary") or {}
    for key in ("top1", "mrr"):
        entry = summary.get(key)
        recorded = entry.get("value") if isinstance(entry, dict) else None
        if recorded is None or means.get(key) is None:
            continue
        if abs(means[key] - float(recorded)) > 1e-9:
            raise GabaritoError(f"run {record['run_id']}: its per-question rows give {key} {means[key]:.4f}, but "
                                f"the run recorded {float(recorded):.4f}; the record was changed after the run")


def _run_row(record: dict, reports: dict[str, Report], label: str) -> dict:
    """One line of the side-by-side table: top-n and MRR recomputed from the per-query rows, each
    chosen measure's mean from its report."""
    cfg, k = record["config"], int(record["config"]["k"])

    def mean(measure: Measure) -> float | None:
        if measure.cutoff > k:
            return None
        return metrics.mean(measure_values(record, measure))

    means = {"top1": mean(Measure.of("hit", 1)), "top3": mean(Measure.of("hit", 3)), "top5": mean(Measure.of("hit", 5)),
             "mrr": mean(Measure.of("RR", k))}
    check_consistent(record, means)
    first = next(iter(reports))
    return {"run_id": record["run_id"], "label": cfg.get("label", ""), "date": record.get("date"),
            "settings": run_settings(record), "depth": run_depth(record),
            "n_answerable": len(reports[first].values(label, first)), **means,
            "measure": reports[first].mean(label, first),
            "measures": {m: rep.mean(label, m) for m, rep in reports.items()}}


def _flips(base: dict, other: dict, report: Report, labels: tuple[str, str], name: str,
           values: Report | None = None) -> list[dict]:
    """The queries whose hit@1 (from ``report``) changed from the baseline to the other run, with
    both runs' values of ``name`` (from ``values``, else ``report``)."""
    base_rows = {r["id"]: r for r in base["per_query"]}
    other_rows = {r["id"]: r for r in other["per_query"]}
    (la, lb), flipped = labels, []
    hits_a, hits_b = report.values(la, FLIPS), report.values(lb, FLIPS)
    values = values if values is not None else report
    values_a, values_b = values.values(la, name), values.values(lb, name)
    for q in report.queries:
        a, b = hits_a[q], hits_b[q]
        if a != b:
            ra, rb = base_rows[q], other_rows[q]
            flipped.append({
                "id": q, "query": ra["query"], "expected": ra["expected"],
                "change": "gained" if b > a else "lost",
                "top_a": ra["returned"][0]["id"] if ra["returned"] else "",
                "top_b": rb["returned"][0]["id"] if rb["returned"] else "",
                f"{name}_a": values_a[q], f"{name}_b": values_b[q],
            })
    return flipped


def compare_runs(records: Sequence[dict], measures: str | Sequence[str] | None = None, *,
                 seed: int = DEFAULT_SEED) -> dict:
    """Compare every run with the first one (see the module docstring).

    ``measures``: a name, a comma list or a list of names (None: chosen from the judgments,
    :func:`~gabarito.evaluation.compare_measures.chosen_measures`); hit@1 is always tested. Returns
    ``{"measures", "measure"`` (the first), ``"baseline", "runs": [...], "warnings": [...], "pairs":
    [...], "labels"}``; each pair holds ``changed`` (the settings that differ), ``n`` (queries
    compared), ``tests`` (``{measure: {...}}`` with means, wins/losses/ties, ``p_sign``,
    ``p_randomization`` and ``p_holm``, Holm over every measure x pair, from
    :func:`gabarito.evaluation.paired.pair_test`) and ``flipped`` (queries whose hit@1 changed,
    ``gained`` or ``lost``); ``labels`` maps the methods of the runs' reports (``#1``, ...) to the run ids.
    """
    records = list(records)
    if len(records) < 2:
        raise GabaritoError("compare needs at least two runs")
    base = records[0]
    for other in records[1:]:
        if other["evaluation_sha256"] != base["evaluation_sha256"]:
            raise GabaritoError(f"runs judged against different gold: {base['run_id']} and {other['run_id']} "
                                f"have different evaluation hashes ({base['evaluation_sha256'][:12]}... vs "
                                f"{other['evaluation_sha256'][:12]}...)")
    names = named_at_depth(records, chosen_measures(records, measures))
    warnings = depth_warnings(records, names)
    # each measure scored alone (with hit@1), from the rows or the ranked lists as it needs
    reports = {str(m): score_records(records, m, seed=seed)[0] for m in names}
    labels = [f"#{i}" for i in range(1, len(records) + 1)]
    if any(uses_trec(records, m) for m in names):
        warnings += reordered(records)
    pairs = []
    for label, other in zip(labels[1:], records[1:]):
        changed = config_differences(base, other)
        if len(changed) > 1:
            warnings.append(f"{other['run_id']} differs from {base['run_id']} in {len(changed)} settings "
                            f"({', '.join(changed)}): a difference cannot be credited to any one of them")
        if not changed:
            warnings.append(f"{other['run_id']} has the same settings as {base['run_id']}: differences are "
                            f"run-to-run variation (or code changes)")
        details = setting_details(base, other) if "model_settings" in changed else []
        flips = reports[str(FLIPS)]
        pairs.append({"a": base["run_id"], "b": other["run_id"], "changed": changed, "model_settings": details,
                      "n": flips.n, "tests": {m: pair_test(rep, label, labels[0], m) for m, rep in reports.items()},
                      "flipped": _flips(base, other, flips, (labels[0], label), str(names[0]),
                                         reports[str(names[0])])})
    family_holm(pairs)
    return {"measures": [str(m) for m in names], "measure": str(names[0]), "baseline": base["run_id"],
            "runs": [_run_row(r, reports, label) for label, r in zip(labels, records)],
            "warnings": warnings, "pairs": pairs, "labels": {label: r["run_id"] for label, r in zip(labels, records)}}


# --- printing --------------------------------------------------------------------------------

def _num(x: float | None, width: int = 6) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:>{width}.3f}"


def format_comparison(result: dict) -> str:
    """A plain-text table of a :func:`compare_runs` result."""
    names = [m for m in result.get("measures", [result["measure"]]) if m != str(FLIPS)]
    runs = result["runs"]
    setting_cols = ("method", "engine", "segmentation", "model", "analyzer", "k", "depth")
    header = ["#", "run", "label", *setting_cols]
    table = []
    for i, r in enumerate(runs, start=1):
        s = r["settings"]
        model = s["model"].rsplit("/", 1)[-1] if s["model"] else "-"
        table.append([str(i), r["run_id"], r["label"] or "-", s["method"], s["engine"], s["segmentation"]
                      + ("" if s["prefix_title"] else "/no-title"), model, s["analyzer"] or "-", str(s["k"]),
                      str(r.get("depth") or "?")])
    widths = [max(len(h), *(len(row[c]) for row in table)) for c, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    lines = [line(header), *(line(row) for row in table), ""]
    lines.append(f"{'#':<3}{'n':>5}{'top1':>8}{'top3':>8}{'top5':>8}{'MRR':>8}" + "".join(f"{m:>10}" for m in names))
    for i, r in enumerate(runs, start=1):
        means = r.get("measures") or {result["measure"]: r["measure"]}
        lines.append(f"{i:<3}{r['n_answerable']:>5}  {_num(r['top1'])}  {_num(r['top3'])}  {_num(r['top5'])}  "
                     f"{_num(r['mrr'])}" + "".join(f"    {_num(means.get(m))}" for m in names))
    if any(r.get("depth") is None for r in runs) or len({r.get("depth") for r in runs}) > 1:
        lines.append("depth: the documents each run's lists hold (? = not recorded); a measure reads no deeper "
                     "than every run's")
    for j, pair in enumerate(result["pairs"], start=2):
        lines += ["", (f"#{j} vs #1 ({pair['b']} vs {pair['a']}), {pair['n']} answerable queries; "
                       f"changed: {', '.join(pair['changed']) or 'nothing'}")]
        lines += [f"  model setting {d}" for d in pair.get("model_settings", [])]
        for m, t in pair["tests"].items():
            lines.append(f"  {m:<7} {t['mean_a']:.3f} -> {t['mean_b']:.3f} ({t['mean_diff']:+.3f}); "
                         f"better on {t['wins']}, worse on {t['losses']}, tied on {t['ties']}; "
                         f"sign test p={t['p_sign']:.3g}, randomization p={t['p_randomization']:.3g}, "
                         f"Holm p={t['p_holm']:.3g} (over {t.get('holm_family', 1)} tests)")
        if pair["flipped"]:
            lines.append(f"  hit@1 flipped on {len(pair['flipped'])} queries:")
            for f in pair["flipped"]:
                lines.append(f"    {f['change']:<6} {f['id']}: {f['query'][:60]!r} expected "
                             f"{', '.join(f['expected'])}; top {f['top_a'] or '-'} -> {f['top_b'] or '-'}")
        else:
            lines.append("  hit@1 flipped on no query")
    return "\n".join(lines)
