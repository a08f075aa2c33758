"""The small collection of the judging tests: eight documents, two questions, two runs."""

import json
from pathlib import Path

TEXTS = ["Para trocar a senha, abra Conta e escolha Senha.", "A senha precisa de oito caracteres.",
         "Esqueceu a senha? Peça um link de recuperação.", "A assinatura renova todo mês.",
         "Faturas da assinatura ficam em Pagamentos.", "Mudar o plano da assinatura.",
         "Reembolsos levam dez dias.", "Para cancelar a assinatura, abra Pagamentos e escolha Cancelar."]
DOCS = [{"id": f"d{i}", "title": f"Título {i}", "text": text} for i, text in enumerate(TEXTS, start=1)]
QUESTIONS = [{"id": "qa", "query": "Como troco a senha?", "relevantIds": ["d1"]},
             {"id": "qb", "query": "Como cancelo a assinatura?", "relevantIds": ["d8"]}]
#: run name -> question -> ranked docs (scores descending); names chosen so a test can look for them
RUNS = {"denso_xyz": {"qa": ["d2", "d1", "d3"], "qb": ["d4", "d5", "d6"]},
        "bm25_qwe": {"qa": ["d3", "d4", "d2"], "qb": ["d5", "d7", "d4"]}}


def write_run(path: Path, name: str, run: dict) -> Path:
    lines = [f"{q} Q0 {d} {r} {10 - r + 0.123456:.6f} {name}" for q, docs in run.items()
             for r, d in enumerate(docs, start=1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_collection(tmp_path: Path) -> dict:
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps(DOCS, ensure_ascii=False), encoding="utf-8")
    ev = tmp_path / "evaluation.json"
    ev.write_text(json.dumps(QUESTIONS, ensure_ascii=False), encoding="utf-8")
    runs = [write_run(tmp_path / f"{name}.trec", name, run) for name, run in RUNS.items()]
    return {"documents": docs, "evaluation": ev, "runs": runs, "dir": tmp_path}
