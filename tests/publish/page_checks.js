// Injected by tests/publish/browser.py into a copy of a built page: checks what a reader sees and
// writes a JSON report into <pre id="gabarito-check-report">, which the test reads from the DOM.
(() => {
  "use strict";
  const params = window.GABARITO_CHECK || {};
  if (!params.english) return;
  // word boundaries that know accented letters (JavaScript's \b does not: "fiéis" would hold "is")
  const ENGLISH = new RegExp("(?<![\\p{L}\\p{N}_])(" + (params.english || []).join("|") + ")(?![\\p{L}\\p{N}_])", "iu");
  const SNAKE = /(?<![\p{L}\p{N}_.\/-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\p{L}\p{N}_])/u;
  const KEY_VALUE = /(?<![\p{L}\p{N}_])[a-z_]{2,}=[^\s=]/u;
  // file names and paths are identifiers, not words (results.json, runs/bm25.trec)
  const FILES = /[\w.\/-]*\w\.(?:json|jsonl|py|trec|txt|csv|md|ipynb|html|gz|tar|yml)\b/gi;
  const JSON_BITS = /[{[]\s*"[^"]+"\s*:|"\s*:\s*[{["]/;
  const MARKUP = /<\/?[a-zA-Z][\w-]*(?:\s[^<>]*)?>/;
  const ENTITY = /&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);/;
  // numbers not written the Brazilian way: a bare integer of five digits or more, or of four that is
  // not a year; milliseconds past a thousand (3.491 ms reads as three and a half); a decimal point on an axis
  const BARE_INT = /(?<![\p{L}\p{N}.,\/#:-])(?:\d{5,}|(?!19\d\d|20\d\d)\d{4})(?![\p{N}.,])/u;
  const BIG_MS = /\d\.\d{3}(?:,\d+)?\s?ms\b/;
  const DOT_DECIMAL = /(?<![\d.])\d+\.\d+(?![\d.])/;
  const THOUSANDS = /^\s*[-−]?\d{1,3}(?:\.\d{3})+\s*$/;
  const CODE = "script, style, pre, code, kbd, samp, noscript, textarea, .modebar, .sourceCode";

  const shown = (el) => {
    if (!el || !el.getClientRects().length) return false;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === "none" || s.visibility === "hidden" || s.opacity === "0") return false;
    }
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    else if (el.className && typeof el.className === "string") s += "." + el.className.trim().split(/\s+/).slice(0, 2).join(".");
    return s;
  };
  const snip = (t) => t.replace(/\s+/g, " ").trim().slice(0, 140);

  const run = () => {
    const report = { width: innerWidth, height: document.documentElement.scrollHeight, title: document.title };

    // reading: what the main body shows (collapsed "Detalhes" and folded code are not shown), and
    // where the chapter's finding ("O essencial": its first paragraph) sits from the top of the page
    const main = document.querySelector("main") || document.body;
    const visible = (main.innerText || "").replace(/\s+/g, " ").trim();
    report.reading = {
      words: visible ? visible.split(" ").filter((w) => /[\p{L}\p{N}]/u.test(w)).length : 0,
      tables: Array.from(main.querySelectorAll("table")).filter(shown).length,
      text: visible,
      finding_top: null,
    };
    // code on the page: each toggle ("Mostrar código") and each block of a cell's code shown, named by
    // the h2 it sits under (code shows only in the sections that teach)
    const h2s = Array.from(main.querySelectorAll("h2"));
    const under = (el) => {
      let t = "";
      h2s.forEach((h) => { if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) t = h.textContent; });
      return t.replace(/\s+/g, " ").trim();
    };
    report.code_toggles = Array.from(main.querySelectorAll("details.code-fold")).map(under);
    report.code_shown = Array.from(main.querySelectorAll(".cell-code"))  // the outermost of nested ones, unfolded
      .filter((el) => !el.closest("details") && !(el.parentElement && el.parentElement.closest(".cell-code"))).map(under);
    const essencial = document.getElementById("o-essencial");
    if (essencial) {
      const first = Array.from(essencial.querySelectorAll("p, li")).find((el) => shown(el) && el.textContent.trim().length > 40);
      if (first) report.reading.finding_top = Math.round(first.getBoundingClientRect().top + scrollY);
    }

    // table-of-contents targets, and figures
    const tocLinks = Array.from(document.querySelectorAll("#TOC a[href^='#'], nav[role='doc-toc'] a[href^='#'], .gabarito-toc-mobile a[href^='#']"));
    report.toc = tocLinks.length;
    report.toc_missing = [];
    report.toc_hidden = [];
    tocLinks.forEach((a) => {
      const id = decodeURIComponent(a.getAttribute("href").slice(1));
      const t = document.getElementById(id);
      if (!t) report.toc_missing.push(id);
      else if (!shown(t)) report.toc_hidden.push(id);
    });
    report.toc_narrow = !!document.querySelector(".gabarito-toc-mobile") && shown(document.querySelector(".gabarito-toc-mobile"));
    // the checks below see the page with every collapsed block ("Detalhes") open: what a reader
    // finds on opening one must fit the screen too
    report.folds = 0;
    document.querySelectorAll(".callout-collapse.collapse:not(.show), details:not([open])").forEach((el) => {
      if (el.tagName.toLowerCase() === "details") { if (!el.closest(".cell-code, .code-fold, .sourceCode")) { el.open = true; report.folds += 1; } }
      else { el.classList.add("show"); report.folds += 1; }
    });
    window.dispatchEvent(new Event("resize"));  // charts drawn while folded take their width now
    setTimeout(() => opened(report), report.folds ? 800 : 0);
  };

  const opened = (report) => {
    const figs = Array.from(document.querySelectorAll("main figure"));
    report.figures = figs.length;
    report.figures_hidden = figs.filter((f) => !shown(f)).map(describe);
    report.figures_cut = figs.filter((f) => shown(f) && f.getBoundingClientRect().right > innerWidth + 1)
      .map((f) => `${describe(f)} right=${Math.round(f.getBoundingClientRect().right)}`);
    report.captions = Array.from(document.querySelectorAll("main figcaption")).map((c) => snip(c.textContent));

    // every plotly chart drew, with marks
    const plots = Array.from(document.querySelectorAll(".plotly-graph-div"));
    report.plots = plots.length;
    report.plots_blank = [];
    report.plots_cut = [];
    plots.forEach((p, i) => {
      const marks = p.querySelectorAll("g.trace path[d]:not([d='']), g.trace image, g.hm image, .heatmaplayer image, g.trace text").length;
      if (!p.querySelector("svg.main-svg") || marks === 0) report.plots_blank.push(`${i}: ${describe(p)}`);
      const r = p.getBoundingClientRect();
      if (r.right > innerWidth + 1 || r.width < Math.min(280, innerWidth * 0.6)) report.plots_cut.push(`${i}: width=${Math.round(r.width)}`);
    });

    // markup that escaped from the data
    report.unknown_elements = Array.from(document.body.querySelectorAll("*"))
      .filter((el) => (el instanceof HTMLUnknownElement && !el.tagName.includes("-")) || ["TITLE", "HEAD", "BODY", "HTML"].includes(el.tagName) && el !== document.body)
      .map((el) => `<${el.tagName.toLowerCase()}> ${snip(el.textContent).slice(0, 60)}`);

    // visible text outside code: English words, raw keys, markup or entities shown as text
    report.english = [];
    report.raw_keys = [];
    report.markup_text = [];
    report.numbers = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      const text = n.textContent.replace(FILES, " ");
      if (!text.trim() || !el || el.closest(CODE) || el.closest("#gabarito-check-report")) continue;
      const lang = el.closest("[lang]");
      if (lang && /^en\b/i.test(lang.getAttribute("lang"))) continue;
      if (!shown(el)) continue;
      const where = describe(el);
      let m;
      if ((m = text.match(ENGLISH))) report.english.push(`${m[0]} :: ${snip(text)} [${where}]`);
      if ((m = text.match(SNAKE) || text.match(KEY_VALUE) || text.match(JSON_BITS))) report.raw_keys.push(`${m[0]} :: ${snip(text)} [${where}]`);
      if ((m = text.match(MARKUP) || text.match(ENTITY))) report.markup_text.push(`${m[0]} :: ${snip(text)} [${where}]`);
      const axis = el.closest(".xtick, .ytick, .x2tick, .y2tick");
      if ((m = text.match(BARE_INT) || text.match(BIG_MS) || (axis && !THOUSANDS.test(text) && text.match(DOT_DECIMAL)))) report.numbers.push(`${m[0]} :: ${snip(text)} [${where}]`);
    }
    // Portuguese words in the renderer's chrome that a reader meets without reading the text
    const search = document.querySelector("input[type='search']");
    report.search_placeholder = search ? search.getAttribute("placeholder") : null;

    // the page never scrolls sideways
    const docWidth = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
    report.overflow = docWidth > innerWidth + 1 ? docWidth - innerWidth : 0;
    report.overflowing = [];
    if (report.overflow) {
      const scrollsAlone = (el) => {
        for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
          const s = getComputedStyle(e).overflowX;
          if (s === "auto" || s === "scroll" || s === "hidden") return true;
        }
        return false;
      };
      Array.from(document.body.querySelectorAll("*")).forEach((el) => {
        const r = el.getBoundingClientRect();
        if (r.right > innerWidth + 1 && r.width > 0 && !scrollsAlone(el)) report.overflowing.push(`${describe(el)} right=${Math.round(r.right)}`);
      });
      report.overflowing = report.overflowing.slice(0, 12);
    }
    report.doc_width = docWidth;
    // the navbar: its title whole, its entries on one row, and the search box on the screen or
    // folded into the collapsed menu (with the button that opens it shown)
    const brand = document.querySelector(".navbar-title");
    report.title_cut = brand ? brand.scrollWidth > brand.clientWidth + 1 : false;
    const navItems = Array.from(document.querySelectorAll("nav.navbar .navbar-nav > .nav-item")).filter(shown);
    report.nav_rows = new Set(navItems.map((li) => Math.round(li.getBoundingClientRect().top))).size;
    report.search_box = null;
    if (search) {
      const r = search.getBoundingClientRect();
      const menu = search.closest(".navbar-collapse");
      const toggler = document.querySelector("nav.navbar .navbar-toggler");
      report.search_box = {
        shown: shown(search), left: Math.round(r.left), right: Math.round(r.right), width: Math.round(r.width),
        in_folded_menu: !!(menu && !shown(menu) && toggler && shown(toggler)),
      };
    }
    // per-question tables: every cell of a "Pergunta" column is on the screen, inside its table's box
    // (not scrolled out of it) and wide enough to read
    report.question_cells = [];
    Array.from(document.querySelectorAll("main table")).forEach((t, i) => {
      if (!shown(t)) return;
      const heads = Array.from(t.querySelectorAll("thead th, thead td")).map((h) => h.textContent.trim());
      const col = heads.findIndex((h) => /^pergunta$/i.test(h));
      const row = t.querySelector("tbody tr");
      const cell = col >= 0 && row ? row.children[col] : null;
      if (!cell) return;
      const r = cell.getBoundingClientRect();
      let left = 0, right = innerWidth;  // what every box around it that scrolls or clips lets through
      for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
        if (getComputedStyle(e).overflowX !== "visible") {
          const b = e.getBoundingClientRect(); left = Math.max(left, b.left); right = Math.min(right, b.right);
        }
      }
      const readable = cell.textContent.trim().length > 20 ? Math.min(160, innerWidth * 0.4) : 0;
      report.question_cells.push({
        table: i, text: snip(cell.textContent).slice(0, 40), left: Math.round(r.left), right: Math.round(r.right),
        visible: shown(cell) && r.left >= left - 1 && r.right <= right + 1 && r.width >= readable,
      });
    });
    // content cut off by the screen: wider than it and not inside a box that scrolls
    const inScroller = (el) => {
      for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
        const s = getComputedStyle(e).overflowX;
        if (s === "auto" || s === "scroll") return true;
      }
      return false;
    };
    report.cut_off = Array.from(document.querySelectorAll("main table, main figure, main svg, main img, main pre, main p, main ul, main ol, main dl, main h1, main h2, main h3, main .plotly-graph-div"))
      .filter((el) => shown(el) && el.getBoundingClientRect().right > innerWidth + 1 && !inScroller(el) && !el.closest(".plotly-graph-div .main-svg ~ *"))
      .filter((el) => !(el.tagName.toLowerCase() === "svg" && el.closest(".plotly-graph-div")))
      .map((el) => `${describe(el)} right=${Math.round(el.getBoundingClientRect().right)}`).slice(0, 12);
    // wide tables: they scroll in their own box, with a cue, and keep their first column in view
    report.tables_scrolling = 0;
    report.tables_sliding = [];  // which ones: on a phone, a table of records reads as cards instead
    report.tables_without_cue = [];
    report.tables_not_sticky = [];
    Array.from(document.querySelectorAll("main table")).forEach((t, i) => {
      if (!shown(t)) return;
      let box = null;
      for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
        const o = getComputedStyle(e).overflowX;
        if (o === "auto" || o === "scroll") { box = e; break; }
      }
      if (!box || box.scrollWidth <= box.clientWidth + 1) return;
      report.tables_scrolling += 1;
      report.tables_sliding.push(`table ${i} in ${describe(box)}: ${(t.tHead ? t.tHead.textContent : "").trim().slice(0, 60)}`);
      const cue = box.previousElementSibling;
      if (!(box.classList.contains("gabarito-table") && cue && cue.classList.contains("gabarito-scroll-cue"))) {
        report.tables_without_cue.push(`table ${i} in ${describe(box)}`);
      }
      const first = t.querySelector("tbody td, tbody th");
      if (first && getComputedStyle(first).position !== "sticky") report.tables_not_sticky.push(`table ${i} in ${describe(box)}`);
    });

    charts(report);
    phoneTables(report);
    // the home page's short answer: its whole box on the first screen
    const answer = document.querySelector(".gabarito-answer");
    if (answer && shown(answer)) {
      const r = answer.getBoundingClientRect();
      report.answer = { top: Math.round(r.top + scrollY), height: Math.round(r.height), text: snip(answer.textContent) };
    } else report.answer = null;

    // links, for the test to resolve; the search, when asked
    report.links = Array.from(document.querySelectorAll("a[href]")).map((a) => ({
      href: a.href, raw: a.getAttribute("href"), download: a.hasAttribute("download") || /\/downloads\//.test(a.href),
    }));
    if (params.search) {
      const box = document.querySelector(".gabarito-search-results, .smalldocs-search-results");
      report.search = [].concat(params.search).map((q) => {
        const hits = window.gabaritoSearch ? window.gabaritoSearch(q) : null;
        return { query: q, hits, shown: box ? snip(box.textContent) : null };
      });
    }
    report.prev_next = Array.from(document.querySelectorAll("a[rel='prev'], a[rel='next'], .page-navigation a")).map((a) => a.href);

    const pre = document.createElement("pre");
    pre.id = "gabarito-check-report";
    pre.textContent = JSON.stringify(report);
    document.body.appendChild(pre);
    if (window.parent !== window) window.parent.postMessage({ gabaritoReport: pre.textContent }, "*");
  };

  // ---- charts: the text of every chart (plotly's svg and the project's own inline svg) -----------------
  // A label's outline is its box in its own coordinates carried to the screen by its transform, so a
  // rotated label is a rotated rectangle; two outlines overlap when no axis separates them by more than
  // the tolerance (px).
  const TOLERANCE = 2;
  const outline = (el) => {
    let b;
    try { b = el.getBBox(); } catch (e) { return null; }
    const m = el.getScreenCTM();
    if (!m || !b.width || !b.height) return null;
    const pt = (x, y) => ({ x: m.a * x + m.c * y + m.e, y: m.b * x + m.d * y + m.f });
    return [pt(b.x, b.y), pt(b.x + b.width, b.y), pt(b.x + b.width, b.y + b.height), pt(b.x, b.y + b.height)];
  };
  const rectOutline = (r) => [{ x: r.left, y: r.top }, { x: r.right, y: r.top }, { x: r.right, y: r.bottom }, { x: r.left, y: r.bottom }];
  const separated = (a, b) => {
    for (const poly of [a, b]) {
      for (let i = 0; i < 4; i += 1) {
        const p = poly[i], q = poly[(i + 1) % 4];
        const len = Math.hypot(q.x - p.x, q.y - p.y) || 1;
        const ax = { x: -(q.y - p.y) / len, y: (q.x - p.x) / len };
        const proj = (poly2) => poly2.map((v) => v.x * ax.x + v.y * ax.y);
        const pa = proj(a), pb = proj(b);
        const depth = Math.min(Math.max(...pa), Math.max(...pb)) - Math.max(Math.min(...pa), Math.min(...pb));
        if (depth <= TOLERANCE) return true;
      }
    }
    return false;
  };
  const bounds = (poly) => ({ left: Math.min(...poly.map((v) => v.x)), right: Math.max(...poly.map((v) => v.x)),
    top: Math.min(...poly.map((v) => v.y)), bottom: Math.max(...poly.map((v) => v.y)) });
  const chartName = (box, i) => {
    const fig = box.closest("figure");
    const cap = fig && fig.querySelector("figcaption");
    return `chart ${i}` + (cap ? ` (${snip(cap.textContent).slice(0, 40)})` : "");
  };
  const charts = (report) => {
    report.chart_texts = 0;
    report.chart_overlaps = [];
    report.chart_text_outside = [];
    report.chart_controls_outside = [];
    report.chart_legend_overlaps = [];
    const boxes = Array.from(document.querySelectorAll("main .plotly-graph-div, main figure.gabarito-svg > svg, main svg.gabarito-flow"));
    boxes.forEach((box, i) => {
      if (!shown(box)) return;
      const name = chartName(box, i);
      const r = box.getBoundingClientRect();
      const frame = { left: r.left - 1, right: r.right + 1, top: r.top - 1, bottom: r.bottom + 1 };
      const labels = Array.from(box.querySelectorAll("svg text"))
        .filter((t) => !t.closest(".modebar, .updatemenu-dropdown-button-group") && t.textContent.trim() && shown(t))
        .map((t) => ({ el: t, text: snip(t.textContent).slice(0, 30), poly: outline(t) })).filter((l) => l.poly);
      report.chart_texts += labels.length;
      labels.forEach((l) => {
        const b = bounds(l.poly);
        if (b.left < frame.left || b.right > frame.right || b.top < frame.top || b.bottom > frame.bottom) {
          report.chart_text_outside.push(`${name}: "${l.text}" at ${Math.round(b.left - r.left)}..${Math.round(b.right - r.left)} of ${Math.round(r.width)}`);
        }
      });
      for (let a = 0; a < labels.length; a += 1) {
        for (let b = a + 1; b < labels.length; b += 1) {
          if (labels[a].el.contains(labels[b].el) || labels[b].el.contains(labels[a].el)) continue;
          if (!separated(labels[a].poly, labels[b].poly)) report.chart_overlaps.push(`${name}: "${labels[a].text}" × "${labels[b].text}"`);
        }
      }
      // controls (plotly's menus and toolbar) inside the chart's box
      box.querySelectorAll(".updatemenu-header-group, .modebar").forEach((c) => {
        if (!shown(c)) return;
        const b = c.getBoundingClientRect();
        if (b.width && (b.left < frame.left || b.right > frame.right || b.top < frame.top || b.bottom > frame.bottom)) {
          report.chart_controls_outside.push(`${name}: ${describe(c)} ${Math.round(b.left - r.left)}..${Math.round(b.right - r.left)} of ${Math.round(r.width)}`);
        }
      });
      // the legend apart from the plot area and the axis titles
      const legend = box.querySelector("g.legend");
      if (legend && shown(legend)) {
        const entries = Array.from(legend.querySelectorAll("g.traces")).map((t) => outline(t)).filter(Boolean);
        const others = [];
        box.querySelectorAll(".nsewdrag").forEach((d) => others.push(["the plot area", rectOutline(d.getBoundingClientRect())]));
        box.querySelectorAll("g.g-xtitle text, g.g-ytitle text, g.g-x2title text, g.g-y2title text, .xtick text, .ytick text").forEach((t) => {
          const o = outline(t);
          if (o && shown(t)) others.push([`"${snip(t.textContent).slice(0, 30)}"`, o]);
        });
        entries.forEach((e) => others.forEach(([what, o]) => {
          if (!separated(e, o)) report.chart_legend_overlaps.push(`${name}: the legend × ${what}`);
        }));
      }
    });
    report.chart_legend_overlaps = Array.from(new Set(report.chart_legend_overlaps));
  };

  // ---- tables and code on a phone: nothing scrolls the page; the headline table's every cell in view ----
  const phoneTables = (report) => {
    report.wide_blocks = Array.from(document.querySelectorAll("main table, main pre"))
      .filter((el) => shown(el) && el.getBoundingClientRect().right > innerWidth + 1 && !inScrollBox(el))
      .map((el) => `${describe(el)} right=${Math.round(el.getBoundingClientRect().right)}`).slice(0, 12);
    report.code_cut = Array.from(document.querySelectorAll("main pre")).filter((pre) => {
      if (!shown(pre)) return false;
      const s = getComputedStyle(pre);
      const wraps = /pre-wrap|break-spaces/.test(s.whiteSpace) || /pre-wrap|break-spaces/.test(getComputedStyle(pre.querySelector("code") || pre).whiteSpace);
      const scrolls = s.overflowX === "auto" || s.overflowX === "scroll";
      return pre.scrollWidth > pre.clientWidth + 1 && !wraps && !scrolls;
    }).map((pre) => `${describe(pre)}: ${snip(pre.textContent).slice(0, 40)}`);
    // a table in a box ("Detalhes", a callout) stays inside it: what shows of it (clipped by any box that
    // scrolls between them) ends at the box's right edge
    report.tables_out_of_box = Array.from(document.querySelectorAll("main .callout table")).filter(shown).map((t) => {
      const c = t.closest(".callout");
      let right = t.getBoundingClientRect().right;
      for (let e = t.parentElement; e && e !== c; e = e.parentElement) {
        if (getComputedStyle(e).overflowX !== "visible") right = Math.min(right, e.getBoundingClientRect().right);
      }
      return [t, right - c.getBoundingClientRect().right];
    }).filter(([, over]) => over > 1).map(([t, over]) => `${describe(t)} ${Math.round(over)} px out of ${describe(t.closest(".callout"))}`).slice(0, 12);
    const head = document.querySelector("main .gabarito-headline-table");
    report.headline_table = null;
    if (head && shown(head)) {
      const cells = Array.from(head.querySelectorAll("tbody td, tbody th")).filter(shown);
      const out = cells.filter((c) => { const b = c.getBoundingClientRect(); return b.left < -1 || b.right > innerWidth + 1; });
      report.headline_table = { cells: cells.length, out_of_view: out.map((c) => snip(c.textContent).slice(0, 30)),
        cards: head.classList.contains("gabarito-stacked") };
    }
  };
  const inScrollBox = (el) => {
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const s = getComputedStyle(e).overflowX;
      if ((s === "auto" || s === "scroll" || s === "hidden") && e.getBoundingClientRect().right <= innerWidth + 1) return true;
    }
    return false;
  };
  const start = () => setTimeout(run, params.delay || 1500);
  if (document.readyState === "complete") start(); else window.addEventListener("load", start);
})();
