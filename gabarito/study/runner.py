"""The one study runner: gold check, shared arguments, phases, provenance, atomic writes.

A study script declares and wires; the runner does the rest::

    from gabarito.study.runner import study_main

    def add_arguments(ap): ap.add_argument("--k", type=int, default=10)

    def run(ctx):                      # ctx: StudyContext
        with ctx.phase("load"):
            ...
        with ctx.arcadedb("my_database") as conn:
            ...
        ctx.write_run("bm25", run)     # TREC file under <out>/runs/
        return {"provenance": ctx.provenance(corpus=..., model=..., engine=..., parameters=...), ...}

    if __name__ == "__main__":
        study_main(__file__, run, add_arguments)

Before ``run`` is called the runner has verified every frozen gold file of ``study.json`` (nothing
runs against questions that changed after they were frozen). After it returns, the results get
the study's name and title, the phase timings and the wall time, and are written atomically;
a :class:`~gabarito.errors.GabaritoError` anywhere is one line on stderr and exit status 2, and
nothing is written.

Shared arguments (every study has them): ``--arcadedb-url`` (an external server; credentials in
``$GABARITO_ARCADEDB_USER`` / ``$GABARITO_ARCADEDB_PASSWORD``), ``--db-dir`` (root folder of the
embedded server), ``--mirror`` (dataset mirror), ``--out`` (output folder, default the study
folder), ``--resamples`` (bootstrap / randomization resamples, default from ``study.json``),
``--cold`` (drop the study's databases and cached vectors first) and ``--device`` (where the
encoders and second readers run: ``auto`` is CUDA when torch sees it, else the CPU; not asked, the
CPU as always -- :func:`gabarito.retrieval.device.choose_device`). A study passes ``ctx.device`` to
the models it loads, and each model records the device it ran on in its provenance; a study whose
own arguments define ``--device`` keeps its own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, Mapping

from gabarito.errors import GabaritoError, run_main
from gabarito.measure.score import check_resamples
from gabarito.study.spec import StudySpec

Run = Callable[["StudyContext"], dict]
#: What a study stores beside what it measured (intervals, tests, corrections), computed from the
#: values its results hold: ``statistics(results, ctx) -> {key: value}``, added to the results.
Statistics = Callable[[Mapping, "StudyContext"], dict]


def say(message: str) -> None:
    """One-line progress message (long loops use tqdm bars)."""
    print(message, file=sys.stderr, flush=True)


class StudyContext:
    """What a study's ``run`` gets: its spec, parsed arguments, verified gold, and helpers."""

    def __init__(self, spec: StudySpec, args: argparse.Namespace, gold_sha256: Mapping[str, str]):
        self.spec, self.args = spec, args
        self.gold_sha256 = dict(gold_sha256)
        self.out = Path(args.out)
        self.seed = spec.seed
        self.resamples = args.resamples
        #: the device asked for with ``--device`` (``None``: not asked, the models' default, the CPU)
        self.device: str | None = getattr(args, "device", None)
        self.phases: dict[str, float] = {}
        self.started = time.perf_counter()
        from gabarito.study.records import git_state

        self.git = git_state()  # the code as it was when the run started

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a named phase (seconds, summed when a name repeats) and say when it starts."""
        say(f"{self.spec.name}: {name}")
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.phases[name] = round(self.phases.get(name, 0.0) + time.perf_counter() - t0, 3)

    def mirror(self) -> str | None:
        return self.args.mirror

    def db_dir(self, suffix: str | None = None) -> Path:
        """Root folder of the embedded ArcadeDB server of this study."""
        from gabarito.retrieval.models import cache_dir

        if self.args.db_dir is not None:
            return Path(self.args.db_dir)
        return cache_dir() / f"arcadedb-{suffix or self.spec.name}"

    def arcadedb(self, database: str, *, suffix: str | None = None, **kwargs):
        """A connection to ``database`` on the external server or on the study's embedded one."""
        from gabarito.retrieval.arcadedb import connect

        return connect(self.args.arcadedb_url, root_dir=self.db_dir(suffix), database=database, **kwargs)

    def provenance(self, *, corpus: Mapping, model: Mapping | None, engine: Mapping,
                   parameters: Mapping) -> dict:
        """The results' provenance: inputs, gold hashes, seed and resamples, commit, date, machine."""
        from gabarito.study.records import provenance

        params = {**parameters, "seed": self.seed, "bootstrap_resamples": self.resamples}
        return provenance(corpus=corpus, gold_sha256=self.gold_sha256, model=model, engine=engine,
                          parameters=params, git=self.git)

    def runs_dir(self) -> Path:
        return self.out / "runs"

    def write_run(self, method: str, run: Mapping, *, tag: str | None = None) -> Path:
        """A TREC run file ``<out>/runs/<method>.trec`` ('@' written as '_at_'), recorded in the
        folder's manifest (:func:`record_written`)."""
        from gabarito.core.runs import Run as RunType

        run = run if isinstance(run, RunType) else RunType(run)
        name = method.replace("@", "_at_")
        return record_written(run.write_trec(self.runs_dir() / f"{name}.trec", tag or f"gabarito-{method}"))

    def write_qrels(self, name: str, qrels: Mapping) -> Path:
        """The qrels a study scored with, ``<out>/runs/qrels.<name>.txt``, recorded like a run."""
        from gabarito.core.runs import Qrels

        qrels = qrels if isinstance(qrels, Qrels) else Qrels(qrels)
        return record_written(qrels.write_trec(self.runs_dir() / f"qrels.{name}.txt"))

    def wall_s(self) -> float:
        return round(time.perf_counter() - self.started, 2)


