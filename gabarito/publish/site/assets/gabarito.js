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
  mark();
  window.addEventListener("resize", mark);
  window.addEventListener("load", mark);

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
