"""Issue 39: the files a page reads or a command trusts that no manifest covered (TREC runs, the
qrels copies and log under ``runs/``, the assessors' grades, the writers' packets, the guide a page
quotes) are recorded, and ``gabarito site`` / ``report`` refuse an edited or unrecorded one in one
line naming it, before any page runs; ``gabarito studies`` shows it.

Before (commit 8cbfe08's parent): an edited ``fusion/runs/adi.bm25.trec`` or
``judgments/grades/A/packet_03.json`` was published by ``gabarito site`` (exit 0) and ``gabarito
studies`` said the study was current.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_guard_files import edit, gabarito, pristine, project, refused, site_and_report_refuse, studies_line  # noqa: F401

from gabarito.study.integrity import GUARDED, MANIFEST, guarded_problems, path_matches

REPO = Path(__file__).resolve().parents[2]


def site(root: Path) -> subprocess.CompletedProcess:
    return gabarito(root, "site", "--root", str(root), "--renderer", "smalldocs", "--no-execute")


def test_an_edited_committed_trec_run_is_refused_by_site_and_report_and_shown_by_studies(project):
    run = project / "case-studies" / "fusion" / "runs" / "adi.bm25.trec"
    lines = run.read_text(encoding="utf-8").splitlines(keepends=True)
    first, second = lines[0].split(), lines[1].split()  # the two best documents of the first question swapped
    lines[0] = " ".join([*first[:2], second[2], *first[3:]]) + "\n"
    lines[1] = " ".join([*second[:2], first[2], *second[3:]]) + "\n"
    run.write_text("".join(lines), encoding="utf-8")
    site_and_report_refuse(project, "fusion/runs/adi.bm25.trec", "modified after its run")
    assert "runs/adi.bm25.trec: modified after its run" in studies_line(project, "fusion")


def test_an_edited_grades_file_is_refused_by_site_and_shown_by_studies(project):
    grades = project / "case-studies" / "judgments" / "grades" / "A" / "packet_03.json"
    edit(grades, '"grade": 0', '"grade": 2')
    line = refused(site(project), "judgments/grades/A/packet_03.json", "modified after its run")
    assert not (project / "_site").exists(), line
    assert "grades/A/packet_03.json: modified after its run" in studies_line(project, "judgments")


def test_an_edited_help_center_grade_and_packet_and_guide_are_refused_by_site(project):
    cases = {"helpcenter/judging/grades/notas-avaliador-B.json": ('"grade": 2', '"grade": 1'),
             "benchmark_rrf/protocols/packet_disjoint.json": ('"d01"', '"d1"'),
             "judgments/guia_de_avaliacao.md": ("2", "3")}
    for rel, (old, new) in cases.items():
        path = project / "case-studies" / rel
        before = path.read_bytes()
        edit(path, old, new)
        refused(site(project), rel, "modified after its run")
        path.write_bytes(before)


def test_an_unrecorded_run_file_and_an_unrecorded_grades_file_are_refused(project):
    extra = project / "case-studies" / "standard_collections" / "runs" / "adi.extra.trec"
    extra.write_text("1 Q0 1 1 1.0 x\n", encoding="utf-8")
    refused(site(project), "standard_collections/runs/adi.extra.trec", "unrecorded")
    assert "unrecorded" in studies_line(project, "standard_collections")
    extra.unlink()
    (project / "case-studies" / "judgments" / "grades" / "C" / MANIFEST).unlink()
    refused(site(project), "judgments/grades/C/packet_01.json", "unrecorded")


def test_a_frozen_qrels_file_counts_as_covered_but_not_once_edited(project):
    qrels = project / "case-studies" / "judgments" / "qrels" / "main.txt"
    assert list(guarded_problems(project / "case-studies" / "judgments")) == []
    qrels.write_text(qrels.read_text(encoding="utf-8") + "m01 0 extra 1\n", encoding="utf-8")
    refused(site(project), "judgments/qrels/main.txt", "judgments.lock.json")


def test_every_file_the_site_offers_for_download_is_guarded_and_recorded():
    """The downloads (runs/, qrels/ of every study) fall under GUARDED, and the committed tree holds
    none that its manifests or freeze manifests do not cover."""
    from gabarito.publish.provenance import all_downloads

    studies = REPO / "case-studies"
    downloads = [p for p in all_downloads(REPO) if studies in p.parents and p.name != MANIFEST
                 and {"runs", "qrels"} & set(p.relative_to(studies).parts)]
    assert downloads
    for path in downloads:
        assert any(path_matches(g, path.relative_to(studies).parts) for g in GUARDED), path
    assert list(guarded_problems(studies)) == []


def test_the_recording_script_checks_what_it_records(tmp_path):
    """scripts/record_inputs.py --check rescored every committed run to the means its results
    record and found nothing left to record."""
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "record_inputs.py"), "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "", proc.stdout  # everything is recorded: nothing left to check or record


@pytest.mark.parametrize("pattern,path,hit", [
    ("**/runs/**", "fusion/runs/adi.bm25.trec", True),
    ("**/runs/**", "fusion/results.json", False),
    ("**/protocols/packet_*.json", "benchmark_rrf/protocols/packet_disjoint.json", True),
    ("**/protocols/packet_*.json", "benchmark_rrf/protocols/sample.json", False),
])
def test_path_matches(pattern, path, hit):
    assert path_matches(pattern, tuple(path.split("/"))) is hit


def test_the_manifests_hold_no_file_twice():
    """The recording wrote new entries only: no manifest's entry names a file some freeze manifest holds."""
    from gabarito.study.integrity import frozen_files, read_manifest

    frozen = frozen_files(REPO / "case-studies")
    for manifest in (REPO / "case-studies").rglob(MANIFEST):
        for name in read_manifest(manifest):
            assert (manifest.parent / name) not in frozen, manifest.parent / name


def test_a_swapped_run_no_longer_scores_to_its_recorded_means(tmp_path):
    """What record_inputs.py checks before recording a run can fail: two documents of a question
    swapped give other means than the results record."""
    sys.path.insert(0, str(REPO / "scripts"))
    from record_inputs import STUDIES, check_means

    from gabarito.core.runs import Qrels
    from gabarito.errors import GabaritoError

    study = STUDIES / "benchmark_rrf"
    block = json.loads((study / "results.json").read_text(encoding="utf-8"))["sets"]["main"]
    qrels = Qrels.from_trec(study / "runs" / "qrels.main.txt")
    check_means(study / "runs" / "bm25.trec", qrels, block, "bm25")
    lines = (study / "runs" / "bm25.trec").read_text(encoding="utf-8").splitlines()
    a, b = lines[0].split(), lines[1].split()  # the first question's first two documents swapped
    lines[0], lines[1] = " ".join([*a[:2], b[2], *a[3:]]), " ".join([*b[:2], a[2], *b[3:]])
    swapped = tmp_path / "bm25.trec"
    swapped.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(GabaritoError, match="recorded in the results"):
        check_means(swapped, qrels, block, "bm25")
