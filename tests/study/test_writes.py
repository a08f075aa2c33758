"""Every file a page reads is declared by a study.json (the study's results, a variant's, or a
``writes`` entry), so that ``gabarito studies`` can say whether it is current, stale or modified."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gabarito import cli
from gabarito.errors import GabaritoError
from gabarito.hashing import sha256_file
from gabarito.inputs.gold import freeze
from gabarito.study.records import write_measurement
from gabarito.study.spec import StudySpec, all_studies

REPO = Path(__file__).resolve().parents[2]
#: results files no study.json named before the ``writes`` field, each read by a page
ONCE_UNDECLARED = ("benchmark_rrf/version_sensitivity.json", "helpcenter/perf.json", "peers/vectors.json",
                   "peers/encoders.json", "peers/budget.json", "standard_collections/scaling.json")


def page_reads(notebook: Path) -> set[Path]:
    """The files under ``case-studies/`` that a notebook's code opens: ``load_results(D)``,
    ``load_results(D, "x.json")`` and any ``D / "a" / "b.json"`` where ``D`` names a study folder,
    and the ``case-studies/<study>/<file>`` it cites as a source."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    base = notebook.parent
    folders = {var: (base / rel).resolve() for var, rel in re.findall(r'^(\w+) = Path\("([^"]*case-studies[^"]*)"\)',
                                                                       code, flags=re.M)}
    for var, parent, part in re.findall(r'^(\w+) = (\w+) / "(\w+)"$', code, flags=re.M):
        if parent in folders and (folders[parent] / part).is_dir():
            folders[var] = folders[parent] / part
    out = set()
    for var, rest in re.findall(r"""\b(\w+)((?:\s*/\s*(?:"[^"]+"|'[^']+'))+)""", code):
        if var in folders:
            out.add(folders[var].joinpath(*re.findall(r"""["']([^"']+)["']""", rest)))
    for var, name in re.findall(r'load_results\((\w+)(?:,\s*"([^"]+)")?\)', code):
        if var in folders:
            out.add(folders[var] / (name or "results.json"))
    out |= {(REPO / rel).resolve() for rel in re.findall(r'"(case-studies/[\w/.-]+\.json)"', code)}
    return {p for p in out if p.suffix == ".json" and p.exists()}


def declared(studies: dict[str, StudySpec]) -> set[Path]:
    out = set()
    for study in studies.values():
        out |= {spec.results_path.resolve() for spec in (study, *map(study.variant, study.variants))}
        out |= {(study.dir / rel).resolve() for _, rel in study.written()}
    return out


def gold_and_manifests(studies: dict[str, StudySpec]) -> set[Path]:
    """The frozen gold each study is judged on (checked before any run) and freeze manifests."""
    out = {p.resolve() for p in (REPO / "case-studies").rglob("*.lock.json")}
    for study in studies.values():
        out |= {(study.dir / rel).resolve() for rel in study.verify_gold()}
    return out


def test_every_results_file_a_page_reads_is_declared_by_a_study():
    studies = all_studies()
    pages = sorted((REPO / "notebooks").glob("*.ipynb")) + [REPO / "index.ipynb"]
    reads = {p: page for page in pages for p in page_reads(page)}
    assert {(REPO / "case-studies" / rel).resolve() for rel in ONCE_UNDECLARED} <= set(reads)
    missing = sorted(f"{p.relative_to(REPO)} (read by {reads[p].name})"
                     for p in set(reads) - gold_and_manifests(studies) - declared(studies))
    assert not missing, "declare the script that writes each in its study.json ('writes'): " + "; ".join(missing)


