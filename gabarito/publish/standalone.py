"""One self-contained Portuguese page: the shell of the pages ``gabarito evaluate`` and
``gabarito compare`` write (:mod:`gabarito.publish.run_page`, :mod:`gabarito.publish.compare_page`).

The page carries everything inline, so it opens from ``file://`` with no network: the site's own
stylesheet and script (``site/assets/gabarito.css`` and ``gabarito.js``: tables that scroll in
their box, per-question tables as cards on a phone), a few base rules that stand in for the site's
theme. Its figures are inline SVG (:mod:`gabarito.publish.svg`): no plotly.js, no script of their own,
so a page weighs what its tables do. A Content-Security-Policy forbids every request beyond the file
itself.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Iterable, Sequence

from gabarito.evaluation.compare import run_settings
from gabarito.publish import labels
from gabarito.publish.formatting import Html, code, short_hash, text

ASSETS = Path(__file__).parent / "site" / "assets"
#: No request beyond the file: inline styles and scripts, images as data.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; font-src data:"

#: What the site's theme (Bootstrap) gives the pages and a page alone must bring.
BASE_CSS = """
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 1rem; line-height: 1.5; color: #212529; background: #fff; }
main.content { max-width: 60rem; margin: 0 auto; padding: 1rem 1rem 3rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.3rem; margin: 2rem 0 .75rem; border-bottom: 1px solid #dee2e6; padding-bottom: .25rem; }
h3 { font-size: 1.1rem; margin: 1.25rem 0 .5rem; }
table.table { border-collapse: collapse; width: 100%; font-size: .92rem; }
table.table th, table.table td { border-bottom: 1px solid #dee2e6; vertical-align: top; }
table.table thead th { border-bottom: 2px solid #adb5bd; }
caption { caption-side: top; text-align: left; color: #475569; font-size: .9rem; }
code { font-size: .88em; background: #f1f5f9; padding: 0 .2em; border-radius: .2em; overflow-wrap: anywhere; }
.gabarito-note { color: #475569; font-size: .92rem; }
.gabarito-warning { border-left: 4px solid #c2410c; background: #fff7ed; padding: .4rem .8rem; margin: .75rem 0; }
.acerto { color: #166534; font-weight: 600; }
.erro { color: #b91c1c; font-weight: 600; }
.gabarito-returned { margin: 0; padding-left: 1.4rem; }
figure.gabarito-svg { margin: .5rem 0 1rem; }
"""


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _inline_script(source: str) -> str:
    """A script's text that cannot close its ``<script>`` element early."""
    return source.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


def page(title: str, body: Iterable[str]) -> str:
    """The whole page: ``title`` (plain text) and the body's parts (HTML, figures as inline SVG),
    with the site's stylesheet and script inline."""
    head = [
        '<!DOCTYPE html>', '<html lang="pt-BR">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{text(title)}</title>",
        f"<style>{BASE_CSS}\n{_asset('gabarito.css')}</style>", "</head>",
    ]
    return "\n".join([*head, '<body><main class="content">', *body, "</main>",
                      f"<script>{_inline_script(_asset('gabarito.js'))}</script>", "</body></html>\n"])


# --- words for a run's settings -------------------------------------------------------------------

def term_or_text(kind: str, key: object) -> Html:
    """A closed-vocabulary word (:func:`labels.term`), or the user's own value as written (a type
    or severity a user's evaluation file names), in ``<code>``."""
    try:
        return text(labels.term(kind, key))
    except Exception:  # not in the site's vocabulary: the user's own word, shown as theirs
        return code(key)


def model_name(model_id: str | None, engine: str | None = None) -> Html:
    if not model_id:
        return text("—")
    try:
        return text(f"{labels.model(model_id, engine)} ") + code(model_id)
    except Exception:
        return code(model_id)


def setting_value(name: str, record: dict) -> Html:
    """How a page shows the value of one setting (:data:`gabarito.evaluation.compare.VARIABLES` and
    the recorded details) of a run record."""
    value = run_settings(record).get(name)
    if value is None:
        return text("—")
    if name == "method":
        return text(labels.METHODS.get(value, value)) if value in labels.METHODS else code(value)
    if name == "segmentation":
        try:
            return text(labels.segmentation(value))
        except Exception:
            return code(value)
    if name in ("engine", "analyzer"):
        return term_or_text(name, value)
    if name == "model":
        return model_name(value, (record.get("model") or {}).get("engine") or "")
    if name in ("corpus", "model_settings", "reranker_weights"):
        return code(short_hash(str(value)), whole=True)
    if isinstance(value, bool):
        return text("sim" if value else "não")
    return code(value)


def setting_name(name: str) -> str:
    """A setting's Portuguese name, first letter up (``constante do RRF`` keeps its capitals)."""
    word = labels.term("setting", name)
    return word[:1].upper() + word[1:]


#: Settings that apply only to some runs, and when (from the run's config).
ONLY_WITH = {"rrf_k": lambda cfg: cfg.get("method") == "hybrid",
             "fusion": lambda cfg: cfg.get("method") == "hybrid",
             "fusion_in": lambda cfg: cfg.get("method") == "hybrid",
             "rerank_n": lambda cfg: bool(cfg.get("reranker")),
             "analyzer": lambda cfg: cfg.get("method") != "dense"}


def used_settings(record: dict, names: Sequence[str]) -> list[str]:
    """The settings of ``names`` the run used: the fusion's only in a fusion, the number of
    candidates read again only with a reader, an analyzer only where BM25 ran."""
    cfg = record["config"]
    return [n for n in names if n not in ONLY_WITH or ONLY_WITH[n](cfg)]


def definition_list(items: Sequence[tuple[str, object]]) -> Html:
    """``<dl>`` of (Portuguese name, value) in the site's provenance box style."""
    rows = "".join(f"<dt>{text(k)}</dt><dd>{v if isinstance(v, Html) else text(v)}</dd>" for k, v in items)
    return Html(f'<div class="gabarito-provenance"><dl>{rows}</dl></div>')


