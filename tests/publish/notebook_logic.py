"""What a notebook's code does that belongs in a findings module (issue 40 item 6): counted by
reading the cells, never by running them.

- ``lambda``: a function typed in a cell (an ``ast.Lambda``);
- ``raw read``: a dict read with a string key (``res["collections"]["adi"]["metrics"]``) on a name
  bound from ``load_results(...)`` or ``load_json(...)``, or from such a read (a chain is counted once, at its top);
- ``threshold``: a number typed inside a comparison (``p < 0.05``, ``len(a) * 2 < len(b)``,
  ``diff > 0.01``); ``0`` and ``1`` compared as such are signs and emptiness, not thresholds, and
  an index (``x[0]``) inside a comparison is not one either;
- ``count word``: a count written as a word before what it counts (``cinco coleções``), in a
  markdown cell or in the text a code cell writes into the page;
- ``key split``: a key taken apart at one of the separators results keys are built with
  (``key.split("@")``, ``run.split("_")``, ``c.split("/")``): a method, run or configuration is
  named by the fields its findings return, never by its key's spelling.

Each case is named by its notebook, its kind and its text (not its cell's place, which other edits
move). ``python tests/publish/notebook_logic.py`` prints the counts per notebook; ``--allow`` writes
the cases found now as :data:`ALLOWED` (the list of the cases not yet moved, which may only shrink).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted(REPO.glob("*.ipynb"))
KINDS = ("lambda", "raw read", "threshold", "count word", "key split")
#: The separators results keys are built with (``rrf@10``, ``cold_auto``, ``minilm/bce``, ``bm25+ce@20``).
KEY_SEPARATORS = frozenset({"@", "_", "/", "+", ":"})
#: The cases not yet moved into findings, by notebook, kind and text, with how often each stands there.
ALLOWED = Path(__file__).with_name("notebook_logic_allowed.json")

#: the calls whose result is a loaded results file (a study's results, or another file a page reads:
#: a frozen gold, its lock, a benchmark's JSON)
LOADERS = frozenset({"load_results", "load_json"})
_WORDS = ("duas", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez", "onze", "doze",
          "treze", "catorze", "quatorze", "quinze", "vinte", "trinta", "quarenta", "cinquenta", "cem", "mil")
_NOUNS = ("vetor(?:es)?", "dimens(?:ão|ões)", "perguntas?", "passage(?:m|ns)", "documentos?", "consultas?",
          "cole(?:ção|ções)", "modelos?", "minutos?", "segundos?", "trechos?", "conjuntos?", "métodos?",
          "leitor(?:es)?", "estudos?", "motor(?:es)?", "rodadas?", "avaliador(?:es|as)?", "pacotes?", "medidas?", "reamostragens?")
#: the words that may stand between a count and what it counts ("dois novos avaliadores", "dez primeiros documentos")
_BETWEEN = ("nov[oa]s", "outr[oa]s", "primeir[oa]s", "últim[oa]s", "mesm[oa]s", "mil")
COUNT_WORD = re.compile(r"(?<!\w)(?:" + "|".join(_WORDS) + r")\s+(?:(?:" + "|".join(_BETWEEN) + r")\s+)?(?:"
                        + "|".join(_NOUNS) + r")(?!\w)", re.I)
_WRITES_PROSE = re.compile(r"\b(?:Markdown|HTML)\(")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return None


def _base(node: ast.AST) -> ast.AST:
    """The value under a chain of subscripts, attribute reads and method calls (``a["x"].get(...)``)."""
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return node


def _string_key(node: ast.Subscript) -> bool:
    return isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in _targets(e)]
    return []


class _Reader(ast.NodeVisitor):
    """One notebook's code, cell after cell: the names that hold results and what is found."""

    def __init__(self):
        self.results: set[str] = set()
        self.found: list[tuple[str, int, str]] = []  # (kind, cell, text)
        self.cell = 0

    def _holds_results(self, value: ast.AST) -> bool:
        if _call_name(value) in LOADERS:
            return True
        base = _base(value)
        return isinstance(base, ast.Name) and base.id in self.results and base is not value

    def visit_Assign(self, node: ast.Assign) -> None:
        if self._holds_results(node.value):
            for t in node.targets:
                self.results.update(_targets(t))
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        if self._holds_results(node.iter):
            self.results.update(_targets(node.target))
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        if self._holds_results(node.iter):
            self.results.update(_targets(node.target))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr in ("split", "rsplit", "partition", "rpartition") and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value in KEY_SEPARATORS):
            self.found.append(("key split", self.cell, ast.unparse(node)))
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.found.append(("lambda", self.cell, ast.unparse(node)))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        chain, inner = [], node
        while isinstance(inner, ast.Subscript):
            chain.append(inner)
            inner = inner.value
        base = _base(node)
        if any(_string_key(s) for s in chain) and isinstance(base, ast.Name) and base.id in self.results:
            self.found.append(("raw read", self.cell, ast.unparse(node)))
            for s in chain:  # the chain is one read: look inside its keys only
                self.visit(s.slice)
            self.visit(inner)
            return
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        indexes = {id(n) for s in ast.walk(node) if isinstance(s, ast.Subscript) for n in ast.walk(s.slice)}
        for c in ast.walk(node):
            if (isinstance(c, ast.Constant) and type(c.value) in (int, float) and id(c) not in indexes
                    and not (c.value in (0, 1) and _compared_as_such(node, c))):
                self.found.append(("threshold", self.cell, ast.unparse(node)))
        self.generic_visit(node)


