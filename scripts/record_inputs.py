"""One-off: record the committed files a page reads or a command trusts that no manifest held.

    python scripts/record_inputs.py [--check]

Until 2026-12-07 the TREC runs, qrels copies and wall-time log under ``case-studies/*/runs/``, the
assessors' grades (``judgments/grades/*``, ``helpcenter/judging/grades/*``), the question writers'
packets (``benchmark_rrf/protocols/packet_*.json``) and the assessors' guide a page quotes
(``judgments/guia_de_avaliacao.md``) were in no manifest: an edit was published by ``gabarito
site``. The scripts that write them now record each one (:func:`gabarito.study.runner.record_written`,
``adjudicate.py``, ``freeze_qrels.py``, ``sample_protocols.py``); this script records the committed
ones through :func:`gabarito.study.integrity.record` after checking each against what produced it:

* a TREC run: its lists in the file's rank order scored by the library against its qrels, its means are the ones the study's
  results record for that method (every measure, to 1e-9);
* a qrels copy: the same judgments as the gold set it was made from;
* the wall-time log: the latest cold and warm runs the results record are the log's;
* the judgments' grades: A and B are the files whose sha256 the adjudication locks froze, and A, B
  and C still combine into the frozen ``judgments.json`` and ``judgments_known.json``
  (``freeze_qrels.py``'s own check);
* the help center's grades: every grade is the one ``round1/judgments.json`` (frozen) holds for its
  pair; the assessors' diaries (free text) are recorded unchecked;
* the packets: rebuilt from the recorded ``protocols/sample.json``, byte for byte;
* the guide: the sha256 that ``judgments_known.json`` (frozen) records.

No file but the manifests changes. ``--check`` only reports.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path

from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json, sha256_file
from gabarito.measure.metrics import evaluate, mean
from gabarito.study.check import trec_lists
from gabarito.study.integrity import MANIFEST, guarded_problems, read_manifest, record
from gabarito.study.records import now_iso

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ROOT / "case-studies"


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def gold_qrels(path: Path) -> Qrels:
    """The judgments of a gold file: TREC qrels, or a frozen question set (one expected concept each)."""
    if path.suffix == ".json":
        return Qrels.single({p["id"]: p["gold"] for p in _json(path)["pairs"]})
    return Qrels.from_trec(path)


def check_means(run_path: Path, qrels: Qrels, block: dict, method: str) -> None:
    """The run file scored by the library gives the means its study recorded for ``method``."""
    recorded = block["metrics"][method]
    ranked = {q: [doc for doc, _ in docs] for q, docs in trec_lists(run_path).items()}  # the file's own ranks:
    got = evaluate(Run(ranked, name=method), qrels, list(recorded))  # its 6-digit scores tie some documents
    for measure, value in recorded.items():
        if not math.isclose(mean(got[measure]), value, rel_tol=0, abs_tol=1e-9):
            raise GabaritoError(f"{measure} of {method}: {mean(got[measure])!r} scored, {value!r} recorded "
                                "in the results", path=run_path)


def same_qrels(path: Path, gold: Path) -> None:
    if dict(Qrels.from_trec(path)) != dict(gold_qrels(gold)):
        raise GabaritoError(f"not the judgments of {gold.relative_to(STUDIES)}", path=path)


def scored_set(study: Path, qrels_path: Path, block: dict, run_file, gold: Path | None = None) -> dict[Path, str]:
    """One scored block of a study's results: its qrels copy is the gold's judgments (``gold``), and
    each method's run file (``run_file(method)`` under ``runs/``), where there is one, scores to the
    means the block records."""
    out = {}
    if gold is not None:
        same_qrels(qrels_path, gold)
        out[qrels_path] = f"the judgments of {gold.relative_to(study).as_posix()}"
    qrels = Qrels.from_trec(qrels_path)
    for method in block["metrics"]:
        path = study / "runs" / run_file(method)
        if path.exists():
            check_means(path, qrels, block, method)
            out[path] = "scored again: the means results.json records"
    return out


def benchmark_runs() -> dict[Path, str]:
    from studies.benchmark_rrf.run_benchmark import last_by_state

    study = STUDIES / "benchmark_rrf"
    res = _json(study / "results.json")
    out = {}
    for key, block in res["sets"].items():
        out |= scored_set(study, study / "runs" / f"qrels.{key}.txt", block,
                          lambda m: f"{m.replace('@', '_at_')}.trec", study / block["gold_file"])
    log = study / "runs" / "wall_times.jsonl"
    if last_by_state(log) != res["timings"]["history"]:
        raise GabaritoError("its latest cold and warm runs are not the ones results.json records", path=log)
    out[log] = "its latest cold and warm runs are the ones results.json records"
    return out


def fusion_runs() -> dict[Path, str]:
    study = STUDIES / "fusion"
    out = {}
    for corpus, entry in _json(study / "results.json")["corpora"].items():
        for key, block in entry["sets"].items():
            out |= scored_set(study, study / "runs" / f"qrels.{corpus}.{key}.txt", block,
                              lambda m, c=corpus: f"{c}.{m}.trec", study / block["gold_file"])
    return out


def classic_runs() -> dict[Path, str]:
    study = STUDIES / "standard_collections"
    out = {}
    for name, block in _json(study / "results.json")["collections"].items():
        out |= scored_set(study, study / block["qrels_file"], block, lambda m, n=name: f"{n}.{m}.trec")
    return out


def judgments_grades() -> dict[Path, str]:
    from studies.judgments import freeze_qrels as fq

    here = STUDIES / "judgments"
    for lock in ("adjudication.lock.json", "adjudication_known.lock.json"):
        for rel, sha in _json(here / lock)["grades_sha256"].items():
            if sha256_file(here / rel) != sha:
                raise GabaritoError(f"not the grades frozen in {lock}", path=here / rel)
    expected, members = fq.gold()
    first = fq.first_round(expected)  # A, B and C combine into the frozen judgments.json
    if fq.frozen_state(first, fq.known_round(expected, first["pairs"]), members) == "new":  # else raises or matches
        raise GabaritoError("packet 21's grades are not frozen yet", path=here / fq.KNOWN_DOC)
    guide = here / "guia_de_avaliacao.md"
    if sha256_file(guide) != _json(here / fq.KNOWN_DOC)["guide_sha256"]:
        raise GabaritoError(f"not the guide whose sha256 {fq.KNOWN_DOC} records", path=guide)
    blind = set(_json(here / "blind_grades.lock.json")["files"]) if (here / "blind_grades.lock.json").exists() else set()
    out = {p: "combine into the frozen judgments (freeze_qrels.py's check)"
           for p in sorted((here / "grades").glob("*/packet_*.json")) if p.relative_to(here).as_posix() not in blind}
    out[guide] = f"the sha256 {fq.KNOWN_DOC} records"
    return out


def helpcenter_grades() -> dict[Path, str]:
    here = STUDIES / "helpcenter" / "judging"
    pairs = {p["pair"]: p for p in _json(here / "round1" / "judgments.json")["pairs"]}
    out = {}
    for path in sorted((here / "grades").glob("notas-avaliador-*.json")):
        who = path.stem.rsplit("-", 1)[1].lower()  # a, b, c: the field of each pair in judgments.json
        for i, rec in enumerate(_json(path)["grades"], start=1):
            if pairs.get(rec["pair"], {}).get(who) != rec["grade"]:
                raise GabaritoError(f"pair {rec['pair']}: grade {rec['grade']}, not the frozen one", path=path,
                                    record=i)
        out[path] = "every grade is the one round1/judgments.json (frozen) holds"
    for path in sorted((here / "grades").glob("*.md")):
        out[path] = "an assessor's diary (free text): recorded unchecked"
    return out


def protocol_packets() -> dict[Path, str]:
    from studies.benchmark_rrf.protocols.protocol_common import HERE, packets

    sample = HERE / "sample.json"
    if sample.name not in read_manifest(HERE / MANIFEST) or read_manifest(HERE / MANIFEST)[sample.name]["sha256"] != \
            sha256_file(sample):
        raise GabaritoError("the sample the packets come from is not the recorded one", path=sample)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, packet in packets(_json(sample), HERE).items():
            if atomic_write_json(Path(tmp) / name, packet).read_bytes() != (HERE / name).read_bytes():
                raise GabaritoError("not the packet sample_protocols.py builds from sample.json", path=HERE / name)
            out[HERE / name] = "rebuilt from the recorded sample.json, byte for byte"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check and report")
    args = ap.parse_args(argv)
    checked: dict[Path, str] = {}
    for step in (benchmark_runs, fusion_runs, classic_runs, judgments_grades, helpcenter_grades, protocol_packets):
        checked.update(step())
    when = now_iso()
    for path, why in guarded_problems(STUDIES):  # what site, report and studies would refuse
        how = checked.get(path)
        if how is None or not why.startswith("unrecorded"):
            print(f"{path.relative_to(ROOT)}: {why}; left as it is (nothing here checks it)")
            continue
        if not args.check:
            record(path, when=when)
        print(f"{path.relative_to(ROOT)}: {how}; {'checked' if args.check else 'recorded'}")
    return 0


if __name__ == "__main__":
    run_main(main)
