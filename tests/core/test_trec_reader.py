"""The fast TREC run reader (``gabarito.core.trec_columns``) and the ``Run`` it returns as a view.

The reader must give exactly what the line reader gives (``ColumnarRun._from_lines``: Python's
``splitlines``, ``split`` and ``float``) for every file it accepts, and leave every other file to
the line reader, whose errors name the file and the line."""

import copy
import json
import math
import pickle
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gabarito.core import trec_columns
from gabarito.core.columnar import ColumnarRun, RunView, carried_columns
from gabarito.core.runs import Qrels, Run
from gabarito.errors import GabaritoError
from gabarito.measure.metrics import evaluate

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ["nDCG@10", "RR@10", "R@100", "AP@100", "P@10"]


@pytest.fixture(params=["arrow", "pandas"])
def splitter(request, monkeypatch):
    """Both ways the reader splits a file: Arrow (installed with the extras) and pandas (the core)."""
    if request.param == "pandas":
        monkeypatch.setattr(trec_columns, "arrow", lambda: None)
    else:
        assert trec_columns.arrow() is not None, "pyarrow is installed where the tests run"
    return request.param


def same_columns(a: ColumnarRun, b: ColumnarRun) -> bool:
    """The same queries in the same order, and per query the same rows in the same order (doc id
    and score, bit for bit)."""
    def rows(c: ColumnarRun) -> dict:
        out: dict = {}
        for q, doc, bits in zip(c.query.tolist(), c.docs.tolist(), c.score.view(np.uint64).tolist()):
            out.setdefault(c.queries[q], []).append((doc, bits))
        return out

    return a.queries.tolist() == b.queries.tolist() and rows(a) == rows(b)


def random_lines(rng: random.Random, n: int) -> list[list[str]]:
    scores = [lambda: repr(rng.random()), lambda: f"{rng.random():.6f}", lambda: f"{rng.uniform(-1e5, 1e5):.3e}",
              lambda: "".join(rng.choice("0123456789") for _ in range(rng.randint(18, 30))) + "e-25",
              lambda: rng.choice(["-0", "0", "1.", ".5", "+2.5", "inf", "-Infinity", "2.4703282292062328e-324"])]
    ids = ["d", "D-1", "ação", "NA", "null", "\"q", "007", "x'y", "é"]
    return [[rng.choice(["q1", "007", "NA", "qé"]), "Q0", rng.choice(ids) + str(i), str(i), rng.choice(scores)(), "tag"]
            for i in range(n)]


@pytest.mark.parametrize("layout", ["single", "tabs", "runs", "crlf", "cr", "mixed", "indented"])
def test_the_fast_reader_gives_exactly_what_the_line_reader_gives(tmp_path, layout, splitter):
    rng = random.Random(layout)
    lines = random_lines(rng, 3000)
    joins = {"single": " ", "tabs": "\t", "runs": "   ", "crlf": " ", "cr": " ", "mixed": " \t ", "indented": " "}
    ends = {"crlf": "\r\n", "cr": "\r"}
    text = ""
    for i, parts in enumerate(lines):
        text += ("  " if layout == "indented" else "") + joins[layout].join(parts) + ends.get(layout, "\n")
        if i % 97 == 0:
            text += "\n" if layout != "indented" else " \t \n"
    path = tmp_path / "r.trec"
    path.write_text(text, encoding="utf-8", newline="")
    assert trec_columns.read_trec_columns(path) is not None             # not left to the line reader
    assert same_columns(ColumnarRun.from_trec(path), ColumnarRun._from_lines(path, ""))


def test_a_score_only_python_reads_leaves_the_file_to_the_line_reader(tmp_path, splitter):
    path = tmp_path / "r.trec"
    path.write_text("q Q0 a 1 1_0 t\nq Q0 b 2 +nan t\n", encoding="utf-8")
    run = ColumnarRun.from_trec(path)
    assert run.score[0] == 10.0 and math.isnan(run.score[1])


