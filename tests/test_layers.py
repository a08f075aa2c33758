"""The packages of gabarito are floors: a module imports only from its own floor or the floors
below it, so no import climbs and no two packages import each other (read with ``ast``, function-
level imports included).

Floors, lowest first: ``core`` (``gabarito/core/`` and the single modules ``gabarito/*.py`` such
as ``errors``, ``files``, ``hashing``, ``paths``), ``inputs``, ``retrieval``, ``measure``, ``study``,
``evaluation``, ``judging`` (pools, the judging page and graded qrels of a user's own runs), ``publish``,
and ``cli`` on top (docs/architecture.md)."""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import gabarito

PACKAGE = Path(gabarito.__file__).parent
FLOORS = ("core", "inputs", "retrieval", "measure", "study", "evaluation", "judging", "publish", "cli")


def floor_of(module: str) -> str | None:
    """The floor of a dotted module name inside gabarito (None: not gabarito's)."""
    parts = module.split(".")
    if parts[0] != "gabarito":
        return None
    if len(parts) == 1:
        return "core"
    if (PACKAGE / parts[1]).is_dir():
        return parts[1]
    return "cli" if parts[1] in ("cli", "__main__") else "core"


def _module_name(path: Path, root: Path = PACKAGE) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imported(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of a file; ``from gabarito import x`` counts as
    ``gabarito.x`` and relative imports are resolved."""
    here = _module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return out


def import_edges(root: Path = PACKAGE) -> list[tuple[str, str, str]]:
    """``(from floor, to floor, "file:line module")`` of every import between two floors."""
    edges = []
    for path in sorted(root.rglob("*.py")):
        source = floor_of(_module_name(path, root))
        for line, module in _imported(path, root):
            target = floor_of(module)
            if target is not None and target != source:
                edges.append((source, target, f"{path.relative_to(root.parent)}:{line} {module}"))
    return edges


def upward(edges) -> list[str]:
    return [f"{where} ({a} -> {b})" for a, b, where in edges
            if a not in FLOORS or b not in FLOORS or FLOORS.index(b) > FLOORS.index(a)]


def circles(edges) -> list[tuple[str, str]]:
    """Pairs of floors that reach each other through the import graph."""
    graph = defaultdict(set)
    for a, b, _ in edges:
        graph[a].add(b)

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    reached = {floor: reach(floor) for floor in list(graph)}
    return sorted((a, b) for a in reached for b in reached[a] if a < b and a in reached.get(b, ()))


def test_every_package_has_a_floor():
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(FLOORS), f"place {sorted(packages - set(FLOORS))} in FLOORS (tests/test_layers.py)"


def test_no_import_climbs_a_floor():
    assert upward(import_edges()) == []


def test_no_circle_between_packages():
    assert circles(import_edges()) == []


def test_the_checks_catch_a_climb_and_a_circle():
    """The rules fail on a made-up tree with an upward import and a circle."""
    edges = [("inputs", "measure", "gabarito/inputs/x.py:1 gabarito.measure.runs"),
             ("measure", "inputs", "gabarito/measure/y.py:2 gabarito.inputs.gold"),
             ("retrieval", "core", "gabarito/retrieval/z.py:3 gabarito.core.runs")]
    assert upward(edges) == ["gabarito/inputs/x.py:1 gabarito.measure.runs (inputs -> measure)"]
    assert circles(edges) == [("inputs", "measure")]


@pytest.mark.parametrize("module,floor", [("gabarito", "core"), ("gabarito.errors", "core"),
                                          ("gabarito.core.runs", "core"), ("gabarito.cli", "cli"),
                                          ("gabarito.measure.metrics", "measure"), ("numpy", None)])
def test_floor_of(module, floor):
    assert floor_of(module) == floor


def test_relative_and_lazy_imports_are_read(tmp_path):
    pkg = tmp_path / "gabarito" / "retrieval"
    pkg.mkdir(parents=True)
    (tmp_path / "gabarito" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text("def f():\n    from ..measure import stats\n    import gabarito.study.spec\n")
    found = [m for _, m in _imported(pkg / "m.py", tmp_path / "gabarito")]
    assert found == ["gabarito.measure.stats", "gabarito.study.spec"]



# -- case studies are leaves ------------------------------------------------------------------------

STUDIES = PACKAGE.parent / "case-studies"


def study_imports(root: Path = STUDIES) -> list[str]:
    """``file:line module`` of every import by a study of another study (``studies.<other>``):
    a study imports only itself, the library and third-party packages."""
    out = []
    for path in sorted(root.glob("*/**/*.py")):
        own = path.relative_to(root).parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            for name in names:
                parts = name.split(".")
                if parts[0] == "studies" and len(parts) > 1 and parts[1] != own:
                    out.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return out


def test_a_study_imports_no_other_study():
    assert study_imports() == []


def test_the_study_check_catches_a_cross_study_import(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.py").write_text("from studies.one import b\nimport studies.one.c\n", encoding="utf-8")
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "x.py").write_text("def f():\n    from studies.one.findings import g\n", encoding="utf-8")
    assert study_imports(tmp_path) == ["two/x.py:2 studies.one.findings"]
