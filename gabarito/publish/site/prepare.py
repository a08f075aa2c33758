"""The executed notebooks as each renderer needs them: code only where it teaches, numbered figures and tables.

Code shows only where a reader runs it: :func:`show_code` hides every cell's code (``#| echo:
false``) but that of the cells that ask to show it in a section of :data:`TEACHING_SECTIONS`, and
writes the choice into each cell's ``#|`` options for both renderers, so smalldocs and Quarto show
the same.

Both renderers read the same ``#|`` options, Quarto's: a figure is a cell with
``#| label: fig-...`` and ``#| fig-cap``, a table a cell with ``#| label: tbl-...`` and
``#| tbl-cap``, and the text refers to them as ``@fig-...`` / ``@tbl-...``. Quarto numbers
them itself. smalldocs 0.5.4 numbers nothing and captions only images, so for it
:func:`number_floats` writes Quarto's float markup around the output (``Figura 1: ...``,
``Tabela 2: ...``) and replaces every reference by a link. :func:`check_floats` refuses, for
both renderers, a caption without a label (Quarto would show it as a stray paragraph) and a
reference to a label that does not exist.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.publish.plots import FIGURE_MARKER
from gabarito.publish.site.project import front_matter, html_options

#: Float kinds: label prefix -> (the word before the number, the caption option).
FLOATS = {"fig": ("Figura", "fig-cap"), "tbl": ("Tabela", "tbl-cap")}
_REF = re.compile(r"(?<![\w\\@/])@((?:fig|tbl)-[A-Za-z0-9_-]*[A-Za-z0-9])")


def source(cell) -> str:
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def cell_options(src: str) -> dict:
    """The ``#| key: value`` options at the top of a code cell."""
    import yaml

    head = []
    for line in src.split("\n"):
        if not line.startswith("#|"):
            break
        head.append(line[2:].strip())
    try:
        opts = yaml.safe_load("\n".join(head)) if head else {}
    except yaml.YAMLError:
        return {}
    return opts if isinstance(opts, dict) else {}


def _drop_options(cell, names: set[str]) -> None:
    lines = source(cell).split("\n")
    i = 0
    kept = []
    while i < len(lines) and lines[i].startswith("#|"):
        key = lines[i][2:].split(":", 1)[0].strip()
        if key not in names:
            kept.append(lines[i])
        i += 1
    cell.source = "\n".join(kept + lines[i:])


#: The sections whose code a reader runs: only there may a cell show its code, by Quarto's own option
#: ``#| echo: true`` (or ``#| code-fold: false``). Everywhere else a cell's output is what the page
#: says, and its code is hidden entirely (``#| echo: false``, the project's ``execute`` default).
TEACHING_SECTIONS = ("Instale e rode", "O mecanismo mínimo", "Reproduzir")
_HEADING = re.compile(r"^##\s+(.+?)\s*(?:\{[^}]*\})?\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def cell_sections(nb) -> list[str]:
    """The ``##`` heading each cell sits under (``""`` before the first), code fences skipped."""
    out, current = [], ""
    for cell in nb.cells:
        out.append(current)
        if cell.cell_type != "markdown":
            continue
        fence = None
        for line in source(cell).split("\n"):
            m = _FENCE.match(line)
            if m and (fence is None or m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)):
                fence = None if fence else m.group(1)
            elif fence is None and (h := _HEADING.match(line)):
                current = h.group(1)
    return out


def shows_code(opts: dict) -> bool:
    """Whether a cell's own options ask to show its code: ``echo`` other than false, or ``code-fold:
    false``/``show`` with no ``echo``."""
    echo = opts.get("echo")
    if echo is not None:
        return echo is not False and str(echo).lower() != "false"
    return str(opts.get("code-fold")).lower() in ("false", "show")


def show_code(nb, cfg: dict, path: Path | str):
    """Write each code cell's choice into its ``#|`` options, for both renderers: ``echo: false``, or,
    for a cell that teaches (:func:`shows_code`, under one of :data:`TEACHING_SECTIONS`), ``echo: true``
    with the page's ``code-fold``/``code-summary`` unless it sets its own (smalldocs 0.5.4 folds a
    notebook's cell only when the cell itself says so). A cell that asks to show its code anywhere else
    is refused, naming it."""
    front = front_matter(nb)
    fmt = front.get("format")
    page_html = fmt.get("html") if isinstance(fmt, dict) and isinstance(fmt.get("html"), dict) else {}
    opts = {**html_options(cfg), **{k: v for k, v in front.items() if k != "format"}, **page_html}
    fold = opts.get("code-fold")
    fold = "false" if fold in (None, False, "false") else "true" if fold is True else str(fold)
    summary = str(opts.get("code-summary") or "Code").replace('"', "'")
    for i, (cell, section) in enumerate(zip(nb.cells, cell_sections(nb))):
        if cell.cell_type != "code":
            continue
        own = cell_options(source(cell))
        if not shows_code(own):
            _drop_options(cell, {"echo", "code-fold", "code-summary"})
            cell.source = "#| echo: false\n" + source(cell)
            continue
        if section not in TEACHING_SECTIONS:
            where = f"under '{section}'" if section else "before the first section"
            raise GabaritoError(f"cell {i} shows its code {where}: code shows only in the sections that teach "
                                f"({', '.join(TEACHING_SECTIONS)}); drop its echo/code-fold option", path=path)
        extra = [] if "echo" in own else ["#| echo: true"]
        if "code-fold" not in own:
            extra.append(f"#| code-fold: {fold}")
        folds = str(own.get("code-fold", fold)).lower() not in ("false", "none")
        if "code-summary" not in own and folds:
            extra.append(f'#| code-summary: "{summary}"')
        cell.source = "\n".join(extra + [source(cell)])
    return nb


