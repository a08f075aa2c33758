"""The run page (``relatorio.html``, written by ``gabarito evaluate``) and the comparison page
(``gabarito compare``): built from the run's Report and the library's findings, self-contained and
Portuguese (unit, on the help-center example with BM25 on the memory engine), and opened from
``file://`` in headless Chromium at 1280 and 390 px (integration)."""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gabarito.evaluation import findings
from gabarito.evaluation.compare import load_runs
from gabarito.evaluation.paired import score_records
from gabarito.measure import stats
from gabarito.measure.report import Report
from gabarito.publish import compare_page, run_page, verdicts
from gabarito.publish import formatting as fmt
from gabarito.study.integrity import MANIFEST, read_manifest, state

ROOT = Path(__file__).resolve().parents[2]
HELPCENTER = ROOT / "data" / "helpcenter"
SECTIONS = ("Resumo", "Pergunta por pergunta", "Erros por tipo e gravidade", "Perguntas sem resposta",
            "Configuração e procedência")


def gabarito(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GABARITO_CACHE_DIR": str(cwd / "cache"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gabarito.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, list[Path], str]:
    """Two BM25 runs of the help-center example (section and document segmentation): the log, the
    run folders and the first run's standard output."""
    if not (HELPCENTER / "docs").is_dir():
        pytest.skip("no help-center data")
    base = tmp_path_factory.mktemp("pages")
    log = base / "runs" / "log.jsonl"
    outs = []
    for extra in ([], ["--segmentation", "document"]):
        proc = gabarito(base, "evaluate", "--documents", str(HELPCENTER / "docs"), "--evaluation",
                        str(HELPCENTER / "evaluation.json"), "--method", "bm25", "--log", str(log), *extra)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    ids = [json.loads(line)["run_id"] for line in log.read_text(encoding="utf-8").splitlines()]
    return log, [log.parent / run_id for run_id in ids], outs[0]


def record(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))


def assert_self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>") and '<html lang="pt-BR">' in page
    assert "default-src &#x27;none&#x27;" in page  # the browser refuses any request beyond the file
    markup = re.sub(r"<script>.*?</script>", "<script></script>", page, flags=re.S)  # plotly.js's own strings aside
    assert "<script src" not in page and not re.search(r'(src|href)\s*=\s*["\']?(https?:|//)', markup)
    assert "<link" not in markup and "@import" not in markup and "<iframe" not in markup


def test_evaluate_writes_the_run_page_and_records_it(runs):
    _log, folders, stdout = runs
    for folder in folders:
        page = folder / run_page.PAGE
        assert page.is_file() and run_page.PAGE in read_manifest(folder / MANIFEST)
        assert state(page) is None  # recorded as written
    assert str(folders[0] / run_page.PAGE) in stdout


def test_the_run_page_states_the_reports_numbers_and_every_question(runs):
    _log, folders, _out = runs
    rec = record(folders[0])
    page = (folders[0] / run_page.PAGE).read_text(encoding="utf-8")
    assert_self_contained(page)
    for title in SECTIONS:
        assert f"<h2>{title}" in page
    report = Report.from_dict(rec["report"])
    summary = page.split('id="resumo"')[1].split("</table>")[0]
    for m in report.measures:
        assert f"{fmt.num(report.mean('run', m))}</td><td" in summary and fmt.ci(report.interval("run", m)) in summary
    for row in rec["per_query"]:
        assert html.escape(row["query"]) in page
    errors = page.split('id="erros-type"')[1].split("</table>")[0]
    for r in findings.error_rows(rec["per_query"], "type", ["exact", "paraphrase", "ambiguous", "typo", "code"]):
        assert f"{fmt.pct(r['top1'])}</td>" in errors
    v = findings.validated_threshold(rec["per_query"])
    assert fmt.num(v["chosen_on_first_half"]["threshold"], 3) in page
    assert fmt.short_hash(rec["git"]["commit"]) in page and rec["run_id"] in page
    assert "Seção (com títulos na frente)" in page or "seção (com títulos na frente)" in page


