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
from pathlib import Path
from typing import Mapping

from gabarito.errors import GabaritoError
from gabarito.hashing import atomic_write_text
from gabarito.judging.markdown import to_html

ASSETS = Path(__file__).with_name("assets")
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
    out = template
    for key in ("__CSS__", "__GUIDE__", "__ASSESSOR__", "__SHORT_SHA__", "__TOTAL__"):
        out = out.replace(key, parts[key])
    head, sep, tail = out.partition("__DATA__")  # data and script last: their text is never rescanned
    tail_head, sep2, tail_tail = tail.partition("__JS__")
    return head + parts["__DATA__"] + tail_head + parts["__JS__"] + tail_tail


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
    return atomic_write_text(out, page_html(pool, pool_sha256, assessor, guide_text))