def floats(nb) -> list[tuple[object, str, str, str]]:
    """``(cell, label, kind, caption)`` of every labelled figure and table, in page order."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        opts = cell_options(source(cell))
        label = str(opts.get("label") or "")
        kind = label.split("-", 1)[0] if "-" in label else ""
        if kind in FLOATS:
            out.append((cell, label, kind, str(opts.get(FLOATS[kind][1]) or "")))
    return out


def _texts(nb):
    """Every piece of Markdown a page shows: markdown cells and Markdown outputs."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            yield source(cell)
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            value = (out.get("data") or {}).get("text/markdown")
            if value:
                yield "".join(value) if isinstance(value, list) else value


def check_floats(nb, path: Path | str) -> None:
    """Refuse captions without a ``fig-``/``tbl-`` label, labels without a caption, a figure or
    table cell that shows more than one output, repeated labels and references to labels the page does not have."""
    seen: set[str] = set()
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        opts = cell_options(source(cell))
        label = str(opts.get("label") or "")
        for kind, (_, cap) in FLOATS.items():
            if opts.get(cap) and not label.startswith(f"{kind}-"):
                raise GabaritoError(f"cell {i} has {cap} but no '#| label: {kind}-...': Quarto would not make "
                                    "it a caption", path=path)
            if label.startswith(f"{kind}-") and not opts.get(cap):
                raise GabaritoError(f"cell {i} is labelled {label} but has no {cap}", path=path)
        shown = [o for o in cell.get("outputs") or [] if o.get("output_type") in ("display_data", "execute_result")]
        if label.startswith(("fig-", "tbl-")) and len(shown) > 1:
            kind = "subfigures" if label.startswith("fig-") else "sub-tables"
            raise GabaritoError(f"cell {i} ({label}) shows {len(shown)} outputs: Quarto would make {kind} of "
                                "them and move the caption; give the notes a cell of their own", path=path)
        if label in seen:
            raise GabaritoError(f"label {label} is used twice", path=path)
        if label:
            seen.add(label)
    for text in _texts(nb):
        for ref in _REF.findall(text):
            if ref not in seen:
                raise GabaritoError(f"@{ref} refers to no figure or table of this page", path=path)


def _float_html(label: str, kind: str, n: int, caption: str, body: str) -> str:
    word = FLOATS[kind][0]
    where = "top" if kind == "tbl" else "bottom"
    cap = (f'<figcaption class="quarto-float-caption-{where} quarto-float-caption quarto-float-{kind}" '
           f'id="{label}-caption">{word}&nbsp;{n}: {html.escape(caption)}</figcaption>')
    inner = f'<div aria-describedby="{label}-caption">\n{body}\n</div>'
    parts = (cap, inner) if where == "top" else (inner, cap)
    return (f'<div id="{label}" class="quarto-float quarto-figure quarto-figure-center anchored">\n'
            f'<figure class="quarto-float quarto-float-{kind} figure">\n{parts[0]}\n{parts[1]}\n</figure>\n</div>')


def _is_float_output(kind: str, value: str) -> bool:
    if kind == "fig":
        return FIGURE_MARKER in value or "<svg" in value
    return "<table" in value


def number_floats(nb):
    """For smalldocs: wrap each labelled output in Quarto's float markup with its number and
    caption, and turn every ``@fig-...``/``@tbl-...`` into a link ``Figura N``/``Tabela N``."""
    numbers: dict[str, str] = {}
    count = {k: 0 for k in FLOATS}
    for cell, label, kind, caption in floats(nb):
        count[kind] += 1
        numbers[label] = f"{FLOATS[kind][0]}&nbsp;{count[kind]}"
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            value = data.get("text/html")
            value = "".join(value) if isinstance(value, list) else value
            if value and _is_float_output(kind, value):
                data["text/html"] = _float_html(label, kind, count[kind], caption, value)
                break
        _drop_options(cell, {"label", "fig-cap", "tbl-cap"})

    def link(m: re.Match) -> str:
        return f'<a href="#{m.group(1)}" class="quarto-xref">{numbers.get(m.group(1), m.group(0))}</a>'

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _REF.sub(link, source(cell))
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = out.get("data") or {}
            if data.get("text/markdown"):
                value = data["text/markdown"]
                data["text/markdown"] = _REF.sub(link, "".join(value) if isinstance(value, list) else value)
    return nb
