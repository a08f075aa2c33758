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
  const stack = () => boxes.forEach((box) => {  // after widen(): a widened table may show its questions
    if (!box.classList.contains("gabarito-stackable") || box.scrollWidth <= box.clientWidth + 1) return;
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
    if (window.innerWidth < 992) return;
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
