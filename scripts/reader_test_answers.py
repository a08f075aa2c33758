"""The answers to the reader test's questions (docs/reader_test/questions.md), computed from the
committed results through the chapters' own findings, so that the key cannot drift from the data.

    python scripts/reader_test_answers.py > docs/reader_test/answers.md
"""

from __future__ import annotations

from pathlib import Path

from gabarito.publish import formatting as fmt
from gabarito.publish import labels
from gabarito.publish.provenance import load_results
from studies.benchmark_rrf import findings as bench
from studies.fusion import findings as fusion
from studies.helpcenter import findings as helpcenter
from studies.judgments import findings as judgments
from studies.peers import findings as peers
from studies.reranking import findings as reranking
from studies.standard_collections import findings as collections

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ROOT / "case-studies"


def answers() -> list[str]:
    b = bench.headline(load_results(STUDIES / "benchmark_rrf"))
    best_r1 = max(b["r1"], key=b["r1"].get)
    published = b["sets"]["published"]["best_single"]
    hc = load_results(STUDIES / "helpcenter")
    h = helpcenter.headline(hc)
    r = reranking.headline(load_results(STUDIES / "reranking"))
    c = collections.headline(load_results(STUDIES / "standard_collections"))
    fu = fusion.identity_totals(load_results(STUDIES / "fusion"))
    j = judgments.headline(load_results(STUDIES / "judgments"))
    p = {n: load_results(STUDIES / "peers", f"{n}.json") for n in ("bm25", "vectors", "encoders", "budget")}
    q = peers.headline(p["bm25"], p["vectors"], p["encoders"], p["budget"])
    speed = peers.evaluation_cost(load_results(STUDIES / "peers", "measures.json"))[-1]
    blind = judgments.blind_regrade(load_results(STUDIES / "judgments", "blind_regrade.json"))
    return [
        f"1. {best_r1} ({fmt.pct(b['r1'][best_r1])} em 1º lugar; palavras {fmt.pct(b['r1']['bm25'])}, "
        f"significado {fmt.pct(b['r1']['vector'])}, fusão {fmt.pct(b['r1']['fused'])}; {b['n']} perguntas).",
        f"2. {published} (a melhor das duas buscas isoladas com as perguntas publicadas).",
        f"3. {labels.settings_namer(helpcenter.settings(hc))(h['label'])}; acerto@1 {fmt.pct(h['heldout']['top1'])} nas reservadas "
        f"{fmt.ci(h['heldout_ci']['top1'])}, {fmt.pct(h['tuning']['top1'])} nas de ajuste.",
        f"4. {len(r['better'])} de {r['n']} melhoram e {len(r['worse'])} pioram (Holm, relendo {r['N']}).",
        f"5. {c['beats_both']} de {c['n']} coleções; {c['beats_both_significant']} com as duas diferenças "
        f"significativas ({c['measure']}).",
        f"6. {fu['identical_full']} de {fu['n']} perguntas com a lista inteira igual; top-10 igual em "
        f"{fu['identical_top10']}.",
        f"7. Modelos de linguagem como avaliadores independentes; kappa linear entre {fmt.num(j['kappa_min'], 2)} e "
        f"{fmt.num(j['kappa_max'], 2)}.",
        f"8. {fmt.times(q['encoder']['ratio_median'], 1)} (mediana das rodadas, {q['encoder']['model']}).",
        f"9. {fmt.seconds(speed['files_s'])} para o gabarito; o ranx leva {fmt.times(speed['files_ranx_ratio'])} esse tempo "
        f"({fmt.integer(speed['queries'])} perguntas, {fmt.integer(speed['rows'])} linhas, dos arquivos às médias).",
        f"10. {fmt.integer(blind['n_pairs'])} pares julgados de novo às cegas; kappa linear entre os dois avaliadores "
        f"cegos {fmt.num(blind['agreement']['blind_a_b']['kappa'], 2)}; a conclusão principal se mantém "
        f"(melhor nas notas graduadas: {blind['headline']['rows']['min']['best_graded']}).",
    ]


if __name__ == "__main__":
    print("# Reader test: the key\n\nComputed by `scripts/reader_test_answers.py` from the committed results.\n")
    print("\n".join(answers()))
