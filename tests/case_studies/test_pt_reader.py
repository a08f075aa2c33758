"""case-studies/reranking/train_pt_reader.py: the help-center pseudo-queries are a chunk's title and
heading, the answer is the chunk without its heading line, a heading that is word for word an
evaluation question is dropped, and a section's other chunks are never its negatives; checked on
hand-made chunks with a stand-in encoder (no model)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from gabarito.retrieval.rerank.training import POSITIVE
from studies.reranking import train_pt_reader as PT

BODY = "o reembolso aparece na fatura do cartão em até duas faturas depois da aprovação"


def chunk(cid, title, section, text):
    return SimpleNamespace(id=cid, doc_id=cid.split("#")[0], title=title, section=section, text=text)


CHUNKS = [
    chunk("pag#0000", "Formas de pagamento", "", f"# Formas de pagamento\n\nNa loja você paga com Pix e {BODY}"),
    chunk("pag#0001", "Formas de pagamento", "Pix", f"## Pix\n\nO Pix dá desconto de cinco por cento e {BODY}"),
    chunk("pag#0002", "Formas de pagamento", "Pix", f"Depois de 30 minutos o código expira e {BODY}"),
    chunk("can#0000", "Cancelar", "Cancelar só parte do pedido", f"## Cancelar só parte do pedido\n\nVocê escolhe {BODY}"),
    chunk("can#0001", "Cancelar", "Recusar a entrega", "## Recusar a entrega\n\nCurto demais."),
    chunk("fre#0000", "Frete", "Prazos", f"## Prazos\n\nO prazo de entrega conta da aprovação e {BODY}"),
]
QUESTIONS = [SimpleNamespace(id="q005", query="cancelar só parte do pedido")]


def test_pseudo_queries_from_titles_and_headings_only():
    pseudo, counts = PT.chunk_pseudo_queries(CHUNKS, QUESTIONS)
    by_id = {p.doc_id: p for p in pseudo}
    assert by_id["pag#0000"].query == "Formas de pagamento"
    assert by_id["pag#0001"].query == "Formas de pagamento: Pix"
    assert not by_id["pag#0001"].positive.startswith("#") and "Pix dá desconto" in by_id["pag#0001"].positive
    assert counts["dropped_equal_to_question"] == ["q005"] and "can#0000" not in by_id
    assert counts["short_answer"] == 1 and "can#0001" not in by_id


def test_no_negative_from_the_same_section(monkeypatch):
    bench = SimpleNamespace(bare_chunks=CHUNKS, docs=[])
    encoder = SimpleNamespace(query_prefix="query: ", document_prefix="passage: ",
                              encode=lambda texts: np.eye(len(texts), 8) + 0.01)
    monkeypatch.setattr(PT, "load_evaluation", lambda *a, **k: QUESTIONS)
    pairs, counts = PT.weak_training_pairs(bench, 7, encoder)
    section = {c.id: (c.doc_id, c.section) for c in CHUNKS}
    for p in pairs:
        source = p.query_id.split(":pq:", 1)[1]
        target = p.doc_id.split(":", 1)[1]
        assert (p.kind == POSITIVE) == (target == source)
        assert p.kind == POSITIVE or section[target] != section[source]
    assert counts["pseudo"]["dropped_equal_to_question"] == ["q005"]
