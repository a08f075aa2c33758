"""The classic collections' registry: one order, one display name, one corpus hash, one frozen check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gabarito.errors import GabaritoError
from gabarito.inputs.collections import COLLECTIONS
from gabarito.inputs.collections import registry
from gabarito.publish.labels import TERMS

STUDY = Path(__file__).resolve().parents[2] / "case-studies" / "standard_collections"


def test_the_registry_orders_and_names_every_collection_once():
    assert registry.names() == ("adi", "cranfield", "cisi", "medline", "npl")
    assert set(registry.names()) == set(COLLECTIONS)
    assert [registry.display(n) for n in registry.names()] == ["ADI", "Cranfield", "CISI", "MEDLINE", "NPL"]
    assert {k: str(v) for k, v in TERMS["collection"].items()} == {n: registry.display(n) for n in registry.names()}
    with pytest.raises(GabaritoError, match="unknown collection 'trec'"):
        registry.display("trec")


def test_registering_a_collection_twice_is_refused():
    with pytest.raises(GabaritoError, match="already registered"):
        registry.register(registry.CLASSIC[0])


def test_the_corpus_hash_is_the_one_the_studies_recorded(mirror):
    c, qrels = registry.load_frozen("adi", STUDY / "qrels" / "adi.txt", mirror=mirror)
    recorded = json.loads((STUDY / "results.json").read_text(encoding="utf-8"))
    found = [v for k, v in _walk(recorded) if k == "corpus_sha256"]
    assert registry.content_sha256(c) in found
    assert len(qrels) == len([q for q in c.qrels if c.qrels[q]])


def test_a_frozen_file_that_differs_is_refused_in_one_line(mirror, tmp_path):
    text = (STUDY / "qrels" / "adi.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    changed = tmp_path / "adi.txt"
    changed.write_text("".join(text[:-1]), encoding="utf-8")
    with pytest.raises(GabaritoError, match="differ from the frozen file") as err:
        registry.load_frozen("adi", changed, mirror=mirror)
    assert str(changed) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(GabaritoError, match="no frozen qrels file"):
        registry.load_frozen("adi", tmp_path / "absent.txt", mirror=mirror)


def _walk(obj, key=None):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, k)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v, key)
    else:
        yield key, obj
