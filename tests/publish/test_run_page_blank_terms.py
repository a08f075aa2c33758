"""The run page (`relatorio.html` of `gabarito evaluate`) when a question names no type or severity."""

import json
import re
import subprocess
import sys

DOCS = [{"id": "d1", "title": "Senha", "text": "Para trocar a senha, abra Conta."},
        {"id": "d2", "title": "Fatura", "text": "Faturas ficam em Pagamentos."},
        {"id": "d3", "title": "Plano", "text": "Mudar o plano da assinatura."}]
QUESTIONS = [{"_id": "q1", "query": "trocar senha", "relevantIds": ["d1"], "type": "minha_categoria", "severity": "alta"},
             {"_id": "q2", "query": "faturas pagamentos", "relevantIds": ["d2"]},
             {"_id": "q3", "query": "plano assinatura", "relevantIds": ["d3"], "type": "", "severity": None}]


def test_a_question_without_type_or_severity_reads_sem_tipo_never_an_empty_chip(tmp_path):
    """Issue 42 item 10: six empty `<code></code>` chips (two per blank question, one per blank group)."""
    (tmp_path / "docs.json").write_text(json.dumps(DOCS), encoding="utf-8")
    (tmp_path / "q.json").write_text(json.dumps(QUESTIONS), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "gabarito.cli", "evaluate", "--documents", "docs.json", "--evaluation",
                           "q.json", "--method", "bm25", "--out", "run", "--log", "log.jsonl"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    html = (tmp_path / "run" / "relatorio.html").read_text(encoding="utf-8")
    assert not re.search(r"<code[^>]*>\s*</code>", html)
    assert "<code>None</code>" not in html
    questions = html.split('id="perguntas"')[1].split("</table>")[0]
    assert questions.count("sem tipo") == 2 and questions.count("sem gravidade") == 2
    assert "<code>minha_categoria</code>" in questions  # a user's own word is still shown as theirs
    for key, word in (("type", "sem tipo"), ("severity", "sem gravidade")):
        table = html.split(f'id="erros-{key}"')[1].split("</table>")[0]
        assert table.count(word) == 1