def test_the_run_page_escapes_questions_and_leaves_out_the_threshold_without_unanswerable(runs):
    _log, folders, _out = runs
    rec = record(folders[0])
    rec["per_query"] = [r for r in rec["per_query"] if r["answerable"]]
    rec["per_query"][0]["query"] = "Por que </script><b>isto</b> & aquilo?"
    page = run_page.build(rec)
    assert "Por que &lt;/script&gt;&lt;b&gt;isto&lt;/b&gt; &amp; aquilo?" in page and "<b>isto</b>" not in page
    assert "Perguntas sem resposta" not in page and "Resumo" in page


def test_changed_questions_gained_lost_and_moved():
    def row(qid, ranked, expected=("a",)):
        hit = bool(expected) and ranked[0] in expected
        return {"id": qid, "query": qid, "answerable": bool(expected), "expected": list(expected),
                "returned": [{"id": d, "score": 1.0} for d in ranked], "hit@1": hit if expected else None}
    base = {"per_query": [row("q1", "ab"), row("q2", "ba"), row("q3", "bca"), row("q4", "ab"), row("q5", "xy", ())]}
    other = {"per_query": [row("q1", "ba"), row("q2", "ab"), row("q3", "bac"), row("q4", "ab"), row("q5", "yx", ())]}
    got = {c["id"]: (c["change"], c["rank_a"], c["rank_b"]) for c in findings.changed_questions(base, other)}
    assert got == {"q1": ("lost", 1, 2), "q2": ("gained", 2, 1), "q3": ("moved", 3, 2)}


