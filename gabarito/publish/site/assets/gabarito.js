// gabarito: tables that scroll in their own box (the offline search is search.js).
(() => {
  "use strict";
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

  // ---- tables: every table of the text in a box that scrolls, with a cue when columns are hidden
  $$("main table").forEach((t) => {
    if (t.closest(".gabarito-table") || t.closest(".plotly-graph-div")) return;
    const box = document.createElement("div");
    box.className = "gabarito-table sticky-first";
    t.parentNode.insertBefore(box, t);
    box.appendChild(t);
  });
  const boxes = $$(".gabarito-table");

  // ---- per-question tables (a "Pergunta" column of whole sentences): on a phone, or wherever the
  // question would be scrolled out of view, one card per row, the question first and each rank below
  // it with its column's name
  boxes.forEach((box) => {
    const t = box.querySelector("table");
    const head = t && t.tHead && t.tHead.rows[t.tHead.rows.length - 1];
    if (!head || $$("th, td", head).some((h) => h.colSpan > 1)) return;
    const names = $$("th, td", head).map((h) => h.textContent.trim());
    const q = names.findIndex((n) => /^pergunta$/i.test(n));
    const rows = $$("tbody tr", t);
    if (q < 0 || names.length < 3 || !rows.length) return;
    const long = rows.filter((r) => r.children[q] && r.children[q].textContent.trim().length > 30).length;
    if (long * 2 < rows.length) return;  // short ids (p01): the sticky first column keeps them in view
    box.classList.add("gabarito-stackable");
    rows.forEach((r) => Array.from(r.children).forEach((td, i) => {
      td.setAttribute("data-label", names[i] || "");
      if (i === q) td.classList.add("gabarito-question");
      else if (td.textContent.trim().length > 16) td.classList.add("gabarito-long");
    }));
  });
  // ---- the page's headline table (its "Tabela 1", or else its first table outside the folds): on a phone,
  // when it does not fit, one card per row, its first column as the card's title and every other cell
  // below it with its column's name, so the verdict in its last column is read without scrolling sideways
  const captioned = (b) => {
    const fig = b.closest("figure");
    const cap = fig && fig.querySelector("figcaption, caption");
    return !!cap && /^Tabela\s1\b/.test(cap.textContent.replace(/\u00a0/g, " ").trim());
  };
  // Every other table of records (one header row, no merged cells) reads the same way on a phone when it
  // does not fit: its rows as cards (.gabarito-cards), instead of a table to slide sideways.
  const cards = (box, cls) => {
    const headRow = box.querySelector("table") && box.querySelector("table").tHead;
    if (!headRow || headRow.rows.length !== 1 || $$("th, td", headRow).some((h) => h.colSpan > 1)) return;
    const names = $$("th, td", headRow.rows[0]).map((h) => h.textContent.trim());
    box.classList.add(cls);
    $$("tbody tr", box).forEach((r) => Array.from(r.children).forEach((td, i) => {
      if (!td.hasAttribute("data-label")) td.setAttribute("data-label", names[i] || "");
      if (i === 0) td.classList.add("gabarito-card-title");
      else if (td.textContent.trim().length + (names[i] || "").length > 20) td.classList.add("gabarito-long");
    }));
  };
  const headline = boxes.find(captioned) || boxes.find((b) => !b.closest("details, .callout-collapse, .collapse"));
  if (headline) cards(headline, "gabarito-headline-table");
  boxes.filter((b) => b !== headline && !b.classList.contains("gabarito-stackable")).forEach((b) => cards(b, "gabarito-cards"));

  const stack = () => boxes.forEach((box) => {  // after widen(): a widened table may show its questions
    if (box.scrollWidth <= box.clientWidth + 1) return;
    if ((box.classList.contains("gabarito-headline-table") || box.classList.contains("gabarito-cards"))
        && window.innerWidth < 600) {
      box.classList.add("gabarito-stacked");
      return;
    }
    if (!box.classList.contains("gabarito-stackable")) return;
    const cell = box.querySelector("td.gabarito-question");
    const hidden = cell && cell.getBoundingClientRect().right > box.getBoundingClientRect().right + 1;
    if (window.innerWidth >= 600 && !hidden) return;
    box.classList.remove("gabarito-wide");
    box.style.marginRight = "";
    unclip(box, false);
    box.classList.add("gabarito-stacked");
  });

  // ---- on a wide screen, a table wider than the text column takes the room at its right, up to the
  // window's edge; the table of contents in that margin steps aside while such a table passes under it
  const unclip = (box, on) => {  // the boxes around a widened table (a cell's output scrolls) let it show
    for (let e = box.parentElement; e && !e.matches("main, body"); e = e.parentElement) {
      if (on && getComputedStyle(e).overflowX !== "visible") e.classList.add("gabarito-wide-parent");
      else if (!on) e.classList.remove("gabarito-wide-parent");
    }
  };
  const widen = () => boxes.forEach((box) => {
    box.classList.remove("gabarito-wide");
    box.style.marginRight = "";
    unclip(box, false);
    box.classList.remove("gabarito-stacked");
    if (window.innerWidth < 992 || box.closest(".callout")) return;  // in a box of its own it scrolls there
    const need = box.scrollWidth - box.clientWidth;
    const room = document.documentElement.clientWidth - 24 - box.getBoundingClientRect().right;
    if (need <= 1 || room < 40) return;
    box.classList.add("gabarito-wide");
    box.style.marginRight = `-${Math.floor(Math.min(need, room))}px`;
    unclip(box, true);
  });
  const panels = $$("#quarto-margin-sidebar");
  const overlap = (a, b) => a.width && b.width && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  let queued = false;
  const stepAside = () => {
    queued = false;
    const wide = $$(".gabarito-wide").map((b) => b.getBoundingClientRect());
    panels.forEach((p) => {
      p.classList.remove("gabarito-stepped-aside");
      const r = p.getBoundingClientRect();
      p.classList.toggle("gabarito-stepped-aside", wide.some((w) => overlap(r, w)));
    });
  };
  const queueStep = () => { if (!queued) { queued = true; setTimeout(stepAside, 50); } };
  window.addEventListener("scroll", queueStep, { passive: true });

  const mark = () => boxes.forEach((box) => {
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    box.classList.toggle("is-scrollable", scrolls);
    box.classList.toggle("at-end", box.scrollLeft + box.clientWidth >= box.scrollWidth - 2);
    let cue = box.previousElementSibling;
    if (!(cue && cue.classList.contains("gabarito-scroll-cue"))) cue = null;
    if (scrolls && !cue) {
      cue = document.createElement("p");
      cue.className = "gabarito-scroll-cue";
      cue.textContent = "Deslize a tabela para o lado para ver todas as colunas.";
      box.parentNode.insertBefore(cue, box);
    } else if (!scrolls && cue) cue.remove();
  });
  boxes.forEach((box) => box.addEventListener("scroll", () => {
    box.classList.toggle("at-end", box.scrollLeft + box.clientWidth >= box.scrollWidth - 2);
  }, { passive: true }));
  // ---- plotly charts: plotly places a legend under the plot at a fixed share of the plot's height, which a
  // phone's shorter plot (and its x labels in more lines) can make less than the x axis's labels and title
  // need; after each drawing such a legend moves down until it clears them. A heatmap's numbers shrink to
  // fit their cells (down to 7 px), so neighbouring numbers never run into each other.
  const GAP = 6;
  const fitChart = (gd) => {
    const full = gd._fullLayout;
    if (!full || !full._size || !window.Plotly) return;
    if (gd._gabaritoWidth !== full.width) { gd._gabaritoWidth = full.width; gd._gabaritoFits = 0; }
    if (gd._gabaritoFits > 6) return;
    const update = {};
    const legend = gd.querySelector("g.legend");
    const lg = full.legend || {};
    if (full.showlegend && legend && lg.orientation === "h" && lg.y < 0 && (lg.yref || "paper") === "paper") {
      const low = Math.max(-Infinity, ...Array.from(gd.querySelectorAll(".xtick text, g.g-xtitle text"))
        .map((t) => t.getBoundingClientRect()).filter((r) => r.height).map((r) => r.bottom));
      const top = legend.getBoundingClientRect().top;
      if (isFinite(low) && top < low + GAP) update["legend.y"] = lg.y - (low + GAP - top + 2) / full._size.h;
    }
    const restyle = { size: [], traces: [] };
    (gd._fullData || []).forEach((tr, i) => {
      if (tr.type !== "heatmap" || !tr.visible || tr.visible === "legendonly" || !Array.isArray(tr.text)) return;
      const cols = (tr.x || (tr.z && tr.z[0]) || []).length;
      const longest = Math.max(1, ...tr.text.flat().map((t) => String(t || "").length));
      const base = (gd._gabaritoFont = gd._gabaritoFont || {})[i] || (gd._gabaritoFont[i] = (tr.textfont && tr.textfont.size) || 12);
      const size = Math.max(7, Math.min(base, Math.floor(full._size.w / cols / (0.62 * longest))));
      if (!tr.textfont || tr.textfont.size !== size) { restyle.size.push(size); restyle.traces.push(i); }
    });
    if (!Object.keys(update).length && !restyle.traces.length) return;
    gd._gabaritoFits += 1;
    if (restyle.traces.length) window.Plotly.restyle(gd, { "textfont.size": restyle.size }, restyle.traces);
    if (Object.keys(update).length) window.Plotly.relayout(gd, update);
  };
  const watchCharts = () => $$(".js-plotly-plot").forEach((gd) => {
    if (gd._gabaritoWatched || typeof gd.on !== "function") return;
    gd._gabaritoWatched = true;
    gd.on("plotly_afterplot", () => setTimeout(() => fitChart(gd), 0));
    fitChart(gd);
  });
  watchCharts();
  window.addEventListener("load", watchCharts);

  const layout = () => { widen(); stack(); mark(); queueStep(); };
  layout();
  window.addEventListener("resize", layout);
  window.addEventListener("load", layout);
  // a folded block ("Detalhes") opened: its tables get their cue, its charts their width
  document.addEventListener("shown.bs.collapse", () => window.dispatchEvent(new Event("resize")));
  document.addEventListener("toggle", (e) => {
    if (e.target.open) window.dispatchEvent(new Event("resize"));
  }, true);
})();
