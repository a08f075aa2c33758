// gabarito: tables that scroll in their own box, and a search that works offline.
(() => {
  "use strict";
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const here = document.currentScript && document.currentScript.src;
  const siteRoot = here ? new URL("../../", here) : new URL("./", location.href);

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

  // ---- search: the index is a script (search-index.js), so it works from file:// too
  const norm = (s) => (s || "").normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  let index = null;
  const load = () => {
    if (index) return index;
    index = (window.GABARITO_SEARCH || []).map((e) => ({
      e, all: norm(`${e.page} ${e.section} ${e.text}`), head: norm(`${e.section} ${e.page}`),
    }));
    return index;
  };
  const search = (q) => {
    const words = norm(q).split(/\s+/).filter((w) => w.length > 1);
    if (!words.length) return [];
    return load()
      .filter((x) => words.every((w) => x.all.includes(w)))
      .map((x) => ({ x, score: words.reduce((s, w) => s + (x.head.includes(w) ? 3 : 0) + x.all.split(w).length - 1, 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 12)
      .map((r) => r.x.e);
  };
  const snippet = (text, q) => {
    const words = norm(q).split(/\s+/).filter((w) => w.length > 1);
    const n = norm(text);
    const at = Math.max(0, (words.length ? n.indexOf(words[0]) : 0) - 50);
    const piece = text.slice(at, at + 180);
    const frag = document.createDocumentFragment();
    if (at) frag.append("…");
    let rest = piece, nrest = norm(piece);
    while (rest) {
      let best = -1, len = 0;
      words.forEach((w) => { const i = nrest.indexOf(w); if (i >= 0 && (best < 0 || i < best)) { best = i; len = w.length; } });
      if (best < 0) { frag.append(rest); break; }
      frag.append(rest.slice(0, best));
      const m = document.createElement("mark");
      m.textContent = rest.slice(best, best + len);
      frag.append(m);
      rest = rest.slice(best + len); nrest = nrest.slice(best + len);
    }
    return frag;
  };
  $$(".gabarito-search").forEach((box) => {
    const input = box.querySelector("input"), out = box.querySelector(".gabarito-search-results");
    let active = -1;
    const hide = () => { out.hidden = true; active = -1; };
    const run = () => {
      const q = input.value.trim();
      out.textContent = "";
      if (q.length < 2) { hide(); return; }
      const hits = search(q);
      if (!hits.length) {
        const none = document.createElement("div");
        none.className = "gabarito-search-none";
        none.textContent = `Nenhum resultado para “${q}”.`;
        out.append(none);
      } else {
        const count = document.createElement("div");
        count.className = "gabarito-search-count";
        count.textContent = hits.length === 1 ? "1 resultado" : `${hits.length} resultados`;
        out.append(count);
        hits.forEach((e) => {
          const a = document.createElement("a");
          a.className = "gabarito-search-hit";
          a.href = new URL(e.href, siteRoot).href;
          const t = document.createElement("span"); t.className = "gabarito-hit-title"; t.textContent = e.section || e.page;
          const p = document.createElement("span"); p.className = "gabarito-hit-page"; p.textContent = e.page;
          const s = document.createElement("span"); s.className = "gabarito-hit-text"; s.append(snippet(e.text, q));
          a.append(t, p, s);
          out.append(a);
        });
      }
      out.hidden = false;
      active = -1;
    };
    let timer = null;
    input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(run, 100); });
    input.addEventListener("keydown", (ev) => {
      const items = $$("a", out);
      if (ev.key === "Escape") { hide(); input.blur(); return; }
      if (!items.length) return;
      if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        ev.preventDefault();
        active = (active + (ev.key === "ArrowDown" ? 1 : -1) + items.length) % items.length;
        items.forEach((it, i) => it.classList.toggle("active", i === active));
      } else if (ev.key === "Enter") {
        ev.preventDefault();
        (items[active] || items[0]).click();
      }
    });
    document.addEventListener("click", (ev) => { if (!box.contains(ev.target)) hide(); });
    window.gabaritoSearch = (q) => { input.value = q; run(); return $$("a", out).map((a) => a.href); };
  });
})();