def test_scores_are_pythons_float_of_their_text_bit_for_bit(tmp_path, splitter):
    rng = random.Random(7)
    texts = [repr(rng.random() * 10 ** rng.randint(-300, 300)) for _ in range(2000)]
    texts += ["".join(rng.choice("0123456789") for _ in range(40)) + "e-" + str(rng.randint(0, 340)) for _ in range(2000)]
    texts += ["9007199254740993", "1e23", "4.9e-324", "2.4703282292062327e-324", "1e400", "-1e400", "nan", "-0"]
    path = tmp_path / "r.trec"
    path.write_text("".join(f"q Q0 d{i} {i} {t} x\n" for i, t in enumerate(texts)), encoding="utf-8")
    assert trec_columns.read_trec_columns(path) is not None
    read = ColumnarRun.from_trec(path).score
    expected = np.array([float(t) for t in texts])
    assert np.array_equal(read.view(np.uint64)[:-2], expected.view(np.uint64)[:-2])
    assert math.isnan(read[-2]) and math.copysign(1, read[-1]) == -1.0


@pytest.mark.parametrize("text, message", [
    ("q Q0 d 1 0.5 t\nq Q0 e 2 0.4\n", "line 2: a TREC run line has 6 columns"),
    ("q Q0 d 1 0.5 t\nq Q0 e 2 0.4 t x\n", "line 2: a TREC run line has 6 columns"),
    ("q Q0 d 1 0.5 t\n\nq  e 2 0.4 t\n", "line 3: a TREC run line has 6 columns"),   # a run of blanks hides a field
    ("q Q0 d 1 0.5 t\r\nq\tQ0\te\t2\t0.4\r\n", "line 2: a TREC run line has 6 columns"),
    ("q Q0 d 1 high t\n", "line 1: score 'high' is not a number"),
    ("q Q0 d 1 0.5 t\nq Q0 e 2 nan(1) t\n", "line 2: score 'nan(1)' is not a number"),
    ("q Q0 d 1 0.5 t\nq Q0 e 2 0.4 t\u00a0x\n", "line 2: a TREC run line has 6 columns"),   # Python splits at NBSP
    ("q Q0 d 1 0.5 t\n\nq Q0 d 2 0.4 t\n", "line 3: doc id 'd' appears twice in one ranking (query 'q')"),
])
def test_malformed_files_are_one_line_naming_the_file_and_line(tmp_path, text, message, splitter):
    path = tmp_path / "bad.trec"
    path.write_text(text, encoding="utf-8", newline="")
    with pytest.raises(GabaritoError) as caught:
        Run.from_trec(path)
    assert message in str(caught.value) and "bad.trec" in str(caught.value) and "\n" not in str(caught.value)


def test_bytes_that_are_not_utf8_a_folder_and_a_missing_file_are_one_line(tmp_path):
    path = tmp_path / "bad.trec"
    path.write_bytes(b"q Q0 d 1 0.5 t\nq Q0 \xff 2 0.4 t\n")
    with pytest.raises(GabaritoError, match=r"not UTF-8 text \(byte 20\)"):
        ColumnarRun.from_trec(path)
    with pytest.raises(GabaritoError, match="is a folder"):
        Run.from_trec(tmp_path)
    with pytest.raises(GabaritoError, match="file not found"):
        Run.from_trec(tmp_path / "none.trec")


def ranked_file(path: Path) -> Path:
    path.write_text("q2 Q0 b 1 2.5 t\nq2 Q0 a 2 1.0 t\nq2 Q0 c 3 1.0 t\nq1 Q0 x 1 0.5 t\n", encoding="utf-8")
    return path


def test_a_run_read_from_a_file_is_a_view_built_when_first_read(tmp_path):
    path = ranked_file(tmp_path / "r.trec")
    expected = {"q2": [("b", 2.5), ("a", 1.0), ("c", 1.0)], "q1": [("x", 0.5)]}
    for read in (lambda r: r == expected, lambda r: expected == r, lambda r: repr(r) == repr(expected),
                 lambda r: json.loads(json.dumps(r)) == {q: [list(p) for p in v] for q, v in expected.items()},
                 lambda r: dict(r) == expected and {**r} == expected, lambda r: r["q1"] == expected["q1"],
                 lambda r: pickle.loads(pickle.dumps(r)) == expected, lambda r: copy.deepcopy(r) == expected,
                 lambda r: r.cut(1) == {"q2": [("b", 2.5)], "q1": [("x", 0.5)]}):
        run = Run.from_trec(path, name="n")
        assert type(run) is RunView and carried_columns(run) is not None
        assert len(run) == 2 and list(run) == ["q2", "q1"] and "q1" in run and "q9" not in run and list(run.keys()) == list(run)
        assert type(run) is RunView                                    # the ids need no list
        assert read(run)
        assert type(run) is Run and carried_columns(run) is None and run.name == "n"
    run = Run.from_trec(path)
    run["q3"] = [("z", 1.0)]                    # a change builds the lists first
    assert type(run) is Run and list(run) == ["q2", "q1", "q3"]