def test_compare_writes_the_comparison_page(runs, tmp_path):
    log, folders, _out = runs
    proc = gabarito(log.parent.parent, "compare", *map(str, folders))
    assert proc.returncode == 0, proc.stderr
    records = load_runs(list(map(str, folders)), log)
    default = compare_page.default_path(records, folders[0].parent)
    assert proc.stdout.rstrip().endswith(f"wrote {default}") and default.is_file()
    out = tmp_path / "cmp.html"
    proc = gabarito(log.parent.parent, "compare", *map(str, folders), "--measure", "nDCG@10", "--out", str(out),
                    "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["measure"] == "nDCG@10" and str(out) in proc.stderr
    page = out.read_text(encoding="utf-8")
    assert_self_contained(page)
    report, _labels = score_records(records, "nDCG@10")
    raw = {m: report.compare("#2", "#1", m).p for m in ("nDCG@10", "hit@1")}
    family = stats.holm(raw)  # Holm over every measure x pair the page tests
    for m in ("nDCG@10", "hit@1"):
        c = dataclasses.replace(report.compare("#2", "#1", m), p_holm=family[m])
        assert f"{verdicts.change_word(c)} em relação à referência em" in page
        assert f"Holm {verdicts.p_text(c.p_holm)}" in page and fmt.ci(c.ci, bare=True) in page  # beside Holm: "não ajustado"
    changed = findings.changed_questions(records[0], records[1])
    assert changed and page.count("o esperado mudou de posição</td>") == sum(c["change"] == "moved" for c in changed)
    settings = page.split('id="configuracoes"')[1].split("</table>")[0]
    assert "Recorte" in settings and "documento inteiro" in settings


def _cdp():
    spec = importlib.util.spec_from_file_location("cdp_pipe", ROOT / "tests" / "judging" / "cdp_pipe.py")
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


#: English words a page of these must not show a reader (its data aside: ids, file names).
ENGLISH = ("question", "expected", "returned", "threshold", "settings", "baseline", "better", "worse")


@pytest.mark.integration
def test_both_pages_render_offline_in_portuguese_and_fit_390_px(runs, artifacts):
    from browser import find_chromium

    chromium = find_chromium()
    if not chromium:
        pytest.skip("chromium is not installed")
    log, folders, _out = runs
    records = load_runs(list(map(str, folders)), log)
    pages = {"relatorio": folders[0] / run_page.PAGE, "comparacao": compare_page.default_path(records, folders[0].parent)}
    if not pages["comparacao"].is_file():
        compare_page.write(records, pages["comparacao"])
    for name, page in pages.items():
        for width, height in ((1280, 900), (390, 844)):
            with _cdp().Browser(chromium, width=width, height=height, timeout=60) as browser:
                browser.viewport(width, height, mobile=width < 600)
                browser.navigate(page.as_uri())
                browser.wait_for("document.readyState === 'complete' && document.querySelectorAll('h2').length > 2", 60)
                browser.wait_for("document.querySelectorAll('figure.gabarito-svg svg').length > 0", 30)
                time.sleep(0.5)
                assert browser.evaluate("document.documentElement.lang") == "pt-BR"
                assert browser.evaluate("document.documentElement.scrollWidth") <= width
                # the question of the per-question table is in view, whole, at this width
                box = browser.evaluate(
                    "(() => { const td = document.querySelector('table td'); const h = [...document.querySelectorAll('th')]"
                    ".find((t) => t.textContent.trim() === 'Pergunta'); const cell = h && h.closest('table')"
                    ".querySelector('tbody tr').children[[...h.parentNode.children].indexOf(h)]; const r = "
                    "cell.getBoundingClientRect(); return [r.left, r.right, r.width, cell.textContent.length]; })()")
                assert box[0] >= 0 and box[1] <= width and box[2] > 100 and box[3] > 10, box
                words = browser.evaluate("document.body.innerText").lower()
                assert "pergunta" in words and not [w for w in ENGLISH if re.search(rf"\b{w}\b", words)]
                browser.screenshot(artifacts / f"{name}-{width}.png")
                requested = browser.requested_urls()
        assert requested and all(u.startswith(("file:", "data:", "blob:")) for u in requested), requested


def _evaluation_tests():
    """The evaluation tests' small corpus and bag-of-words encoder (tests/evaluation/test_evaluation_run.py)."""
    path = ROOT / "tests" / "evaluation" / "test_evaluation_run.py"
    spec = importlib.util.spec_from_file_location("evaluation_run_tests", path)
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


def test_a_dense_run_page_names_its_model_fingerprint_and_reads_a_users_own_words(tmp_path):
    from gabarito.evaluation import EvalConfig, run_evaluation, write_run
    from gabarito.inputs.documents import load_documents, load_evaluation
    from gabarito.retrieval.models import EmbeddingCache

    ev = _evaluation_tests()
    docs_dir = tmp_path / "docs"
    docs_dir.mkdir()
    for name, body in ev.DOCS.items():
        (docs_dir / f"{name}.md").write_text(body, encoding="utf-8")
    (tmp_path / "evaluation.json").write_text(json.dumps(ev.QUERIES), encoding="utf-8")
    docs = load_documents(docs_dir)
    rec = run_evaluation(docs, load_evaluation(tmp_path / "evaluation.json", docs),
                         EvalConfig(method="dense", model=ev.FAKE_MODEL, engine="memory", k=5),
                         encoder=ev.FakeEncoder(), cache=EmbeddingCache(tmp_path / "emb"), echo=None)
    paths = write_run(rec, tmp_path / "runs" / rec["run_id"], tmp_path / "runs" / "log.jsonl")
    page = run_page.write(paths["json"].parent).read_text(encoding="utf-8")
    assert fmt.short_hash(rec["model"]["fingerprint"]) in page and ev.FAKE_MODEL in page
    assert "Analisador" not in page and "Constante do RRF" not in page  # settings a dense run did not use
    assert "Acerto@5" in page and "Perguntas sem resposta" in page  # k = 5; q6 has no answer
    rec = record(paths["json"].parent)
    rec["per_query"][0]["type"], rec["report"] = "perguntas-da-loja", None  # a user's own type; no Report
    page = run_page.build(rec)
    assert "<code>perguntas-da-loja</code>" in page and fmt.ci(rec["summary"]["top1"]["ci95"]) in page
