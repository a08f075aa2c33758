"""Issue 44, the smaller items: the machine named from the provenance (never "a laptop"), one
download list per file set with links that tell files apart, pointers to "Detalhes" as links,
the fusion heading and text counting the same round trips, and the sums file as a page a phone
reads. Unit level; ``check_built_site`` is the same check on a built site
(``test_smaller_items_site.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.publish import formatting as fmt
from gabarito.publish import pointers, provenance, style
from gabarito.publish.sums_page import page_name, write_sums_page

REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "case-studies"
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + [REPO / "index.ipynb"]
LAPTOP = re.compile(r"\b(?:laptop|notebook comum|computador portátil|num notebook|de notebook)\b", re.I)
OLD = {"cpu_count": 2, "platform": "Linux-6.18.44-x86_64-with-glibc2.36", "machine": "x86_64", "python": "3.11.7"}


# --- the machine -----------------------------------------------------------------------------------

def test_the_machine_is_named_from_the_provenance():
    assert provenance.machine_words({"provenance": {"machine": OLD}}) == "computador Linux de 2 núcleos"
    intel = {**OLD, "cpu": {"model": "Intel(R) Xeon(R) CPU @ 2.20GHz", "simd": ["avx2"]}}
    assert provenance.machine_words({"provenance": {"machine": intel}}) == \
        "computador Linux de 2 núcleos com processador Intel Xeon"
    amd = {**OLD, "cpu_count": 1, "cpu": {"model": "AMD EPYC 7B13 64-Core Processor"}}
    assert provenance.machine_words({"machine": amd}) == "computador Linux de 1 núcleo com processador AMD EPYC 7B13"
    assert provenance.machine_words({}) == "computador"


@pytest.mark.parametrize("name", ["peers/encoders.json", "peers/cold_report.json", "reranking/results.json",
                                  "standard_collections/rerankers.json", "standard_collections/scaling.json",
                                  "benchmark_rrf/results.json"])
def test_every_results_file_a_page_names_the_machine_of_says_what_it_recorded(name):
    words = provenance.machine_words(json.loads((STUDIES / name).read_text(encoding="utf-8")))
    assert words.startswith("computador ") and " núcleo" in words and not LAPTOP.search(words)


def test_no_notebook_calls_the_machine_a_laptop():
    found = [f"{nb.name}: {m.group(0)}" for nb in NOTEBOOKS for m in LAPTOP.finditer(nb.read_text(encoding="utf-8"))]
    assert found == []


# --- downloads --------------------------------------------------------------------------------------

@pytest.mark.parametrize("study", sorted(p.name for p in STUDIES.iterdir() if (p / "study.json").is_file()))
def test_no_file_is_listed_twice(study):
    groups = provenance.study_downloads(STUDIES / study)
    listed = [p for paths in groups.values() for p in paths]
    assert len(listed) == len(set(listed))
    sets = [frozenset(paths) for paths in groups.values()]
    assert len(sets) == len(set(sets))  # no two lists of the same files


def test_frozen_qrels_that_are_the_gold_are_one_list():
    groups = provenance.study_downloads(STUDIES / "standard_collections")
    assert {p.name for p in groups["gold"]} == {"adi.txt", "cisi.txt", "cranfield.txt", "medline.txt", "npl.txt"}
    assert "qrels" not in groups


def test_links_that_share_a_name_say_which_file_they_are():
    block = provenance.downloads_block(STUDIES / "helpcenter", page_dir=REPO / "notebooks")
    words = re.findall(r"<a [^>]*download>(.*?)</a>", block)
    assert len(words) == len(set(words)) and len(words) > 100
    runs = sorted(p.name for p in (STUDIES / "helpcenter" / "runs").iterdir() if p.is_dir())
    assert f'<code>{runs[0]}/qrels.trec</code>' in block and "<code>qrels.trec</code>" not in block
    assert "<code>helpcenter/evaluation.json</code>" in block and "<code>round1/evaluation.json</code>" in block


def test_download_labels_grow_only_as_far_as_needed():
    a, b, c = Path("/x/runs/r1/qrels.trec"), Path("/x/runs/r2/qrels.trec"), Path("/x/runs/r1/run.json")
    assert provenance.download_labels([a, b, c]) == {a: "r1/qrels.trec", b: "r2/qrels.trec", c: "run.json"}


# --- pointers to Detalhes ---------------------------------------------------------------------------

def test_the_pointer_is_a_link_to_the_section():
    assert pointers.details() == "[Detalhes](#detalhes)"
    assert pointers.details(html=True) == '<a href="#detalhes">Detalhes</a>'
    assert pointers.section_id("O tempo de cada pergunta no seu computador") == "o-tempo-de-cada-pergunta-no-seu-computador"


@pytest.mark.parametrize("html", [
    "<p>A tabela completa está em Detalhes.</p>",
    "<p>o que a releitura faz em cada coleção está na Tabela 9, em “Detalhes”.</p>",
    "<p>foi escolhida no próprio teste (“Detalhes”).</p>",
    "<p>permite fazê-lo consulta a consulta (Detalhes).</p>",
])
def test_a_pointer_left_as_text_is_a_style_violation(html):
    assert [v.rule for v in style.page_violations(html)] == ["pointer"]


def test_a_linked_pointer_the_heading_and_the_fold_are_not():
    html = ('<h2 id="detalhes">Detalhes</h2><details><summary>Detalhes</summary></details>'
            '<p>A tabela completa está em <a href="#detalhes">Detalhes</a>; ver ('
            '<a href="#detalhes">Detalhes</a>).</p>')
    assert style.page_violations(html) == []


# --- the fusion heading -----------------------------------------------------------------------------

def test_the_round_trips_counted_are_the_calls_the_timed_python_path_makes():
    from studies.fusion import findings, latency

    class Index:
        def __init__(self):
            self.calls = []

        def bm25(self, text, depth):
            self.calls.append("bm25")
            return [("d1", 1.0)]

        def knn(self, vec, depth, model_id=None):
            self.calls.append("knn")
            return [("d2", 1.0)]

        def floor(self):
            self.calls.append("floor")

    class Encoder:
        model_id = "m"

    index = Index()
    latency.stage_functions(index, Encoder(), depth=10, rrf_k=60)["python"](("texto", [0.1]))
    trips = findings.round_trips()
    assert len(index.calls) == trips["python"] == 2 and index.calls == trips["python_calls"]
    assert trips["native"] == 1
    heading = f"{fmt.in_words(trips['native'], 'f').capitalize()} ida ao banco contra {fmt.in_words(trips['python'], 'f')}"
    assert heading == "Uma ida ao banco contra duas"


def test_small_counts_in_words():
    assert [fmt.in_words(n, "f") for n in (0, 1, 2, 3, 10, 11)] == ["nenhuma", "uma", "duas", "três", "dez", "11"]
    assert [fmt.in_words(n, "m") for n in (1, 2)] == ["um", "dois"]
    assert [fmt.in_words(n, "m") for n in (100, 1000, 1001)] == ["cem", "mil", "1.001"]  # a rate's round size
    assert [fmt.in_words(n, "f") for n in (2000, 10000, 11000, 10500)] == ["duas mil", "dez mil", "11.000", "10.500"]
    with pytest.raises(ValueError):
        fmt.in_words(-1, "f")


def test_the_fusion_heading_is_written_by_the_cell_that_writes_its_text():
    nb = json.loads((REPO / "notebooks" / "fusao.ipynb").read_text(encoding="utf-8"))
    typed = [c for c in nb["cells"] if c["cell_type"] == "markdown" and "ida ao banco" in "".join(c["source"])]
    assert typed == []
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code" and "round_trips()" in "".join(c["source"])]
    assert len(code) == 1 and "## " in code[0] and code[0].count("in_words(idas['python']") == 2


# --- the sums file ----------------------------------------------------------------------------------

def test_the_sums_page_reads_on_a_phone(tmp_path):
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(f"{'a' * 64}  gabarito-0.1.0-py3-none-any.whl\n{'b' * 64}  gabarito-0.1.0.tar.gz\n", encoding="utf-8")
    page = write_sums_page(sums)
    html = page.read_text(encoding="utf-8")
    assert page.name == page_name(sums) == "SHA256SUMS.html"
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert "overflow-wrap:anywhere" in html and "font-size:1rem" in html
    assert f"<strong>gabarito-0.1.0.tar.gz</strong><br><code>{'b' * 64}</code>" in html
    assert '<a href="SHA256SUMS" download>' in html and "sha256sum -c SHA256SUMS" in html
    assert sums.read_text(encoding="utf-8").count("\n") == 2  # the raw file is left as sha256sum reads it


def test_a_sums_file_that_is_not_one_is_one_line(tmp_path):
    sums = tmp_path / "SHA256SUMS"
    sums.write_text("not a sum\n", encoding="utf-8")
    with pytest.raises(GabaritoError, match="line 1 is not"):
        write_sums_page(sums)
    assert not (tmp_path / "SHA256SUMS.html").exists()
