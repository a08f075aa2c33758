"""What every page shows about where its numbers come from, and the files a reader can download.

- :func:`load_results` reads a study's ``results.json`` after checking that its gold is still
  the frozen one and the one it was computed against;
- :func:`provenance_box` is the box at the top of a chapter: date of the measurement, commit,
  engine, model and machine, read from the results' ``provenance``; when the results were
  computed on a working tree with changes not yet committed, the box says so (the site build
  refuses such results unless it is told to publish them, see :mod:`gabarito.publish.site.gold`);
- :func:`study_downloads` lists a study's results, gold, qrels and run files, and
  :func:`downloads_block` links them; the site build copies the same files into
  ``_site/downloads/`` (:func:`gabarito.publish.site.enhance.copy_downloads`).
"""

from __future__ import annotations

import re

import json
import os
from pathlib import Path
from typing import Iterable, Mapping

from gabarito.errors import GabaritoError
from gabarito.inputs.gold import verify_frozen
from gabarito.study.integrity import MANIFEST, manifest_path, read_manifest
from gabarito.study.integrity import verify as verify_written
from gabarito.publish.formatting import Html, code, date_pt, integer, text
from gabarito.publish.labels import model as model_name
from gabarito.publish.labels import note_html
from gabarito.study.records import check_results_gold

#: Where the site puts the downloadable files, relative to its root.
DOWNLOADS = "downloads"


