"""A study's declaration (``case-studies/<name>/study.json``) and the registry of studies.

``study.json`` fields:

* ``name``, ``title`` -- the study's id (``gabarito study <name>``) and a one-line English title;
* ``script`` -- the study script in the same folder; it calls :func:`gabarito.study.runner.study_main`;
* ``gold`` -- a list of ``{"manifest": path, "files": [paths]?}``: freeze manifests (paths relative
  to the study folder) and, optionally, the subset of their files this study is judged on (default:
  all of them). The runner verifies them before anything runs; results record their sha256 keyed by
  path relative to the study folder;
* ``results`` -- the results file the study writes (default ``results.json``);
* ``corpus`` -- ``{"dataset", "file"}`` of a fetched dataset whose sha256 the results record, or
  ``null``;
* ``seed``, ``resamples`` -- the bootstrap / randomization seed and resample count of this study
  (default :data:`gabarito.measure.stats.DEFAULT_SEED` and 10,000), recorded in its results;
* ``variants`` -- other scripts of the folder that share this declaration and write their own
  results file (``[{"script", "results"}]``, run with :func:`gabarito.study.runner.variant_main`);
  ``gabarito report`` runs them after the study when their results are stale;
* ``after`` -- names of studies whose results (or cached models) this one reads: ``gabarito report``
  runs those first;
* ``writes`` -- the other scripts that write a file a page reads (``[{"script", "files",
  "frozen_in"?}]``; ``script`` and ``files`` relative to the study folder): benchmarks that measure
  the machine or need other engines' packages, and the steps that prepare gold before it is frozen.
  ``gabarito studies`` shows each file's state (:meth:`StudySpec.file_state`); ``gabarito report``
  refuses one changed after its run and names the stale ones, but runs none of them. ``frozen_in``
  names the freeze manifest that holds the files' sha256 (gold preparation); otherwise the run's
  entry in the folder's ``results.sha256.json`` and the gold the file records decide.
* ``claims`` -- the declared plan of each results file: what was selected on which queries, the
  comparison families its p-values are corrected over, and which results are exploratory
  (:mod:`gabarito.study.claims`, validated when the study is loaded).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from gabarito.errors import GabaritoError
from gabarito.files import read_json
from gabarito.hashing import sha256_file
from gabarito.inputs.gold import verify_frozen
from gabarito.measure.score import DEFAULT_RESAMPLES
from gabarito.measure.stats import DEFAULT_SEED
from gabarito.paths import ROOT

STUDIES = ROOT / "case-studies"


@dataclass
class StudySpec:
    name: str
    title: str
    dir: Path
    script: str
    gold: list[dict] = field(default_factory=list)
    results: str = "results.json"
    corpus: dict | None = None
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    variants: list[dict] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    writes: list[dict] = field(default_factory=list)
    claims: dict = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> "StudySpec":
        path = Path(path)
        raw = read_json(path, missing="no study.json")
        if not isinstance(raw, dict):
            raise GabaritoError("expected a JSON object", path=path)
        missing = [k for k in ("name", "title", "script", "gold") if k not in raw]
        if missing:
            raise GabaritoError(f"missing field {missing[0]!r}", path=path)
        known = {"name", "title", "script", "gold", "results", "corpus", "seed", "resamples", "variants", "after",
                 "writes", "claims"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise GabaritoError(f"unknown field {unknown[0]!r}", path=path)
        gold = raw["gold"]
        if not isinstance(gold, list) or not gold or not all(isinstance(g, dict) and "manifest" in g for g in gold):
            raise GabaritoError("'gold' must be a non-empty list of {manifest, files?}", path=path)
        variants = raw.get("variants", [])
        if not isinstance(variants, list) or not all(isinstance(v, dict) and {"script", "results"} <= set(v)
                                                     for v in variants):
            raise GabaritoError("'variants' must be a list of {script, results}", path=path)
        _check_writes(raw.get("writes", []), path)
        fields = {k: v for k, v in raw.items() if k in known}
        if "claims" in raw:
            from gabarito.study.claims import parse_claims

            fields["claims"] = parse_claims(raw["claims"], path)
        return cls(dir=path.parent, **fields)

    def variant(self, entry: dict) -> "StudySpec":
        """This declaration with a variant's script and results file (same gold, corpus and seed)."""
        import dataclasses

        return dataclasses.replace(self, name=f"{self.name}/{Path(entry['script']).stem}", script=entry["script"],
                                   results=entry["results"], variants=[], writes=[])

    @property
    def results_path(self) -> Path:
        return self.dir / self.results

    def verify_gold(self) -> dict[str, str]:
        """Check every frozen gold file; return ``{path relative to the study folder: sha256}``."""
        out = {}
        for entry in self.gold:
            manifest = self.dir / entry["manifest"]
            frozen = {os.path.normpath(os.path.relpath(manifest.parent / rel, self.dir)): sha
                      for rel, sha in verify_frozen(manifest).items()}
            wanted = entry.get("files")
            if wanted is None:
                out.update(frozen)
                continue
            for rel in wanted:
                rel = os.path.normpath(rel)
                if rel not in frozen:
                    raise GabaritoError(f"gold file {rel!r} is not frozen in this manifest", path=manifest)
                out[rel] = frozen[rel]
        return out

    def corpus_sha256(self, mirror: str | None = None) -> str | None:
        if not self.corpus:
            return None
        from gabarito.inputs.datasets import fetch

        return sha256_file(fetch(self.corpus["dataset"], mirror=mirror) / self.corpus["file"])

    def staleness(self, mirror: str | None = None) -> str | None:
        """Why the results must be recomputed, or None when they are current. A study (not a
        variant) is also not current when a file its folder's manifests record, a run folder or a
        run log under it is not the one its run wrote (:func:`gabarito.study.integrity.tree_problems`)."""
        from gabarito.study.integrity import tree_problems
        from gabarito.study.records import stale_reason

        if "/" not in self.name:  # a variant shares the folder: its study says it once
            for path, why in tree_problems(self.dir):
                return f"{os.path.relpath(path, self.dir)}: {why}"
        return stale_reason(self.results_path, gold_sha256=self.verify_gold(),
                            corpus_sha256=self.corpus_sha256(mirror))


    def written(self) -> list[tuple[dict, str]]:
        """Every ``(writes entry, file)`` of this study, in declaration order."""
        return [(entry, rel) for entry in self.writes for rel in entry["files"]]

    def file_state(self, entry: dict, rel: str, mirror: str | None = None) -> str | None:
        """Why a file of ``writes`` is not the one its script wrote for the present inputs, or None."""
        path = self.dir / rel
        if not path.exists():
            return "no results yet"
        if entry.get("frozen_in"):
            return _frozen_state(self.dir / entry["frozen_in"], path)
        from gabarito.study.integrity import manifest_path, read_manifest
        from gabarito.study.records import stale_reason

        try:
            prov = json.loads(path.read_text(encoding="utf-8")).get("provenance") or {}
        except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            prov = {}
        if path.name not in read_manifest(manifest_path(path)) and not prov:
            return "unrecorded: neither a run nor a freeze manifest holds its sha256"
        recorded = prov.get("gold_sha256") or {}
        gold_now = {r: (sha256_file(path.parent / r) if (path.parent / r).exists() else "missing") for r in recorded}
        corpus = self.corpus_sha256(mirror) if (prov.get("corpus") or {}).get("sha256") else None
        return stale_reason(path, gold_sha256=gold_now, corpus_sha256=corpus)

    def written_integrity(self, entry: dict, rel: str) -> str | None:
        """Why a file of ``writes`` is not byte for byte the one its script wrote or froze (modified,
        unrecorded, not frozen), or None; a file not there is read by no one (None). Unlike
        :meth:`file_state`, it reads no input (no dataset, no gold): what ``site`` and ``report`` refuse."""
        from gabarito.study.integrity import state

        path = self.dir / rel
        if not path.exists():
            return None
        if entry.get("frozen_in"):
            return _frozen_state(self.dir / entry["frozen_in"], path)
        return state(path)

    def verify_files(self) -> None:
        """Refuse, in one line naming the file, the first file of this study that a page reads or a
        command trusts and that is not the one its run wrote: the files of ``writes``
        (:meth:`written_integrity`) and everything its folder's manifests, run folders and run logs
        hold (:func:`gabarito.study.integrity.verify_tree`)."""
        from gabarito.study.integrity import verify_tree

        for entry, rel in self.written():
            why = self.written_integrity(entry, rel)
            if why:
                raise GabaritoError(f"{why}: rerun {entry['script']} (or restore the file with git); "
                                    "nothing is published from it", path=self.dir / rel)
        verify_tree(self.dir)