def record_written(path: Path) -> Path:
    """Record a file a study just wrote (a TREC run, its qrels, a log it appended to) in its folder's
    ``results.sha256.json`` (:func:`gabarito.study.integrity.record`), so that a page or a command
    refuses it once edited; return its path."""
    from gabarito.study.integrity import record
    from gabarito.study.records import now_iso

    record(path, when=now_iso())
    return Path(path)


def shared_parser(spec: StudySpec, doc: str | None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=f"gabarito study {spec.name}", description=doc or spec.title,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arcadedb-url", default=os.environ.get("GABARITO_ARCADEDB_URL"),
                    help="an external ArcadeDB server instead of the embedded one "
                         "(credentials from $GABARITO_ARCADEDB_USER / $GABARITO_ARCADEDB_PASSWORD)")
    ap.add_argument("--db-dir", type=Path, default=None, help="root folder of the embedded ArcadeDB server")
    ap.add_argument("--mirror", default=os.environ.get("GABARITO_DATA_MIRROR"),
                    help="local dataset mirror (or $GABARITO_DATA_MIRROR)")
    ap.add_argument("--out", type=Path, default=spec.dir, help="output folder (default: the study folder)")
    ap.add_argument("--resamples", type=int, default=spec.resamples,
                    help=f"bootstrap / randomization resamples (default: {spec.resamples})")
    ap.add_argument("--cold", action="store_true", help="start from nothing: drop databases and cached vectors")
    return ap


def add_device_option(ap: argparse.ArgumentParser) -> bool:
    """The shared ``--device``, unless the study's own arguments already define one (then the
    study reads and checks its own); True when it was added here."""
    from gabarito.retrieval.device import add_device_argument

    if "--device" in ap._option_string_actions:
        return False
    add_device_argument(ap)
    return True


def check_device(args: argparse.Namespace) -> None:
    """A device that :func:`~gabarito.retrieval.device.choose_device` cannot read is one line,
    before the gold check and any work."""
    if args.device is not None:
        from gabarito.retrieval.device import choose_device

        choose_device(args.device)


def run_study(spec: StudySpec, run: Run, argv=None, *,
              add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
              doc: str | None = None, statistics: Statistics | None = None) -> Path:
    """Verify the gold, parse the arguments, call ``run``, add its ``statistics``, write its
    results; return their path. With ``--statistics-only`` (offered when the study has
    ``statistics``): no search and no training, only the statistics recomputed from the results
    file already written (:func:`store_statistics`)."""
    ap = shared_parser(spec, doc)
    if add_arguments is not None:
        add_arguments(ap)
    if statistics is not None:
        ap.add_argument("--statistics-only", action="store_true",
                        help="recompute only the statistics the study stores (intervals, tests, corrections) "
                             "from the values its results file already holds: no search, no training")
    shared_device = add_device_option(ap)
    args = ap.parse_args(argv)
    check_resamples(args.resamples)
    if shared_device:
        check_device(args)
    gold = spec.verify_gold()  # gold first: before any search
    if args.mirror:
        os.environ["GABARITO_DATA_MIRROR"] = str(args.mirror)
    ctx = StudyContext(spec, args, gold)
    if getattr(args, "statistics_only", False):
        return store_statistics(ctx, statistics)
    results = run(ctx)
    if not isinstance(results, dict) or "provenance" not in results:
        raise GabaritoError(f"study {spec.name} returned results without provenance")
    if statistics is not None:
        results.update(statistics(results, ctx))
    return write_study_results(ctx, results)


