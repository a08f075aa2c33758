"""Which results files a part of a notebook draws from, read from its code (no execution).

A chapter loads its results with ``load_results(folder, name)`` or ``load_json(path)`` and derives
everything else from them. :func:`section_sources` follows that flow through the notebook's code
cells in order: a name assigned from an expression holds the files of every name the expression
reads (plus the files its own loads name), an augmented assignment adds to them, a loop variable
holds its iterable's files. The files a section (the cells under a ``## heading``, up to the next
one) draws from are the files of every name its cells read. A path the code builds at run time
(``STUDIES / name``, ``f"{x}.json"``) keeps ``*`` where the part is unknown.

It is what :mod:`gabarito.publish.claims` checks against each study's declared plan: a section
that reads an exploratory file, a cell that labels an unadjusted p "p de Holm".
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

LOADERS = {"load_results", "load_json"}
UNKNOWN = "*"


@dataclass(frozen=True)
class Source:
    """A results file as ``(study, file)``, ``*`` for a part the code computes at run time."""

    study: str
    file: str


@dataclass
class _Flow:
    files: dict[str, frozenset] = field(default_factory=dict)  # name -> Sources it holds
    paths: dict[str, str] = field(default_factory=dict)  # name -> the path string it holds


def _code(cell: dict) -> str:
    src = "".join(cell.get("source", []))
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines())


def _path_of(node: ast.AST, flow: _Flow) -> str:
    """The path an expression builds, ``*`` for what only the run knows."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return flow.paths.get(node.id, UNKNOWN)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Path" and node.args:
        return _path_of(node.args[0], flow)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return posixpath.join(_path_of(node.left, flow), _path_of(node.right, flow))
    if isinstance(node, ast.Attribute) and node.attr in ("name", "parent"):
        inner = _path_of(node.value, flow)
        return posixpath.basename(inner) if node.attr == "name" else posixpath.dirname(inner)
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else UNKNOWN for v in node.values)
    return UNKNOWN


def _source(path: str, studies: set[str]) -> Source:
    parts = [p for p in posixpath.normpath(path).split("/") if p not in ("", ".", "..")]
    for i, part in enumerate(parts):
        if part in studies or (part == UNKNOWN and i > 0 and parts[i - 1] == "case-studies"):
            return Source(part, "/".join(parts[i + 1:]) or "results.json")
    return Source(UNKNOWN, "/".join(parts[-1:]) or UNKNOWN)


def _loads(node: ast.AST, flow: _Flow, studies: set[str]) -> set[Source]:
    out = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in LOADERS and call.args:
            path = _path_of(call.args[0], flow)
            if call.func.id == "load_results":
                name = _path_of(call.args[1], flow) if len(call.args) > 1 else "results.json"
                path = posixpath.join(path, name)
            out.add(_source(path, studies))
    return out


def _read(node: ast.AST, flow: _Flow) -> set[Source]:
    return {s for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            for s in flow.files.get(n.id, ())}


def _targets(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def _step(stmt: ast.stmt, flow: _Flow, studies: set[str]) -> set[Source]:
    """Run one statement on the flow; return the files it reads."""
    read = _read(stmt, flow) | _loads(stmt, flow, studies)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for t in targets:
            pairs = (list(zip(t.elts, stmt.value.elts)) if isinstance(t, ast.Tuple) and isinstance(stmt.value, ast.Tuple)
                     and len(t.elts) == len(stmt.value.elts) else [(t, stmt.value)])
            for target, value in pairs:
                held = frozenset(_read(value, flow) | _loads(value, flow, studies))
                path = _path_of(value, flow)
                for name in _targets(target):
                    flow.files[name] = held
                    if path != UNKNOWN and isinstance(target, ast.Name):
                        flow.paths[name] = path
    elif isinstance(stmt, ast.AugAssign):
        for name in _targets(stmt.target):
            flow.files[name] = flow.files.get(name, frozenset()) | _read(stmt.value, flow)
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        for name in _targets(stmt.target):
            flow.files[name] = frozenset(_read(stmt.iter, flow))
        for inner in stmt.body + stmt.orelse:
            read |= _step(inner, flow, studies)
    elif isinstance(stmt, (ast.If, ast.With, ast.Try)):
        for inner in [*getattr(stmt, "body", []), *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])]:
            read |= _step(inner, flow, studies)
    return read


_HEADING = re.compile(r"^##\s+(.+?)\s*$", re.M)


def cell_sources(notebook: str | Path, studies: set[str]) -> list[tuple[dict, set[Source]]]:
    """Every cell of the notebook with the files it reads (markdown cells: none)."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    flow, out = _Flow(), []
    for cell in nb.get("cells", []):
        read: set[Source] = set()
        if cell.get("cell_type") == "code":
            try:
                tree = ast.parse(_code(cell))
            except SyntaxError:
                tree = ast.Module(body=[], type_ignores=[])
            for stmt in tree.body:
                read |= _step(stmt, flow, studies)
        out.append((cell, read))
    return out


def section_sources(notebook: str | Path, heading: str, studies: set[str]) -> set[Source]:
    """The results files the cells under ``## heading`` read (up to the next ``##`` heading);
    ``heading=""`` for the whole notebook."""
    inside, out = not heading, set()
    for cell, read in cell_sources(notebook, studies):
        if cell.get("cell_type") == "markdown" and heading:
            found = _HEADING.findall("".join(cell.get("source", [])))
            if found:
                inside = found[-1] == heading
        if inside:
            out |= read
    return out
