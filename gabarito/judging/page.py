"""The judging page: one self-contained HTML file per pool and assessor.

The page (``assets/judge.html``, ``judge.css``, ``judge.js``, all inlined) shows one question and
one candidate at a time, the grading guide beside it (a collapsible panel, open on a wide screen),
takes the grades 0/1/2 from the keyboard or buttons, undoes the last one, shows the progress,
keeps the grades in the browser's local storage under the pool's sha256 and the assessor's name
(so a reload resumes), and exports them as a ``gabarito.grades/1`` JSON file
(:mod:`gabarito.judging.grades`). Its Content-Security-Policy allows no request at all; it works
from ``file://``. It embeds only the question and candidate texts and the pair ids: the pool file
holds nothing about runs, ranks, scores or known answers, and the page would show nothing of it.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Mapping

from gabarito.errors import GabaritoError
from gabarito.judging.markdown import to_html
from gabarito.judging.staging import staging

ASSETS = Path(__file__).with_name("assets")
#: the template's markers, each replaced once by :func:`page_html`
MARKER = re.compile(r"__(?:CSS|JS|GUIDE|DATA|ASSESSOR|SHORT_SHA|TOTAL)__")
DEFAULT_GUIDE = ASSETS / "guia_de_avaliacao.md"


def _script_json(obj: object) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def page_html(pool: Mapping, pool_sha256: str, assessor: str, guide_markdown: str) -> str:
    """The page's HTML for ``pool`` (as :func:`gabarito.judging.pool.read_pool` returns it)."""
    assessor = " ".join(str(assessor).split())
    if not assessor:
        raise GabaritoError("the assessor needs a name (--assessor)")
    questions = [{"id": q["id"], "text": q["text"],
                  "candidates": [{"pair": c["pair"], "doc": c["doc"], "title": c.get("title") or ""}
                                 for c in q["candidates"]]}
                 for q in pool["questions"]]
    # each document once, as escaped HTML (Markdown rendered: headings, lists, tables)
    docs = {c["doc"]: to_html(c.get("text") or "") for q in pool["questions"] for c in q["candidates"]}
    data = {"pool_sha256": pool_sha256, "assessor": assessor, "questions": questions, "docs": docs}
    template = (ASSETS / "judge.html").read_text(encoding="utf-8")
    parts = {
        "__CSS__": (ASSETS / "judge.css").read_text(encoding="utf-8"),
        "__JS__": (ASSETS / "judge.js").read_text(encoding="utf-8"),
        "__GUIDE__": to_html(guide_markdown),
        "__DATA__": _script_json(data),
        "__ASSESSOR__": html.escape(assessor),
        "__SHORT_SHA__": pool_sha256[:12],
        "__TOTAL__": str(sum(len(q["candidates"]) for q in questions)),
    }
    # one pass over the template only: a marker inside a substituted text (a guide or an assessor
    # named "__DATA__") is text, never substituted in turn
    return MARKER.sub(lambda m: parts[m.group(0)], template)


def page_head() -> bytes:
    """What every page written here starts with: the template up to its first marker."""
    template = (ASSETS / "judge.html").read_text(encoding="utf-8")
    return template[:MARKER.search(template).start()].encode("utf-8")


def check_page_out(out: str | Path) -> None:
    """Refuse an ``--out`` the page must not replace: a folder, anything that is not a regular file
    (a FIFO, a device), or a file that is not a judging page written here (an exported grades file,
    say: replacing it would lose the grades). A page written here is replaced."""
    out = Path(out)
    if out.is_dir():
        raise GabaritoError("is a folder: --out names the page file to write (e.g. ana.html)", path=out)
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_file() or out.is_symlink():
        raise GabaritoError("exists and is not a regular file (a FIFO, a device, a link): --out names the page "
                            "file to write; choose another --out", path=out)
    head = page_head()
    with open(out, "rb") as f:
        if f.read(len(head)) != head:
            raise GabaritoError("already exists and is not a judging page: choose another --out", path=out)


def write_page(out: str | Path, pool: Mapping, pool_sha256: str, assessor: str,
               guide: str | Path | None = None) -> Path:
    """Write the judging page to ``out`` (atomically), with ``guide`` (Markdown) or the default guide."""
    guide_path = Path(guide) if guide is not None else DEFAULT_GUIDE
    try:
        guide_text = guide_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GabaritoError("grading guide not found", path=guide_path) from None
    except UnicodeDecodeError as exc:
        raise GabaritoError(f"grading guide is not UTF-8 text (byte {exc.start})", path=guide_path) from None
    page = page_html(pool, pool_sha256, assessor, guide_text)
    out = Path(out)
    with staging(out.parent) as stage:
        stage.write_text(out.name, page)
        stage.place([out.name], replace=[out.name])
    return out