def store_statistics(ctx: StudyContext, statistics: Statistics) -> Path:
    """Add the study's ``statistics`` to the results file it already wrote, recomputed from the
    values that file holds (a file edited since it was written, or written against other gold
    than the study's frozen gold now, is refused first); every other key is kept as it was, and
    the file notes when and at which commit each change of them was stored (``provenance.migrations``,
    one entry per change: a statistic stored again in another shape or value is a new entry; the
    same values again leave the file untouched). Written atomically."""
    import json

    from gabarito.study.records import now_iso, stamp_migration, verify_written, write_results

    path = ctx.out / ctx.spec.results
    if not path.is_file():
        raise GabaritoError("no results to add statistics to: run the study first", path=path)
    verify_written(path)
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GabaritoError(f"cannot read results: {exc}", path=path) from None
    recorded = (results.get("provenance") or {}).get("gold_sha256") or {}
    other = sorted(rel for rel, sha in recorded.items() if ctx.gold_sha256.get(rel) != sha)
    if not recorded or other:
        raise GabaritoError(f"results computed against other gold ({', '.join(other) or 'none recorded'}): "
                            f"rerun the study", path=path)
    added = json.loads(json.dumps(statistics(results, ctx)))  # as the file will hold them
    changed = sorted(k for k, v in added.items() if results.get(k) != v)
    if not changed:
        say(f"{ctx.spec.name}: {', '.join(sorted(added))} already stored as computed; {path} left as it was")
        return path
    results.update(added)
    stamp_migration(results, f"statistics stored from the measured values: {', '.join(changed)}", now_iso(),
                    commit=ctx.git.get("commit"), once=False)
    path = write_results(path, results)
    say(f"{ctx.spec.name}: stored {', '.join(changed)} in {path}")
    return path


class StudyExited(GabaritoError):
    """A study's script exited with a failure status (``code``); at status 2 it has printed its
    own one line already (``reported``: the command prints no second one)."""

    def __init__(self, name: str, code, script: Path):
        super().__init__(f"study {name} exited with status {code}", path=script)
        self.code = code
        self.reported = code == 2


def run_script(spec: StudySpec, argv: list[str]) -> None:
    """Run a study's script as ``__main__`` with ``argv``; a failure is one line. Ctrl-C (the
    study printed its own line), SIGTERM and SIGHUP (``gabarito`` printed its own: exit 128 + n)
    are raised again as they came, so the caller's clean-up runs and the status is the signal's."""
    import runpy
    import signal

    from gabarito.errors import INTERRUPTED

    stopped = (INTERRUPTED, 128 + signal.SIGTERM, 128 + signal.SIGHUP)

    script = spec.dir / spec.script
    saved = sys.argv
    sys.argv = [str(script), *argv]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        if exc.code in stopped:
            raise
        if exc.code not in (0, None):
            raise StudyExited(spec.name, exc.code, script) from None
    finally:
        sys.argv = saved


def write_study_results(ctx: StudyContext, results: dict) -> Path:
    from gabarito.study.records import write_results

    out = {"study": ctx.spec.name, "title": ctx.spec.title, **results}
    out.setdefault("phases_s", dict(ctx.phases))
    out.setdefault("wall_s", ctx.wall_s())
    path = write_results(ctx.out / ctx.spec.results, out)
    say(f"{ctx.spec.name}: wrote {path} ({out['wall_s']} s)")
    return path


def study_main(script: str | Path, run: Run, add_arguments=None, argv=None,
               statistics: Statistics | None = None) -> "NoReturn":  # noqa: F821
    """Entry point of a study script: the study is the ``study.json`` beside ``script``."""
    spec = StudySpec.load(Path(script).resolve().parent / "study.json")
    doc = sys.modules["__main__"].__doc__ if "__main__" in sys.modules else None

    def main(argv_):
        run_study(spec, run, argv_, add_arguments=add_arguments, doc=doc, statistics=statistics)
        return 0

    run_main(main, argv)


def variant_main(study_dir: str | Path, run: Run, add_arguments=None, *, name: str, title: str, results: str,
                 doc: str | None = None, argv=None, statistics: Statistics | None = None) -> "NoReturn":  # noqa: F821
    """Entry point of a benchmark that shares a study's ``study.json`` (its gold, seed and
    resamples) but runs under its own ``name`` and writes its own ``results`` file."""
    import dataclasses

    spec = dataclasses.replace(StudySpec.load(Path(study_dir) / "study.json"), name=name, title=title,
                               results=results)

    def main(argv_):
        run_study(spec, run, argv_, add_arguments=add_arguments, doc=doc, statistics=statistics)
        return 0

    run_main(main, argv)
