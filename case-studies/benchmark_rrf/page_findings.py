"""What the flagship chapter's tables and sentences read from this study's ``results.json``, beyond
the findings of :mod:`studies.benchmark_rrf.findings`: how the study measured (:func:`measurement`),
the gold sets' table rows (:func:`set_rows`), first-place hits by leakage band
(:func:`leakage_bands`), one set's questions (:func:`question_rows`, :func:`shone_alone_in`,
:func:`generic_targets_in`, :func:`overlap_halves_in`, :func:`lost_by_fusion`), the reproduction of
the published page (:func:`reproduction`), the statements the study sent (:func:`stored_queries`),
the timed stages (:func:`latency_medians`) and the single methods a sentence counts
(:func:`singles`). Values, keys and flags; the page writes the words.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gabarito.core.methods import Method
from studies.benchmark_rrf.findings import (fused_methods, generic_targets, hash_rows, methods, overlap_halves,
                                           shone_alone)


def singles(results: Mapping) -> list[Method]:
    """The single methods the study scored (the leaves among :func:`findings.methods`, in their
    order): what the page's "os dois métodos" counts."""
    return [m for m in methods(results) if m.kind == "leaf"]


def measurement(results: Mapping) -> dict:
    """How the study measured, as the method paragraph, "Como foi medido" and the summary table
    state it: ``k``, ``deep_k``, ``rrf_k``, ``resamples`` (bootstrap), ``text_fields``, ``ties`` (a
    note), ``date``, ``machine``; ``engine_version`` (the first word of ArcadeDB's version),
    ``engine_mode`` (a note); ``model_id``, ``dim``, ``weights_sha256``, ``origin`` of the vector
    model; ``corpus_name``, ``n_docs``, ``corpus_file``, ``corpus_sha256``."""
    prov = results["provenance"]
    params, engine, model, corpus = prov["parameters"], prov["engine"], prov["model"], prov["corpus"]
    return {"k": params["k"], "deep_k": params["deep_k"], "rrf_k": params["rrf_k"],
            "resamples": params["bootstrap_resamples"], "text_fields": list(params["text_fields"]),
            "ties": params["ties"], "date": prov["date"], "machine": prov["machine"],
            "engine_version": engine["version"].split()[0], "engine_mode": engine["mode"],
            "model_id": model["model_id"], "dim": model["dim"], "weights_sha256": model["weights_sha256"],
            "origin": model["origin"], "corpus_name": corpus["name"], "n_docs": corpus["n_docs"],
            "corpus_file": corpus["file"], "corpus_sha256": corpus["sha256"]}


def set_rows(results: Mapping) -> list[dict]:
    """Per gold set, in the results' order: ``set``, its questions (``n``), its frozen gold file
    (``gold_file``) and its leakage against the right concept: ``leakage`` (the mean),
    ``leakage_n`` (the questions it is measured on), ``leakage_zero`` (those sharing no stem);
    against the wrong concept BM25 prefers: ``wrong_mean`` (None when the set records none) and
    ``wrong_higher`` (the questions where the wrong one leaks more)."""
    out = []
    for name, block in results["sets"].items():
        lk = block["leakage"]
        expected, wrong = lk["expected"], lk["wrong"]
        out.append({"set": name, "n": block["n"], "gold_file": block["gold_file"], "leakage": expected["mean"],
                    "leakage_n": expected["n"], "leakage_zero": expected["zero"],
                    "wrong_mean": wrong["mean"] if wrong else None, "wrong_higher": lk["wrong_higher"]})
    return out


def leakage_bands(results: Mapping, methods: Sequence[str]) -> list[dict]:
    """Per gold set (in the results' order) and leakage band with questions (as BM25's bands store
    them): ``set``, the band's ``lo`` and ``hi``, ``closed`` (the band includes its upper end, a
    leakage of 1), its questions (``n``) and each of ``methods``' share of first-place hits there
    (``top1``)."""
    out = []
    for name, block in results["sets"].items():
        bands = block["leakage"]["recall1_by_band"]
        for i, band in enumerate(bands["bm25"]):
            if band["n"]:
                out.append({"set": name, "lo": band["lo"], "hi": band["hi"], "closed": band["hi"] >= 1,
                            "n": band["n"], "top1": {m: bands[m][i]["mean"] for m in methods}})
    return out