def test_evaluation_reads_the_views_columns_without_building_lists(tmp_path):
    path = ranked_file(tmp_path / "r.trec")
    qrels = Qrels({"q1": {"x": 1}, "q2": {"c": 2, "zz": 1}})
    view = Run.from_trec(path)
    values = evaluate(view, qrels, MEASURES)
    assert type(view) is RunView                                   # never read as a mapping
    assert ColumnarRun.from_run(view) is carried_columns(view)
    view.name = "renamed"
    renamed = ColumnarRun.from_run(view)
    assert renamed.name == "renamed" and renamed.docs is carried_columns(view).docs and type(view) is RunView
    assert values == evaluate(Run(dict(Run.from_trec(path))), qrels, MEASURES)
    assert values["RR@10"] == {"q1": 1.0, "q2": 1 / 3}             # ties by doc id: b, a, c


def test_unranked_rows_are_ranked_by_the_tie_rule_when_built(tmp_path, splitter):
    path = tmp_path / "r.trec"
    path.write_text("q Q0 c 1 1.0 t\nq Q0 a 2 1.0 t\np Q0 x 1 0.1 t\nq Q0 b 3 3.0 t\n", encoding="utf-8")
    assert Run.from_trec(path) == {"q": [("b", 3.0), ("a", 1.0), ("c", 1.0)], "p": [("x", 0.1)]}
    assert list(Run.from_trec(path)) == ["q", "p"]


# --- through the command: `gabarito pool` reads TREC run files -------------------------------

DOCS = [{"id": f"d{i}", "title": f"T{i}", "text": f"texto {i}"} for i in range(1, 7)]
QUESTIONS = [{"id": "qa", "query": "Como?", "relevantIds": ["d1"]}, {"id": "qb", "query": "Onde?", "relevantIds": ["d6"]}]


def pool(tmp_path: Path, run_text: str, out: str = "pool.json") -> subprocess.CompletedProcess:
    (tmp_path / "docs.json").write_text(json.dumps(DOCS), encoding="utf-8")
    (tmp_path / "ev.json").write_text(json.dumps(QUESTIONS), encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_bytes(run_text.encode("utf-8", errors="surrogateescape"))
    return subprocess.run([sys.executable, "-m", "gabarito.cli", "pool", run, "--documents", tmp_path / "docs.json",
                           "--evaluation", tmp_path / "ev.json", "--seed", "3", "--depth", "2", "--out", tmp_path / out],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


GOOD = "qa Q0 d2 1 0.9 r\nqa Q0 d1 2 0.8 r\nqa Q0 d3 3 0.7 r\nqb Q0 d5 1 0.6 r\nqb Q0 d6 2 0.5 r\n"


@pytest.mark.parametrize("text, message", [
    (GOOD + "qb Q0 d4 3 0.4\n", "line 6: a TREC run line has 6 columns"),
    (GOOD.replace("\n", "\r\n").replace(" ", "\t") + "qb\tQ0\td4\t3\thigh\tr\r\n", "line 6: score 'high' is not a number"),
    (GOOD + "qb  d4 3 0.4 r\n", "line 6: a TREC run line has 6 columns"),
    (GOOD + "qb Q0 d5 3 0.4 r\n", "line 6: doc id 'd5' appears twice in one ranking (query 'qb')"),
    (GOOD + "qb Q0 d\udcff 3 0.4 r\n", "not UTF-8 text (byte 92)"),
])
def test_gabarito_pool_names_the_bad_line_of_a_run_file_in_one_line_and_writes_nothing(tmp_path, text, message):
    done = pool(tmp_path, text)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "run.trec" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "pool.json").exists()


def test_gabarito_pool_reads_tabs_runs_of_blanks_and_crlf_as_single_spaces(tmp_path):
    assert pool(tmp_path, GOOD, "a.json").returncode == 0
    odd = "".join("  " + line.replace(" ", " \t ") + " \r\n\r\n" for line in GOOD.splitlines())
    done = pool(tmp_path, odd, "b.json")
    assert done.returncode == 0, done.stderr
    a, b = (json.loads((tmp_path / f).read_text(encoding="utf-8")) for f in ("a.json", "b.json"))
    assert a["questions"] == b["questions"] and a["questions"]
