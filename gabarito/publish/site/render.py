"""The two renderers of the staged project: smalldocs (default, in this process) or Quarto."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.publish.site.execute import say
from gabarito.publish.site.project import load_config

RENDERERS = ("auto", "smalldocs", "quarto")

#: ``<script src>`` tags Quarto writes into pages that load from a CDN. require.js and jQuery come
#: with every page that has ``text/html`` outputs (Quarto's ``widgets.ts``, with no option to turn
#: them off); plotly.js when Quarto executes the notebooks itself. The site loads its own copy of
#: plotly.js and needs neither of the others, so the tags are removed after rendering.
CDN_SCRIPT = re.compile(
    r"""<script\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?//(?:cdn\.jsdelivr\.net|cdnjs\.cloudflare\.com|cdn\.plot\.ly|"""
    r"""unpkg\.com|code\.jquery\.com)/[^"'\s>]*(?:require|jquery|plotly)[^"'\s>]*["']?[^>]*>\s*</script>\s*""",
    re.I)
#: The inline script Quarto writes after those two tags (``widgets.ts``:
#: ``<script type="application/javascript" data-relocate-top="true">define('jquery', [],function() {return
#: window.jQuery;})</script>``): without require.js, ``define`` does not exist and the page throws a
#: ReferenceError in the console, so it goes with them.
REQUIRE_SHIM = re.compile(
    r"""<script\b[^>]*>\s*define\(\s*["']jquery["']\s*,\s*\[\s*\]\s*,\s*function\s*\(\s*\)\s*\{\s*"""
    r"""return\s+window\.jQuery\s*;?\s*\}\s*\)\s*;?\s*</script>\s*""", re.I)


def choose_renderer(renderer: str) -> tuple[str, str | None]:
    if renderer not in RENDERERS:
        raise GabaritoError(f"unknown renderer {renderer!r}: use one of {', '.join(RENDERERS)}")
    quarto = shutil.which("quarto")
    if renderer == "quarto" and not quarto:
        raise GabaritoError("renderer quarto asked for, but quarto is not on the PATH")
    if renderer == "auto":
        renderer = "quarto" if quarto else "smalldocs"
    return renderer, quarto


def render_smalldocs(stage: Path) -> Path:
    """``smalldocs.site.build(stage)``: the pure-Python renderer, in this process."""
    from smalldocs.config import BuildError, ConfigError
    from smalldocs.site import build as smalldocs_build

    try:
        site = smalldocs_build(stage, quiet=True)
    except (ConfigError, BuildError) as exc:
        raise GabaritoError(f"smalldocs: {exc}") from None
    for w in site.warnings:
        say(f"smalldocs warning: {w}")
    return Path(site.out)


def render_quarto(stage: Path, quarto: str) -> Path:
    """``quarto render STAGE --no-execute``: the notebooks already hold their outputs."""
    proc = subprocess.run([quarto, "render", str(stage), "--no-execute"], cwd=stage,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        tail = " | ".join(proc.stdout.strip().splitlines()[-5:])
        raise GabaritoError(f"quarto render failed (exit {proc.returncode}): {tail}")
    out_dir = (load_config(stage).get("project") or {}).get("output-dir") or "_site"
    return stage / out_dir


def strip_cdn_scripts(site: Path) -> int:
    """Remove the CDN ``<script>`` tags of :data:`CDN_SCRIPT`, and the jQuery shim of :data:`REQUIRE_SHIM`
    that needs one of them, from every page; return how many. The offline check that follows still
    refuses anything else that would load from outside."""
    removed = 0
    for page in sorted(Path(site).rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        new, n = CDN_SCRIPT.subn("", text)
        new, shims = REQUIRE_SHIM.subn("", new)
        n += shims
        if n:
            page.write_text(new, encoding="utf-8")
            removed += n
    return removed