def question_rows(results: Mapping, name: str, methods: Sequence[str]) -> list[dict]:
    """The gold set ``name``'s questions in stored order: ``question``, ``gold`` (the right
    concept) and the rank each of ``methods`` gave it (``ranks``; None when outside its list)."""
    return [{"question": r["question"], "gold": r["gold"], "ranks": {m: r[m]["rank"] for m in methods}}
            for r in results["sets"][name]["per_question"]]


def shone_alone_in(results: Mapping, name: str, winner: str, loser: str, n: int = 3) -> list[Mapping]:
    """:func:`findings.shone_alone` over the questions of the gold set ``name``."""
    return shone_alone(results["sets"][name]["per_question"], winner, loser, n)


def generic_targets_in(results: Mapping, name: str, method: str) -> dict:
    """:func:`findings.generic_targets` over the questions of the gold set ``name``."""
    return generic_targets(results["sets"][name]["per_question"], method)


def overlap_halves_in(results: Mapping, name: str, sample: Mapping, methods: Sequence[str]) -> dict:
    """:func:`findings.overlap_halves` of the gold set ``name`` (its concepts drawn in ``sample``)."""
    return overlap_halves(results["sets"][name], sample, methods)


def lost_by_fusion(results: Mapping, name: str) -> tuple[list, list]:
    """In the gold set ``name``, the questions whose target one single method put in the top k and
    the fusion pushed out: fusing each list's top k (first), and fusing their top ``deep_k``
    (second)."""
    lost = results["sets"][name]["lost_by_fusion"]
    shallow, deep = fused_methods(results)
    return lost[shallow], lost[deep]


def reproduction(results: Mapping) -> dict:
    """What the reproduction of the published page states: the published run's ``date`` and
    ``engine`` (its name, before the first comma), ``title`` and ``section`` of the page; of the
    ranks, the questions (``n``), how many agree exactly per method (``agree``: ``bm25``,
    ``vector``, ``rrf``) and the list's ``cutoff``; of the metrics, how many were published
    (``n_metrics``) and fall inside our interval (``inside``); and ``metrics``, one row per
    published value: ``single`` (``bm25``, ``vector`` or ``fused``), ``measure``, ``published``,
    ``ours``, ``ci95``, ``inside``."""
    rep = results["reproduction"]
    source, ranks = rep["source"], rep["ranks"]
    run = source["published_run"]
    return {"date": run["date"], "engine": run["engine"].split(",")[0], "title": source["title"],
            "section": source["section"], "n": ranks["n"], "agree": dict(ranks["agree"]),
            "cutoff": ranks["cutoff"], "n_metrics": rep["n_metrics"], "inside": rep["inside"],
            "metrics": [{"single": c["method"].replace("rrf", "fused"), "measure": c["measure"],
                         "published": c["published"], "ours": c["ours"], "ci95": c["ci95"], "inside": c["inside"]}
                        for c in rep["metrics"]]}


def stored_queries(results: Mapping) -> dict:
    """The statements the study sent, as the page prints them: ``ddl`` (the schema's statements
    joined by ``;`` and a new line), ``bm25``, ``knn``, and the RRF's Python code (``rrf_python``)."""
    q = results["queries"]
    return {"ddl": ";\n".join(q["ddl"]), "bm25": q["bm25"], "knn": q["knn"], "rrf_python": q["rrf_python"]}


def latency_medians(results: Mapping) -> list[tuple[str, float]]:
    """``(stage, median in ms)`` of each timed stage with a median, in stored order (a page shows
    them only when :func:`findings.latency_valid`)."""
    return [(k, v["median"]) for k, v in results["latency_ms"].items() if isinstance(v, dict) and "median" in v]