def _check_writes(writes, path: Path) -> None:
    ok = isinstance(writes, list) and all(
        isinstance(w, dict) and isinstance(w.get("script"), str) and set(w) <= {"script", "files", "frozen_in"}
        and isinstance(w.get("files"), list) and w["files"] and all(isinstance(f, str) for f in w["files"])
        for w in writes)
    if not ok:
        raise GabaritoError("'writes' must be a list of {script, files, frozen_in?}", path=path)


def _frozen_state(manifest: Path, path: Path) -> str | None:
    """A file's state against the freeze manifest that holds its sha256."""
    raw = read_json(manifest, missing="no freeze manifest")
    frozen = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(frozen, dict):
        raise GabaritoError("not a freeze manifest: expected an object with 'files'", path=manifest)
    rel = os.path.relpath(path, manifest.parent)
    if rel not in frozen:
        return f"not frozen in {manifest.name}"
    if sha256_file(path) != frozen[rel]:
        return f"modified after it was frozen in {manifest.name}"
    return None


def all_studies(root: Path = STUDIES) -> dict[str, StudySpec]:
    """Every ``<root>/<name>/study.json``, keyed by name. No ``root`` folder (an installed gabarito:
    the wheel holds the command, not the studies' data) is a one-line error saying where they are."""
    if not Path(root).is_dir():
        raise GabaritoError(f"no case studies here: {root} is not a folder (an installed gabarito holds the "
                            f"command only); the studies come with the report's source: download the source archive "
                            f"the report's site offers (downloads/pacote/) or clone the repository, then run gabarito "
                            f"from that folder")
    out = {}
    for path in sorted(Path(root).glob("*/study.json")):
        spec = StudySpec.load(path)
        out[spec.name] = spec
    return out


def in_order(studies: dict[str, StudySpec]) -> list[StudySpec]:
    """The studies, each after the ones it names in ``after`` (otherwise by name); a cycle or an
    unknown name is a one-line error."""
    done: dict[str, StudySpec] = {}

    def visit(name: str, path: tuple) -> None:
        if name in done:
            return
        if name in path:
            raise GabaritoError(f"studies wait for each other: {' -> '.join((*path, name))}")
        if name not in studies:
            raise GabaritoError(f"'after' names an unknown study {name!r}", path=studies[path[-1]].dir / "study.json")
        for first in studies[name].after:
            visit(first, (*path, name))
        done[name] = studies[name]

    for name in sorted(studies):
        visit(name, ())
    return list(done.values())


def find_study(name: str, root: Path = STUDIES) -> StudySpec:
    """The study called ``name``; an unknown name is a one-line error listing the known ones."""
    studies = all_studies(root)
    if name not in studies:
        raise GabaritoError(f"unknown study {name!r}; known: {', '.join(studies) or 'none'}")
    return studies[name]
