"""The ledger of shown numbers: what :func:`show` records and prints, and each check of the book
failing on a crafted ledger (tests/publish/test_ledger_site.py runs them on built sites)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.publish import formatting as fmt
from gabarito.publish import ledger
from gabarito.publish.ledger import Identity
from gabarito.publish.ledger_check import (conflicts, keys_that_disagree, prose_against_tables, shared_labels,
                                           two_values)

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def project(root: Path) -> Path:
    """A site project with one study whose results the site serves, and a page folder."""
    (root / "_quarto.yml").write_text("project:\n  type: website\n", encoding="utf-8")
    study = root / "case-studies" / "demo"
    study.mkdir(parents=True)
    (study / "results.json").write_text(json.dumps({
        "provenance": {"git": {"commit": COMMIT}, "date": "2026-12-07"},
        "groups": {"tuning": {"top1": 0.769, "top5": 0.923}}}), encoding="utf-8")
    (study / "notes.json").write_text(json.dumps({"kappa": 0.875}), encoding="utf-8")
    (root / "notebooks").mkdir()
    return root / "notebooks"


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    monkeypatch.delenv(ledger.LEDGER_ENV, raising=False)
    monkeypatch.delenv(ledger.PAGE_ENV, raising=False)
    ledger.reset()
    yield
    ledger.reset()


TOP1 = Identity("helpcenter", "hit@1", collection="tuning", method="chosen", judgment="gold", unit="document")


def test_show_prints_the_formatted_number_with_its_source_and_link(tmp_path):
    page = project(tmp_path)
    out = ledger.show(TOP1, 0.769, fmt.pct, source="../case-studies/demo/results.json",
                      key=["groups", "tuning", "top1"], label="acerto no top-1", page_dir=page)
    assert isinstance(out, fmt.Html)
    assert ">76,9%</a>" in out  # formatting's own text, linked
    assert 'href="../downloads/case-studies/demo/results.json"' in out
    assert 'data-source="case-studies/demo/results.json"' in out and 'data-key="groups/tuning/top1"' in out
    assert f'data-commit="{COMMIT}"' in out and COMMIT[:12] in out  # in the title, shown on hover
    [r] = ledger.records()
    assert r["id"] == str(TOP1) and r["value"] == 0.769 and r["text"] == "76,9%" and r["commit"] == COMMIT
    assert r["page"] == "notebooks" and r["where"] == "prose"


def test_a_file_the_site_does_not_serve_is_named_but_not_linked(tmp_path):
    page = project(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.json").write_text('{"n": 3}', encoding="utf-8")
    out = ledger.show(Identity("demo", "count"), 3, fmt.integer, source="../data/x.json", key=["n"], label="n",
                      page_dir=page)
    assert out.startswith("<span") and "href" not in out and 'tabindex="0"' in out and ">3</span>" in out


def test_the_page_ledger_is_written_where_the_build_says(tmp_path, monkeypatch):
    page = project(tmp_path)
    target = tmp_path / "cache" / "p.ledger.json"
    monkeypatch.setenv(ledger.LEDGER_ENV, str(target))
    monkeypatch.setenv(ledger.PAGE_ENV, "notebooks/p.ipynb")
    ledger.show(TOP1, 0.769, fmt.num, source="../case-studies/demo/results.json", key=["groups", "tuning", "top1"],
                label="top-1", where="table", page_dir=page)
    [r] = ledger.read(target)
    assert r["page"] == "notebooks/p.ipynb" and r["text"] == "0,769" and r["where"] == "table"


def test_a_source_outside_the_project_and_a_bad_identity_are_refused(tmp_path):
    page = project(tmp_path)
    outside = tmp_path.parent / "elsewhere.json"
    outside.write_text("{}", encoding="utf-8")
    with pytest.raises(GabaritoError, match="inside the project"):
        ledger.show(TOP1, 1.0, fmt.num, source=outside, key=[], label="x", page_dir=page)
    with pytest.raises(ValueError):
        Identity("demo", "hit@1", unit="chunk")
    with pytest.raises(TypeError):
        ledger.show("hit@1", 1.0, fmt.num, source="../case-studies/demo/results.json", key=[], label="x",
                    page_dir=page)


def test_a_damaged_ledger_is_one_error_naming_it(tmp_path):
    bad = tmp_path / "p.ledger.json"
    bad.write_text('{"schema": "gabarito.ledger/1", "records"', encoding="utf-8")
    with pytest.raises(GabaritoError, match="p.ledger.json"):
        ledger.read(bad)


# --- the checks, on crafted ledgers --------------------------------------------------------------

def rec(ident: Identity, value, text: str, *, page="notebooks/a.ipynb", label="top-1", where="prose",
        source="case-studies/demo/results.json", key=("groups", "tuning", "top1")) -> dict:
    return {"identity": {}, "id": str(ident), "value": value, "text": text, "label": label, "where": where,
            "source": source, "key": list(key), "commit": None, "page": page}


PASSAGE = Identity("reranking", "hit@1", collection="helpcenter", method="bm25", judgment="gold", unit="passage")


def test_a_consistent_book_has_no_conflict(tmp_path):
    project(tmp_path)
    book = [rec(TOP1, 0.769, "0,769"), rec(TOP1, 0.769, "0,769", where="table"),
            rec(TOP1, 0.769, "76,9%", page="index.ipynb"),
            rec(PASSAGE, 0.493, "0,493", page="notebooks/b.ipynb", key=("x",))]
    assert conflicts(book, tmp_path) == []


def test_one_identity_with_two_values_fails():
    book = [rec(TOP1, 0.769, "0,769"), rec(TOP1, 0.750, "0,750", page="notebooks/b.ipynb")]
    [line] = two_values(book)
    assert "0,769" in line and "0,750" in line and "notebooks/b.ipynb" in line
    assert conflicts(book)


def test_two_identities_under_one_label_on_a_page_fail():
    book = [rec(TOP1, 0.769, "0,769", label="melhor método"), rec(PASSAGE, 0.493, "0,493", label="melhor método")]
    [line] = shared_labels(book)
    assert "melhor método" in line and str(TOP1) in line and str(PASSAGE) in line
    # the same label on two pages is two pages' words: not a conflict
    assert shared_labels([book[0], {**book[1], "page": "notebooks/b.ipynb"}]) == []


def test_a_sentence_that_rounds_its_table_differently_fails():
    kappa = Identity("judgments", "kappa", collection="gold pairs", variant="linear, all pairs")
    book = [rec(kappa, 0.875, "0,87", where="prose"), rec(kappa, 0.875, "0,875", where="table")]
    [line] = prose_against_tables(book)
    assert "0,87" in line and "0,875" in line
    assert two_values(book) == []  # the values agree: only the prose check sees it


def test_a_key_that_holds_another_number_fails(tmp_path):
    project(tmp_path)
    book = [rec(TOP1, 0.750, "0,750")]  # the file holds 0.769 at that key
    [line] = keys_that_disagree(book, tmp_path)
    assert "0.769" in line
    # a derived value (its key is not a number in the file) is not checked against it
    assert keys_that_disagree([rec(TOP1, 0.5, "0,500", key=("groups", "tuning"))], tmp_path) == []
