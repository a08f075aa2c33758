"""Offline: the site loads nothing from another host.

:func:`install_plotly` copies ``plotly.min.js`` from the installed plotly package into
``site_libs/plotly/`` and loads it in the head of each page with a figure; :func:`check_offline`
scans every page and stylesheet and refuses a site that would fetch anything from elsewhere.
"""

from __future__ import annotations

import html.parser
import os
import re
import shutil
from pathlib import Path, PurePosixPath

from gabarito.errors import GabaritoError
from gabarito.publish.plots import FIGURE_MARKER, plotly_js_path

#: Where plotly.js goes in the built site.
PLOTLY_JS = PurePosixPath("site_libs/plotly/plotly.min.js")


def install_plotly(site: Path) -> int:
    """Copy plotly.min.js into the site and load it in the head of each page with a figure."""
    pages = [p for p in sorted(site.rglob("*.html")) if FIGURE_MARKER in p.read_text(encoding="utf-8", errors="replace")]
    if not pages:
        return 0
    dest = site / PLOTLY_JS
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js_path(), dest)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        href = Path(os.path.relpath(dest, page.parent)).as_posix()
        tag = f'<script src="{href}" charset="utf-8"></script>'
        if tag in text:
            continue
        i = text.lower().find("</head>")
        if i < 0:
            raise GabaritoError("page has a plotly figure but no </head> to load plotly.js in", path=page)
        page.write_text(text[:i] + tag + "\n" + text[i:], encoding="utf-8")
    return len(pages)


_REMOTE = re.compile(r"^\s*(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//", re.S)
_LOCAL_HOSTS = re.compile(r"^\s*(?:https?:)?//(?:127\.0\.0\.1|localhost|\[::1\])(?:[:/]|$)", re.I)
_JS_IMPORT = re.compile(r"""\bimport\s*(?:\(\s*|[\w$*{},\s]+?\bfrom\s*)["']((?:https?:)?//[^"']+)""")
_CSS_URL = re.compile(r"""@import\s+(?:url\()?\s*["']?((?:https?:)?//[^"')\s;]+)|url\(\s*["']?((?:https?:)?//[^"')\s]+)""", re.I)
#: Tag attributes a browser loads by itself (``<a href>`` is only followed when clicked).
_LOADS = {"script": ("src",), "img": ("src", "srcset"), "iframe": ("src",), "source": ("src", "srcset"),
          "video": ("src", "poster"), "audio": ("src",), "embed": ("src",), "object": ("data",),
          "track": ("src",), "input": ("src",), "link": ("href",)}
#: ``<link rel>`` values that are metadata, never fetched.
_LINK_META = {"canonical", "alternate", "license", "author", "me", "bookmark", "external", "help", "search", "next", "prev"}


def _is_remote(url: str) -> bool:
    return bool(_REMOTE.match(url)) and not url.strip().lower().startswith(("data:", "blob:", "about:", "javascript:")) \
        and not _LOCAL_HOSTS.match(url) and url.strip().lower().startswith(("http:", "https:", "//"))


class _Scan(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" and set((a.get("rel") or "").lower().split()) & _LINK_META:
            pass
        else:
            for attr in _LOADS.get(tag, ()):
                for url in re.split(r",\s*", a.get(attr) or "") if attr == "srcset" else [a.get(attr) or ""]:
                    url = url.strip().split(" ")[0] if attr == "srcset" else url
                    if url and _is_remote(url):
                        self.found.append((f"<{tag} {attr}>", url))
        if "style" in a:
            self._css(a["style"], f"<{tag} style>")
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            for url in _JS_IMPORT.findall(data):
                if _is_remote(url):
                    self.found.append(("<script> import", url))
        elif self._in == "style":
            self._css(data, "<style>")

    def _css(self, text, where):
        for a, b in _CSS_URL.findall(text):
            if _is_remote(a or b):
                self.found.append((where, a or b))


def remote_loads(site: Path) -> list[tuple[str, str, str]]:
    """``(file, what, url)`` for everything a browser would fetch from another host."""
    found = []
    for page in sorted(site.rglob("*.html")):
        scan = _Scan()
        scan.feed(page.read_text(encoding="utf-8", errors="replace"))
        found += [(page.relative_to(site).as_posix(), what, url) for what, url in scan.found]
    for css in sorted(site.rglob("*.css")):
        for a, b in _CSS_URL.findall(css.read_text(encoding="utf-8", errors="replace")):
            if _is_remote(a or b):
                found.append((css.relative_to(site).as_posix(), "css url", a or b))
    return found


def check_offline(site: Path) -> None:
    found = remote_loads(site)
    if not found:
        return
    hints = []
    urls = " ".join(u for _, _, u in found)
    if "mermaid" in urls:
        hints.append("smalldocs loads mermaid from a CDN: draw the diagram another way")
    if "katex" in urls or "mathjax" in urls.lower():
        hints.append("maths ($...$) loads KaTeX/MathJax from a CDN: write it without maths")
    if "fonts.googleapis" in urls:
        hints.append("the theme imports web fonts: use theme default, litera, pulse, cerulean, slate or quartz")
    shown = "; ".join(f"{f} {what} {u}" for f, what, u in found[:5])
    more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
    raise GabaritoError(f"the site would load files from other hosts and must work offline: {shown}{more}"
                        + (f". {'; '.join(hints)}" if hints else ""))
