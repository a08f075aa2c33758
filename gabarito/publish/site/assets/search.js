// gabarito: the offline search. Its words are gabarito/publish/site/search.py's, step for step: lower
// case, accents folded, runs of letters and digits, a light Portuguese stemmer (tests/publish/
// test_search_text.py runs both on one word list). The index is a script (search-index.js), so the
// search works from file:// too. Also loadable in Node (module.exports), for that test.
(function (root) {
  "use strict";
  const STOPWORDS = new Set(("a o e as os de da do das dos em no na nos nas um uma uns umas ao aos para por pelo pela " +
    "pelos pelas com sem que se ou como mais").split(" "));
  const PLURALS = [["oes", "ao"], ["aes", "ao"], ["ais", "al"], ["eis", "el"], ["ois", "ol"], ["ns", "m"],
    ["res", "r"], ["zes", "z"], ["ses", "s"]];
  const SUFFIXES = ["amentos", "imentos", "amento", "imento", "adora", "ador", "acao", "icao", "cao", "mente",
    "ando", "endo", "indo", "aram", "eram", "iram", "ado", "ido", "ada", "ida", "ar", "er", "ir",
    "ou", "eu", "iu", "am", "em"];
  const MIN_STEM = 3;
  const WORD = /[\p{L}\p{N}]+/gu;

  const fold = (s) => String(s || "").toLowerCase().normalize("NFD").replace(/[\u0300-\u036f]/g, "");
  const words = (s) => fold(s).match(WORD) || [];
  const stem = (w) => {
    if (w.length < 4 || !/^[a-z]+$/.test(w)) return w;
    const plural = PLURALS.find(([end]) => w.length > 4 && w.endsWith(end));
    if (plural) w = w.slice(0, -plural[0].length) + plural[1];
    else if (w.endsWith("s")) w = w.slice(0, -1);
    const end = SUFFIXES.find((x) => w.endsWith(x) && w.length - x.length >= MIN_STEM);
    if (end) return w.slice(0, -end.length);
    if (w.length > MIN_STEM && "aeo".includes(w[w.length - 1])) return w.slice(0, -1);
    return w;
  };
  const terms = (s) => words(s).map(stem);
  const queryTerms = (q) => {
    const ws = words(q);
    const kept = ws.filter((w) => !STOPWORDS.has(w));
    return (kept.length ? kept : ws).map(stem);
  };

  // a query word matches a section when its stem begins one of the section's stems: 6 in its heading
  // as typed (4 as a beginning), 2 in its text (1); every word must match
  let prepared = null, preparedFrom = null;
  const prepare = (entries) => {
    if (preparedFrom !== entries) {
      prepared = entries.map((e) => ({ e, head: terms(`${e.section} ${e.page}`), body: (e.terms || "").split(" ") }));
      preparedFrom = entries;
    }
    return prepared;
  };
  const best = (list, q, exact, start) => {
    let s = 0;
    for (const t of list) {
      if (t === q) return exact;
      if (!s && t.startsWith(q)) s = start;
    }
    return s;
  };
  const find = (entries, q, limit = 12) => {
    const qs = queryTerms(q);
    if (!qs.length) return [];
    const hits = [];
    prepare(entries || []).forEach((x) => {
      let score = 0;
      for (const t of qs) {
        const s = Math.max(best(x.head, t, 6, 4), best(x.body, t, 2, 1));
        if (!s) return;
        score += s;
      }
      hits.push({ x, score });
    });
    return hits.sort((a, b) => b.score - a.score).slice(0, limit).map((h) => h.x.e);
  };
  // the text around the first word that matches, in pieces [text, matched?]
  const highlight = (text, q, width = 180) => {
    const qs = queryTerms(q);
    const hit = (w) => terms(w).some((t) => qs.some((x) => t.startsWith(x)));
    const marks = [];
    for (const m of String(text || "").matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
      if (hit(m[0])) marks.push([m.index, m.index + m[0].length]);
    }
    const from = Math.max(0, (marks.length ? marks[0][0] : 0) - 50), to = from + width;
    const out = from ? [["…", false]] : [];
    let at = from;
    marks.filter(([s, e]) => s >= from && e <= to).forEach(([s, e]) => {
      if (s > at) out.push([text.slice(at, s), false]);
      out.push([text.slice(s, e), true]);
      at = e;
    });
    if (at < Math.min(to, text.length)) out.push([text.slice(at, to), false]);
    return out;
  };
  const api = { fold, words, stem, terms, queryTerms, find, highlight };
  root.gabaritoSearchText = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  if (typeof document === "undefined") return;

  // ---- the search box
  const $$ = (sel, el = document) => Array.from(el.querySelectorAll(sel));
  const here = document.currentScript && document.currentScript.src;
  const siteRoot = here ? new URL("../../", here) : new URL("./", location.href);
  const start = () => $$(".gabarito-search").forEach((box) => {
    const input = box.querySelector("input"), out = box.querySelector(".gabarito-search-results");
    let active = -1;
    const hide = () => { out.hidden = true; active = -1; };
    const run = () => {
      const q = input.value.trim();
      out.textContent = "";
      if (q.length < 2) { hide(); return; }
      const hits = find(root.GABARITO_SEARCH || [], q);
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
          const s = document.createElement("span"); s.className = "gabarito-hit-text";
          highlight(e.text, q).forEach(([piece, marked]) => {
            if (!marked) { s.append(piece); return; }
            const m = document.createElement("mark");
            m.textContent = piece;
            s.append(m);
          });
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
    root.gabaritoSearch = (q) => { input.value = q; run(); return $$("a", out).map((a) => a.href); };
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})(typeof window !== "undefined" ? window : globalThis);