def load_json(path: str | Path):
    """A JSON file a page reads; one that its folder's results manifest records must still be the
    one its run wrote (:func:`gabarito.study.integrity.verify`), else a one-line error."""
    path = Path(path)
    if path.name != MANIFEST and path.name in read_manifest(manifest_path(path)):
        verify_written(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GabaritoError("file not found", path=path) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GabaritoError(f"not valid JSON: {exc}", path=path) from None


def load_results(study_dir: str | Path, name: str = "results.json") -> dict:
    """A study's results, after checking its gold: frozen, and the one the results were run on."""
    study_dir = Path(study_dir)
    manifest = study_dir / "gold.lock.json"
    if manifest.exists():
        verify_frozen(manifest)
    check_results_gold(study_dir / name)
    return load_json(study_dir / name)


def provenance_of(results: Mapping) -> dict:
    """The provenance of a results file: its ``provenance`` section, or the file itself for the
    small files that keep ``date``, ``git`` and ``machine`` at the top level."""
    prov = results.get("provenance")
    return prov if isinstance(prov, Mapping) else dict(results)


def corpus_documents(results: Mapping) -> int | None:
    """How many documents the results were measured on, as their provenance records it: the
    corpus's ``n_docs``, or the sum over its ``collections`` (the classic collections); ``None``
    when the provenance does not say."""
    corpus = provenance_of(results).get("corpus")
    if not isinstance(corpus, Mapping):
        return None
    if isinstance(corpus.get("n_docs"), int):
        return corpus["n_docs"]
    parts = [c.get("n_docs") for c in (corpus.get("collections") or {}).values() if isinstance(c, Mapping)]
    return sum(parts) if parts and all(isinstance(n, int) for n in parts) else None


# --- the facts ----------------------------------------------------------------------------------

def _engine_names(value, out: list[str]) -> None:
    if isinstance(value, str) or (isinstance(value, Mapping) and "code" in value):
        out.append(note_html(value))  # a recorded note (a plain string fails there, naming it)
    elif isinstance(value, Mapping):
        name = value.get("name")
        if isinstance(name, str):
            label = "ArcadeDB" if name.lower() == "arcadedb" else name
            label = label.replace("(trained here)", "(treinado neste projeto)")  # recorded in English
            version = str(value.get("version") or "").split(" ")[0]
            package = value.get("package")
            shown = f"{label} {version}".strip() if version else f"{label} ({package})" if package else label
            # a package name such as ir_measures is an identifier, not a word of the sentence
            out.append(code(shown) if re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?: \S+)?", shown) else shown)
            return
        for v in value.values():
            _engine_names(v, out)


def _model_names(value, out: list[str]) -> None:
    if isinstance(value, Mapping):
        ident = value.get("model_id") or value.get("id")
        if isinstance(ident, str):
            out.append(model_name(ident, value.get("engine")))
            return
        for v in value.values():
            _model_names(v, out)


#: Keys under which a results file names a model its tables used, outside its provenance (a row's
#: ``model``, a trained reader's ``base_model``), and how the box names each.
_MODEL_KEYS = {"model": "{}", "model_id": "{}", "base_model": "{} (base do leitor treinado aqui)"}


def _models_used(value, out: list[str]) -> None:
    """Every model id anywhere in a results file (:data:`_MODEL_KEYS`), named as the box names it:
    a file whose runs each used another model (perf.json's rows, a reader trained per fold) lists
    them all instead of "nenhum"."""
    if isinstance(value, Mapping):
        if isinstance(value.get("id"), str) and "weights_sha256" in value:  # a model record (a reader per fold)
            out.append(model_name(value["id"]))
        for key, v in value.items():
            if key in _MODEL_KEYS and isinstance(v, str) and "/" in v:
                engine = value.get("engine") if isinstance(value.get("engine"), str) else None
                out.append(_MODEL_KEYS[key].format(model_name(v, engine)))
            else:
                _models_used(v, out)
    elif isinstance(value, list):
        for v in value:
            _models_used(v, out)


def _unique(items: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for x in items:
        if x not in seen:
            seen.append(x)
    return seen


#: The extensions the box names (the widest of each family); the results file has them all.
_SHOWN_SIMD = ("avx2", "avx512f", "amx_tile", "asimd", "sve")


def machine(info: Mapping | None) -> Html:
    """``{'cpu_count': 2, 'cpu': {'model': 'AMD EPYC', 'simd': ['avx2', ...]}, 'platform': 'Linux-6.1-x86_64-…', ...}``
    -> ``'2 núcleos, AMD EPYC (avx2), Linux x86_64, Python 3.11.7'`` (older results have no ``cpu``)."""
    if not info:
        return Html("—")
    parts = []
    if info.get("cpu_count"):
        parts.append(f"{integer(info['cpu_count'])} núcleos")
    cpu = info.get("cpu") or {}
    if cpu.get("model"):
        simd = ", ".join(str(code(f)) for f in cpu.get("simd") or [] if f in _SHOWN_SIMD)
        parts.append(f"{text(cpu['model'])}" + (f" ({simd})" if simd else ""))
    system = str(info.get("platform") or "").split("-")[0]
    arch = info.get("machine") or ""
    if system or arch:
        parts.append(" ".join(x for x in (str(text(system)) if system else "", str(code(arch)) if arch else "") if x))
    if info.get("python"):
        parts.append(f"Python {text(info['python'])}")
    return Html(", ".join(parts))


#: What a processor's recorded name carries that a sentence does not need ("Intel(R) Xeon(R) CPU @ 2.20GHz").
_CPU_NOISE = re.compile(r"\((?:R|TM)\)|@.*$|\bCPU\b|\b\d+-Core\b|\bProcessor\b", re.I)


def machine_words(results: Mapping) -> str:
    """How a sentence names the computer a results file was measured on, from its provenance alone
    (cores, system, processor): ``'computador Linux de 2 núcleos'``, with ``' com processador AMD
    EPYC 7B13'`` when the results record the processor. Never a guess at what kind of machine it
    was (a laptop, a server): the page writes ``num`` or ``Num`` before it."""
    info = provenance_of(results).get("machine") or {}
    system = str(info.get("platform") or "").split("-")[0]
    words = "computador" + (f" {system}" if system else "")
    if info.get("cpu_count"):
        words += f" de {integer(info['cpu_count'])} {'núcleo' if info['cpu_count'] == 1 else 'núcleos'}"
    model = " ".join(_CPU_NOISE.sub(" ", str((info.get("cpu") or {}).get("model") or "")).split())
    return words + (f" com processador {model}" if model else "")


def facts(results: Mapping, *, models: Iterable[str] | None = None) -> list[tuple[str, object]]:
    """``(label, value)`` pairs of the provenance box; ``models`` names the models when the
    results' provenance does not (a study whose runs each used another model)."""
    prov = provenance_of(results)
    git = prov.get("git") or {}
    commit = git.get("commit")
    engines: list[str] = []
    _engine_names(prov.get("engine"), engines)
    found: list[str] = []
    _model_names(prov.get("model"), found)
    if not found:  # the provenance names none: the models the file's own rows record
        _models_used({k: v for k, v in results.items() if k != "provenance"}, found)
    names = _unique(list(models or []) + found)
    rows: list[tuple[str, object]] = [
        ("Medido em", date_pt(prov["date"]) if prov.get("date") else "—"),
        ("Commit", code(commit[:12], whole=True) if commit else "fora de um repositório git"),
        ("Motor", Html("; ".join(str(text(e)) for e in _unique(engines)) or "—")),
        ("Modelo" if len(names) == 1 else "Modelos",
         ("; " if any("," in n for n in names) else ", ").join(names) or "nenhum"),  # names with commas apart
        ("Computador da medida", machine(prov.get("machine"))),
    ]
    return rows


def measurement_dates(all_results: Mapping[str, Mapping]) -> tuple[str, str]:
    """The first and last measurement dates (ISO) among several results files."""
    found = sorted(str(provenance_of(r)["date"]) for r in all_results.values() if provenance_of(r).get("date"))
    if not found:
        raise GabaritoError("no results file records the date of its measurement")
    return found[0], found[-1]


def is_dirty(results: Mapping) -> bool:
    """Whether the results were computed on a working tree with uncommitted changes."""
    return bool((provenance_of(results).get("git") or {}).get("dirty"))


def provenance_box(results: Mapping, *, title: str = "De onde vêm os números", source: str | None = None,
                   models: Iterable[str] | None = None) -> Html:
    """The box with a page's provenance; ``source`` names the results file."""
    rows = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in facts(results, models=models))
    head = f"<p class=\"gabarito-provenance-title\"><strong>{text(title)}</strong>"
    if source:  # the file's name, not its path in the project (the downloads list links it)
        head += f" (arquivo {code(Path(source).name)})"
    head += "</p>"
    warn = ""
    if is_dirty(results):
        warn = ('<p class="gabarito-dirty"><strong>Atenção:</strong> estes resultados foram calculados num '
                "repositório com alterações ainda não registradas em commit; o commit acima não basta para "
                "reproduzi-los exatamente. A montagem do site foi autorizada a publicá-los mesmo assim.</p>")
    # a <div>, never an <aside>: Quarto places every <aside> in the page's margin (and first takes it out
    # of its callout), so under ``--renderer quarto`` the box would leave its fold (issue 44, Q44-aside)
    return Html(f'<div class="gabarito-provenance" role="note">{head}<dl>{rows}</dl>{warn}</div>')


# --- downloads ------------------------------------------------------------------------------------

#: Groups of downloadable files, in the order a page lists them.
GROUPS = {"results": "Resultados", "gold": "Gabarito", "qrels": "Julgamentos (qrels)",
          "runs": "Listas de cada método (runs)", "log": "Registros das execuções"}


def project_root(start: str | Path = ".") -> Path:
    """The folder holding ``_quarto.yml``, from ``start`` upwards."""
    here = Path(start).resolve()
    for p in (here, *here.parents):
        if (p / "_quarto.yml").is_file():
            return p
    raise GabaritoError("no _quarto.yml above this folder", path=here)


def _results_files(study_dir: Path) -> list[Path]:
    out = []
    for p in sorted(study_dir.glob("*.json")):
        if p.name in ("gold.lock.json", "study.json"):
            continue
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and ("provenance" in data or {"date", "git"} <= set(data)):
            out.append(p)
    return out


def _gold_files(study_dir: Path, results: list[Path]) -> list[Path]:
    out: list[Path] = []
    for r in results:
        gold = provenance_of(load_json(r)).get("gold_sha256") or {}
        for rel in gold:
            p = (study_dir / rel).resolve()
            out.append(p)
            lock = p.parent / "gold.lock.json"
            if lock.is_file():
                out.append(lock)
    return _unique_paths(out)


def _unique_paths(paths: Iterable[Path]) -> list[Path]:
    seen: list[Path] = []
    for p in paths:
        p = Path(p).resolve()
        if p not in seen:
            seen.append(p)
    return seen


def study_downloads(study_dir: str | Path) -> dict[str, list[Path]]:
    """A study's downloadable files, by group (:data:`GROUPS`): its results files, the gold they
    record (and its freeze manifest), its qrels and its run files. A file is listed once, in the
    first group that holds it (frozen qrels that are the gold are not listed again as qrels; a
    run folder's qrels are not listed again with its records), so no two lists repeat a file."""
    study_dir = Path(study_dir).resolve()
    results = _results_files(study_dir)
    files = sorted(p for d in ("runs", "qrels") for p in (study_dir / d).rglob("*") if p.is_file()) \
        if study_dir.is_dir() else []
    qrels = [p for p in files if "qrels" in p.name or p.parent.name == "qrels"]
    logs = [p for p in files if p.suffix == ".jsonl" or p.parent.parent.name == "runs"]
    runs = [p for p in files if p not in qrels and p not in logs]
    groups = {"results": results, "gold": _gold_files(study_dir, results), "qrels": qrels,
              "runs": runs, "log": logs}
    out: dict[str, list[Path]] = {}
    listed: set[Path] = set()
    for group, paths in groups.items():
        mine = [p for p in _unique_paths(paths) if p not in listed]
        listed.update(mine)
        if mine:
            out[group] = mine
    return out


def download_labels(paths: Iterable[Path]) -> dict[Path, str]:
    """The words of each file's link: its name, or, where files share a name, as many of the
    folders above it as tell them apart (``20261207-035247-98f767d4/qrels.trec``)."""
    paths = _unique_paths(paths)
    depth = dict.fromkeys(paths, 1)
    while True:
        named: dict[str, list[Path]] = {}
        for p in paths:
            named.setdefault("/".join(p.parts[-depth[p]:]), []).append(p)
        clash = [p for same in named.values() if len(same) > 1 for p in same if depth[p] < len(p.parts)]
        if not clash:
            return {p: "/".join(p.parts[-depth[p]:]) for p in paths}
        for p in clash:
            depth[p] += 1


def download_path(path: Path, root: Path) -> str:
    """Where a file goes in the site: ``downloads/<its path in the project>``."""
    try:
        rel = Path(path).resolve().relative_to(Path(root).resolve())
    except ValueError:
        raise GabaritoError("a download must live inside the project", path=path) from None
    return f"{DOWNLOADS}/{rel.as_posix()}"


def _up_to_root(root: Path, page_dir: str | Path) -> str:
    """The relative way from the page's folder up to the site's root: ``''`` or ``'../'``."""
    up = Path(os.path.relpath(root, Path(page_dir).resolve())).as_posix()
    return "" if up == "." else up + "/"


def file_link(study_dir: str | Path, rel: str, *, page_dir: str | Path = ".") -> Html:
    """A file of a study (``rel``, relative to its folder, as its results record it:
    ``../standard_collections/qrels/adi.txt``) shown by its name and linked to its copy in the
    site's downloads, never as a path in the text."""
    root = project_root(page_dir)
    path = (Path(study_dir) / rel).resolve()
    href = _up_to_root(root, page_dir) + download_path(path, root)
    return Html(f'<a href="{text(href)}" download>{code(path.name)}</a>')


def downloads_block(study_dir: str | Path, *, page_dir: str | Path = ".", open_limit: int = 8) -> Html:
    """The list of a study's files, each linked to its copy in the site. Long groups (more than
    ``open_limit`` files) are folded."""
    root = project_root(page_dir)
    prefix = _up_to_root(root, page_dir)
    parts = ['<div class="gabarito-downloads"><p><strong>Arquivos deste capítulo</strong> (baixe e confira):</p><ul>']
    groups = study_downloads(study_dir)
    words = download_labels(p for paths in groups.values() for p in paths)
    for group, paths in groups.items():
        links = ", ".join(f'<a href="{text(prefix + download_path(p, root))}" download>{code(words[p])}</a>'
                          for p in paths)
        label = f"{GROUPS[group]} ({integer(len(paths))} {'arquivo' if len(paths) == 1 else 'arquivos'})"
        if len(paths) > open_limit:
            parts.append(f"<li><details><summary>{text(label)}</summary>{links}</details></li>")
        else:
            parts.append(f"<li>{text(label)}: {links}</li>")
    parts.append("</ul></div>")
    return Html("".join(parts))


def all_downloads(root: str | Path) -> list[Path]:
    """Every downloadable file of every study under ``case-studies/``."""
    root = Path(root)
    out: list[Path] = []
    for study in sorted(p for p in (root / "case-studies").glob("*") if p.is_dir()):
        for paths in study_downloads(study).values():
            out += paths
    return _unique_paths(out)
