"""Plotly output that works offline in the built site.

Plotly's default renderer in a Jupyter kernel writes only ``application/vnd.plotly.v1+json``,
which a static site cannot show, and its HTML renderers load plotly.js (and MathJax) from a
CDN. :func:`setup_plotly` makes every figure write two outputs instead:

- ``application/vnd.plotly.v1+json``, which JupyterLab draws when the notebook is opened there;
- ``text/html``: the figure's ``<div class="plotly-graph-div">`` and its ``Plotly.newPlot`` call,
  with no ``<script src>`` at all: no CDN, no MathJax.

The site build (:mod:`gabarito.publish.site`) copies ``plotly.min.js`` from the installed plotly package
into ``site_libs/plotly/`` and adds one local ``<script src>`` to the head of each page that has
a figure. The build runs :func:`setup_plotly` in every notebook's kernel before the first cell,
so notebooks need not call it; calling it again is harmless.
"""

from __future__ import annotations

#: The class plotly gives each figure's div; the site build looks for it.
FIGURE_MARKER = "plotly-graph-div"
#: The name this module registers its renderer and its template under.
RENDERER = "gabarito"
#: plotly.js options of every figure: it follows the width of its column, and has no toolbar
#: (the toolbar covered legends and titles, and its labels are in English).
CONFIG = {"displaylogo": False, "responsive": True, "displayModeBar": False}


def template():
    """The site's plotly template: plotly_white with Brazilian number marks (``1.234,5``) and the
    site's font size."""
    import plotly.graph_objects as go
    import plotly.io as pio

    t = go.layout.Template(pio.templates["plotly_white"])
    t.layout.separators = ",."
    t.layout.font = dict(size=13)
    t.layout.hoverlabel = dict(namelength=-1)
    return t


def _html_renderer_class():
    from plotly.io._base_renderers import MimetypeRenderer

    class OfflineHtmlRenderer(MimetypeRenderer):
        """``text/html`` for a figure, without plotly.js or MathJax: the page loads plotly.js itself."""

        def __init__(self):
            pass

        def to_mimebundle(self, fig_dict):
            from plotly.io import to_html

            html = to_html(
                fig_dict,
                config=CONFIG,
                include_plotlyjs=False,
                include_mathjax=False,
                full_html=False,
                default_width="100%",
                default_height=480,
                validate=False,
            )
            return {"text/html": html}

    return OfflineHtmlRenderer


def setup_plotly() -> str:
    """Register the offline renderer and the site's template, make them the defaults
    (``plotly_mimetype+gabarito``); return the renderer's name."""
    import plotly.io as pio

    if RENDERER not in pio.renderers:
        pio.renderers[RENDERER] = _html_renderer_class()()
    pio.templates[RENDERER] = template()
    pio.templates.default = RENDERER
    pio.renderers.default = f"plotly_mimetype+{RENDERER}"
    return pio.renderers.default


def plotly_js_path():
    """The ``plotly.min.js`` shipped inside the installed plotly package (no download)."""
    from pathlib import Path

    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        from gabarito.errors import GabaritoError

        raise GabaritoError("plotly.min.js is not in the installed plotly package", path=path)
    return path
