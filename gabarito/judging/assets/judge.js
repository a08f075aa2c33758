(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("dados").textContent);
  var items = [];
  data.questions.forEach(function (q, qi) {
    q.candidates.forEach(function (c, ci) {
      items.push({ q: q, c: c, qi: qi, ci: ci });
    });
  });
  var KEY = "gabarito:julgamento:" + data.pool_sha256 + ":" + data.assessor;
  var $ = function (id) { return document.getElementById(id); };
  var state = load();

  function load() {
    try {
      var s = JSON.parse(window.localStorage.getItem(KEY) || "null");
      if (s && typeof s.grades === "object" && Array.isArray(s.history)) {
        var known = {};
        items.forEach(function (it) { known[it.c.pair] = true; });
        s.history = s.history.filter(function (p) { return known[p] && [0, 1, 2].indexOf(s.grades[p]) >= 0; });
        var grades = {};
        s.history.forEach(function (p) { grades[p] = s.grades[p]; });
        return { grades: grades, history: s.history };
      }
    } catch (e) { /* no storage, or a broken entry: start afresh */ }
    return { grades: {}, history: [] };
  }

  function save() {
    try {
      window.localStorage.setItem(KEY, JSON.stringify(state));
      $("aviso").hidden = true;
    } catch (e) {
      $("aviso").hidden = false;
    }
  }

  function current() {
    for (var i = 0; i < items.length; i++) {
      if (!(items[i].c.pair in state.grades)) return i;
    }
    return -1;
  }

  function render() {
    var done = state.history.length, total = items.length, i = current();
    $("progresso-texto").textContent = done + " de " + total + " pares julgados";
    $("barra").style.width = (total ? (100 * done / total) : 100) + "%";
    document.querySelector(".barra").setAttribute("aria-valuenow", String(done));
    $("par").hidden = i < 0;
    $("fim").hidden = i >= 0;
    document.querySelectorAll("#notas button").forEach(function (b) { b.disabled = i < 0; });
    $("desfazer").disabled = done === 0;
    if (i < 0) return;
    var it = items[i];
    $("pergunta").textContent = it.q.text;
    $("titulo").textContent = it.c.title || it.c.doc;
    $("texto").innerHTML = data.docs[it.c.doc] || "";  // escaped HTML, made by gabarito.judging.markdown
    $("texto").scrollTop = 0;
    $("posicao").textContent = "Pergunta " + (it.qi + 1) + " de " + data.questions.length +
      " · documento " + (it.ci + 1) + " de " + it.q.candidates.length + " desta pergunta";
  }

  function grade(g) {
    var i = current();
    if (i < 0) return;
    var pair = items[i].c.pair;
    state.grades[pair] = g;
    state.history.push(pair);
    save();
    render();
  }

  function undo() {
    var pair = state.history.pop();
    if (pair === undefined) return;
    delete state.grades[pair];
    save();
    render();
  }

  function slug(text) {
    return String(text).normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/[^A-Za-z0-9]+/g, "-")
      .replace(/^-|-$/g, "").toLowerCase() || "avaliador";
  }

  function exportGrades() {
    var out = {
      schema: "gabarito.grades/1",
      pool_sha256: data.pool_sha256,
      assessor: data.assessor,
      exported_at: new Date().toISOString(),
      complete: current() < 0,
      grades: items.filter(function (it) { return it.c.pair in state.grades; }).map(function (it) {
        return { pair: it.c.pair, question: it.q.id, doc: it.c.doc, grade: state.grades[it.c.pair] };
      })
    };
    var blob = new Blob([JSON.stringify(out, null, 2) + "\n"], { type: "application/json" });
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "notas-" + slug(data.assessor) + "-" + data.pool_sha256.slice(0, 8) + ".json";
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  document.querySelectorAll("#notas button").forEach(function (b) {
    b.addEventListener("click", function () { grade(Number(b.getAttribute("data-nota"))); });
  });
  $("desfazer").addEventListener("click", undo);
  $("exportar").addEventListener("click", exportGrades);
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.metaKey) return;
    if (e.ctrlKey) {
      if (e.key === "z" || e.key === "Z") { e.preventDefault(); undo(); }
      return;
    }
    if (e.key === "0" || e.key === "1" || e.key === "2") { e.preventDefault(); grade(Number(e.key)); }
    else if (e.key === "Backspace" || e.key === "u" || e.key === "U") { e.preventDefault(); undo(); }
  });
  if (window.matchMedia && window.matchMedia("(min-width: 900px)").matches) $("guia").open = true;
  render();
  window.gabaritoJulgamento = { pronto: true, total: items.length };
})();