def gold_hash_rows(results: Mapping, lock: Mapping) -> list[dict]:
    """:func:`findings.hash_rows` of the frozen gold files in ``lock`` against the hashes the
    results' provenance records."""
    return hash_rows(lock, results["provenance"])


def ann_rows(results: Mapping, names: Sequence[str]) -> list[dict]:
    """Per gold set of ``names``, the approximate vector index against the exact search: ``set``,
    the questions checked (``n_queries``), the mean and the lowest recall at k (``mean``, ``min``)
    and the questions whose top k is identical (``perfect``)."""
    return [{"set": s, **{x: results["sets"][s]["ann"][x] for x in ("n_queries", "mean", "min", "perfect")}}
            for s in names]


def vocabulary_measures(results: Mapping, samples: Mapping[str, Mapping], methods: Sequence[str]) -> dict:
    """The two measures of how much a question repeats its target's text, as the page's details
    show them, by name: ``overlap`` (whole content words found in the target's description:
    :func:`overlap_halves_in` of each gold set of ``samples``, ``{set: sample}``) and ``leakage``
    (stems found in the target's whole indexed text: :func:`leakage_bands`)."""
    return {"overlap": {s: overlap_halves_in(results, s, sample, methods) for s, sample in samples.items()},
            "leakage": leakage_bands(results, methods)}


def frozen_inputs(base) -> dict:
    """What the page states about the study's frozen inputs (read from the study folder ``base``):
    the two samples of concepts (``sample``, ``sample_extended``: ``{"n", "seed"}``), who wrote the
    gold and how (``gold``: ``{"author", "method", "relevance"}``, notes the labels render), when the
    gold and the protocols' gold were frozen (``frozen_at``, ``protocols_frozen_at``), the seed of the
    protocols' sample (``protocols_seed``) and each protocol's instructions (``protocols``:
    ``{set: instructions}``, for the sets :data:`PROTOCOL_SETS`)."""
    from pathlib import Path

    from gabarito.publish.provenance import load_json

    base = Path(base)
    sample, extended = load_json(base / "sample.json"), load_json(base / "sample_extended.json")
    gold = load_json(base / "questions.json")
    files = _protocol_files(base)
    return {"sample": {"n": sample["n"], "seed": sample["seed"]},
            "sample_extended": {"n": extended["n"], "seed": extended["seed"]},
            "gold": {k: gold[k] for k in ("author", "method", "relevance")},
            "frozen_at": load_json(base / "gold.lock.json")["frozen_at"],
            "protocols_frozen_at": load_json(base / "gold_protocols.lock.json")["frozen_at"],
            "protocols_seed": load_json(base / "protocols" / "sample.json")["seed"],
            "protocols": {s: load_json(base / f)["instructions"] for s, f in files.items()}}


#: The gold sets written under a protocol (their instructions are shown on the page).
PROTOCOL_SETS = ("name_only", "disjoint")


def _protocol_files(base) -> dict[str, str]:
    from pathlib import Path

    from gabarito.publish.provenance import load_results

    sets = load_results(Path(base))["sets"]
    return {s: sets[s]["gold_file"] for s in PROTOCOL_SETS}


def version_rows(vs: Mapping) -> list[dict]:
    """Per ArcadeDB version of ``version_sensitivity.json``, in its order: ``version``, the mode it
    ran in (``mode``: ``embedded`` or ``server``), its ranks equal to the published ones (``exact``),
    its top-10 lists equal to the newest version's (``identical_top10``) and its largest relative
    score difference from it (``max_rel_score_diff``)."""
    agree, newest = vs["comparison"]["agreement"], vs["versus_newest"]
    return [{"version": v, "mode": vs["runs"][v]["settings"]["mode"], "exact": agree[v]["exact"],
             "identical_top10": newest[v]["identical_top10"], "max_rel_score_diff": newest[v]["max_rel_score_diff"]}
            for v in vs["versions"]]