def test_gabarito_studies_shows_the_once_undeclared_files_as_current():
    done = subprocess.run([sys.executable, "-m", "gabarito.cli", "studies"], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    for rel in ONCE_UNDECLARED:
        assert rel in rows and rows[rel].split()[1] == "current", done.stdout
        assert "(written by " in rows[rel]


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    """A study whose benchmark writes a measurement, and whose gold preparation is frozen."""
    study = tmp_path / "toy"
    study.mkdir()
    (study / "questions.json").write_text('[{"q": "a"}]', encoding="utf-8")
    (study / "pool.json").write_text('{"pairs": [1, 2]}', encoding="utf-8")
    freeze(study / "gold.lock.json", [study / "questions.json"], note="toy gold")
    freeze(study / "pools.lock.json", [study / "pool.json"], note="toy pools")
    write_measurement(study / "bench.json", {"provenance": {"gold_sha256": {"questions.json": sha256_file(
        study / "questions.json")}}, "median_ms": 1.5})
    (study / "study.json").write_text(json.dumps({
        "name": "toy", "title": "Toy", "script": "run.py", "gold": [{"manifest": "gold.lock.json"}],
        "writes": [{"script": "bench.py", "files": ["bench.json"]},
                   {"script": "pool.py", "files": ["pool.json"], "frozen_in": "pools.lock.json"}]}),
        encoding="utf-8")
    monkeypatch.setattr(cli, "all_studies", lambda: all_studies(tmp_path))
    return study


def studies_rows(capsys) -> dict[str, str]:
    assert cli.main(["studies"]) == 0
    return {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}


def test_studies_says_when_a_declared_file_is_current_modified_stale_or_missing(toy, capsys):
    rows = studies_rows(capsys)
    assert "toy/bench.json" in rows and " current (written by bench.py)" in rows["toy/bench.json"]
    assert " current (written by pool.py)" in rows["toy/pool.json"]

    bench = toy / "bench.json"
    bench.write_text(bench.read_text(encoding="utf-8").replace("1.5", "0.5"), encoding="utf-8")
    (toy / "pool.json").write_text('{"pairs": [1]}', encoding="utf-8")
    rows = studies_rows(capsys)
    assert "modified after its run" in rows["toy/bench.json"]
    assert "modified after it was frozen in pools.lock.json" in rows["toy/pool.json"]

    write_measurement(bench, {"provenance": {"gold_sha256": {"questions.json": "0" * 64}}, "median_ms": 1.5})
    assert "gold differs" in studies_rows(capsys)["toy/bench.json"]
    bench.unlink()
    assert "no results yet" in studies_rows(capsys)["toy/bench.json"]


def test_report_refuses_a_declared_file_changed_after_its_run(toy, capsys, monkeypatch):
    bench = toy / "bench.json"
    bench.write_text(bench.read_text(encoding="utf-8").replace("1.5", "0.5"), encoding="utf-8")
    monkeypatch.setattr(cli, "_build_site", lambda args: pytest.fail("the site must not be built"))
    assert cli.main(["report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bench.json" in err[0] and "modified after its run" in err[0]


@pytest.mark.parametrize("writes", [{"script": "a.py"}, [{"script": "a.py", "files": []}],
                                    [{"script": "a.py", "files": ["x.json"], "rerun": True}]])
def test_a_malformed_writes_entry_is_one_line(tmp_path, writes):
    path = tmp_path / "study.json"
    path.write_text(json.dumps({"name": "s", "title": "S", "script": "r.py", "gold": [{"manifest": "g"}],
                                "writes": writes}), encoding="utf-8")
    with pytest.raises(GabaritoError, match="'writes' must be a list"):
        StudySpec.load(path)


def test_no_study_or_library_file_inserts_into_sys_path_or_imports_by_file_path():
    found = []
    for top in ("case-studies", "gabarito"):
        for path in sorted((REPO / top).rglob("*")):
            if path.suffix not in (".py", ".md", ".sh", ".txt", ".toml", ".cfg") or "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{path.relative_to(REPO)}: {word}" for word in ("sys.path.insert", "spec_from_file_location")
                      if word in text]
    assert not found, "import study modules as studies.<study>.<module>: " + "; ".join(found)


def test_case_studies_import_as_the_studies_package():
    """Each study folder (and the flagship's protocols) is the package ``studies.<folder>``, and
    ``studies`` itself is ``case-studies/`` (the tests of the studies live in ``tests/case_studies``,
    so nothing on pytest's path shadows the package)."""
    import importlib

    import studies

    assert Path(studies.__file__).resolve() == (REPO / "case-studies" / "__init__.py").resolve()
    inits = sorted((REPO / "case-studies").glob("**/__init__.py"))
    assert (REPO / "case-studies" / "__init__.py") in inits
    for init in inits:
        rel = init.parent.relative_to(REPO / "case-studies")
        if rel.parts:
            module = importlib.import_module(".".join(("studies", *rel.parts)))
            assert Path(module.__file__).resolve() == init.resolve()
    study_dirs = {p.parent for p in (REPO / "case-studies").glob("*/study.json")}
    assert study_dirs and all((d / "__init__.py").exists() for d in study_dirs)
    done = subprocess.run([sys.executable, "-c", "import studies; print(studies.__file__)"], cwd="/",
                          capture_output=True, text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert Path(done.stdout.strip()) == REPO / "case-studies" / "__init__.py", done.stderr
