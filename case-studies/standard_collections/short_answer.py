"""The home page's short answer about the classic collections, as one sentence written from
:func:`studies.standard_collections.findings.essentials`: where the fusion's wins hold after Holm's
correction (against word search and against meaning search, with the smallest and largest such
difference), whether it falls significantly below either on the headline measure, and where it does
on another measure (with a link to the chapter). Every number passes through the ledger
(:class:`gabarito.publish.ledger.Source`); which of the three endings is written is chosen here from
the data, never in the notebook.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gabarito.publish import formatting as fmt
from gabarito.publish import labels, ledger

from studies.standard_collections import findings

#: Where the chapter that has the numbers is, from the home page.
CHAPTER = "notebooks/colecoes_classicas.html"
#: The two single searches, as the sentence names them.
_OTHERS = (("vs_bm25", "a busca por palavras"), ("vs_dense", "a busca por significado"))


def _span(results: Mapping, ess: Mapping, source: ledger.Source, side: str, other: str) -> str:
    """``(nDCG@10 de +0,031 a +0,102)``: the smallest and largest significant difference on one side,
    each with the collection it was measured on; empty when the fusion won nowhere."""
    measure = labels.measure_label(ess["measure"])
    rows = {r["collection"]: r for r in ess["rows"]}
    gains = ess[side]["by_gain"]  # smallest difference first
    ends = [source.show(findings.diff_identity(results, {
                "measure": ess["measure"], "collection": c,
                "other": rows[c]["bm25"] if side == "vs_bm25" else findings.DENSE}),
            ["collections", c, "tests"], fmt.signed, value=rows[c][side]["diff"],
            label=f"fusão menos {other}, {measure}, {labels.term('collection', c)}")
            for c in gains[:1] + gains[1:][-1:]]
    if not ends:
        return ""
    return f" ({measure} {ends[0]})" if len(ends) == 1 else f" ({measure} de {ends[0]} a {ends[1]})"


def _losses(ess: Mapping) -> str:
    """Where the fusion falls significantly below one of the two: on the headline measure, then on
    another measure (with the link to the chapter)."""
    measure = labels.measure_label(ess["measure"])
    text = (f". No {measure}, em nenhuma coleção ficam abaixo de uma das duas com diferença que resista"
            if not ess["worse_any"] else
            f". No {measure}, ficam abaixo de uma das duas, com diferença que resiste, em "
            f"{fmt.join([labels.term('collection', c) for c in ess['worse_any']])}")
    if ess["worse_elsewhere"]:
        text += ("; noutra medida, ficam: " + fmt.join([
            f"em {labels.term('collection', w['collection'])}, no {labels.measure_label(w['measure'])}"
            for w in ess["worse_elsewhere"]]) + f' (<a href="{CHAPTER}">o capítulo</a> tem os números)')
    return text + "."


def sentence(results: Mapping, path: str | Path) -> str:
    """The short answer's first paragraph (HTML), from the study's results read from ``path``."""
    ess = findings.essentials(results)
    source = ledger.Source(path)
    span = {side: _span(results, ess, source, side, other) for side, other in _OTHERS}
    wins_bm25, wins_dense = len(ess["vs_bm25"]["better"]), len(ess["vs_dense"]["better"])
    fewer = wins_dense < wins_bm25
    return (f"<strong>Resposta curta:</strong> as duas juntas (a fusão RRF) ganham, com diferença que resiste à "
            f"correção de Holm, da busca só por palavras em {fmt.count(wins_bm25, 'f')} das "
            f"{fmt.integer(ess['n'])} coleções com julgamentos humanos{span['vs_bm25']}"
            + ("; da só por significado, em apenas " if fewer else ", e da só por significado em ")
            + f"{fmt.count(wins_dense, 'f')}{span['vs_dense']}" + _losses(ess))