def _compared_as_such(node: ast.Compare, const: ast.Constant) -> bool:
    """``x > 0``, ``n == 1``: the constant is itself a side of the comparison (or negated)."""
    sides = [node.left, *node.comparators]
    return any(s is const or (isinstance(s, ast.UnaryOp) and s.operand is const) for s in sides)


def _strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def findings(path: Path) -> list[tuple[str, int, str]]:
    """``(kind, cell index, what)`` for each case in the notebook at ``path``."""
    reader = _Reader()
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        src = _source(cell)
        reader.cell = i
        if cell.get("cell_type") == "markdown":
            reader.found += [("count word", i, " ".join(m.group(0).split())) for m in COUNT_WORD.finditer(src)]
            continue
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        reader.visit(tree)
        if _WRITES_PROSE.search(src):
            reader.found += [("count word", i, " ".join(m.group(0).split()))
                             for s in _strings(tree) for m in COUNT_WORD.finditer(s)]
    return reader.found


def counts(path: Path) -> Counter:
    return Counter(kind for kind, _, _ in findings(path))


def named(path: Path) -> Counter:
    """The notebook's cases as ``(kind, text)`` with how often each stands there."""
    return Counter((kind, text) for kind, _, text in findings(path))


def allowed() -> dict[str, Counter]:
    """:data:`ALLOWED` as ``{notebook: Counter((kind, text))}``."""
    data = json.loads(ALLOWED.read_text(encoding="utf-8"))
    return {nb: Counter({(kind, text): n for kind, texts in by_kind.items() for text, n in texts.items()})
            for nb, by_kind in data.items()}


def write_allowed() -> None:
    out = {}
    for nb in NOTEBOOKS:
        by_kind: dict[str, dict[str, int]] = {}
        for (kind, text), n in sorted(named(nb).items()):
            by_kind.setdefault(kind, {})[text] = n
        if by_kind:
            out[nb.relative_to(REPO).as_posix()] = by_kind
    ALLOWED.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import sys

    if "--allow" in sys.argv:
        write_allowed()
    for nb in NOTEBOOKS:
        c = counts(nb)
        print(f"{nb.relative_to(REPO)}: " + ", ".join(f"{k} {c.get(k, 0)}" for k in KINDS))
