"""Replay issue 15's defects on any checkout and print what happens (one line each).

    git archive 5995a48 | tar -x -C /tmp/old          # the code before issue 15
    PYTHONPATH=/tmp/old python tests/reliability/replay_scenarios.py
    PYTHONPATH=.        python tests/reliability/replay_scenarios.py

Self-contained on purpose (it imports only names both versions have), so the same scenarios
run on the old and the new code; docs/reliability.md lists what each printed. Not a test.
"""
import json, multiprocessing, os, stat, subprocess, sys, tempfile, traceback
from pathlib import Path
import numpy as np
FORK = multiprocessing.get_context("fork")
T = Path(tempfile.mkdtemp())
def show(name, fn):
    try: print(f"{name}: {fn()}")
    except BaseException as e: print(f"{name}: raised {type(e).__name__}: {str(e)[:150]}")
from gabarito.study.records import append_jsonl
def app(args):
    p, w = args
    for i in range(100): append_jsonl(p, {"w": w, "i": i, "pad": "x"*2000})
def appends():
    p = T/"a.jsonl"
    with FORK.Pool(3) as pool: pool.map(app, [(p, w) for w in range(3)])
    return f"{len(p.read_text().splitlines())} lines of 300"
show("concurrent appends", appends)
from gabarito.evaluation.compare import load_runs
from gabarito.evaluation.runlog import unique_run_id, write_run
def record(run_id: str, value: float = 1.0) -> dict:
    return {"run_id": run_id, "config": {"k": 10}, "evaluation_sha256": "e", "per_query": [
        {"id": "q1", "query": "x", "type": "", "severity": "", "answerable": True, "expected": ["d1"],
         "returned": [{"id": "d1", "score": value}], "hit@1": True, "hit@3": True, "hit@5": True, "rr": 1.0,
         "false_positive": "", "top_score": value, "top_segment": "d1"}]}


def damaged():
    log = T/"d.jsonl"; append_jsonl(log, record("run-a"))
    with open(log, "ab") as fh: fh.write(json.dumps(record("run-b")).encode()[:50])
    append_jsonl(log, record("run-c"))
    return [r["run_id"] for r in load_runs(["run-a", "run-c"], log)]
show("damaged log line", damaged)
def one(args):
    runs, barrier = args; barrier.wait(); rec = record("20260101-000000-abcdef12")
    try:
        rid = unique_run_id(rec, runs/"log.jsonl", runs); write_run(rec, runs/rid, runs/"log.jsonl"); return "ok"
    except Exception as e: return f"{type(e).__name__}: {str(e)[:80]}"
def parallel():
    runs = T/"runs"; barrier = FORK.Manager().Barrier(8)
    with FORK.Pool(8) as pool: out = pool.map(one, [(runs, barrier)]*8)
    return f"{out.count('ok')} of 8 kept; {[o for o in out if o != 'ok'][:2]}"
show("parallel run ids", parallel)
def modes():
    os.umask(0o022); rec = record("m1"); runs = T/"m"; rid = unique_run_id(rec, runs/"log.jsonl", runs)
    p = write_run(rec, runs/rid, runs/"log.jsonl")
    return f"folder {oct(stat.S_IMODE((runs/rid).stat().st_mode))}, log {oct(stat.S_IMODE(p['log'].stat().st_mode))} (umask 022)"
show("file modes", modes)
from gabarito.inputs.documents import load_evaluation
def dup():
    p = T/"e.json"; p.write_text(json.dumps([{"id": "a", "query": "Prazo de troca?", "relevantIds": ["d1"]}, {"id": "b", "query": "prazo de troca?", "relevantIds": ["d2"]}]))
    return f"accepted {len(load_evaluation(p))} questions"
show("same question, other relevantIds", dup)
def floatid():
    b = T/"beir"; (b/"qrels").mkdir(parents=True); (b/"queries.jsonl").write_text(json.dumps({"_id": 2.0, "text": "x?"})+"\n"); (b/"qrels"/"test.tsv").write_text("2\td1\t1\n")
    return load_evaluation(b)
show("float _id", floatid)
from gabarito.retrieval.models import EmbeddingCache
from gabarito.retrieval.models import ModelSource
from gabarito.hashing import sha256_text
def make_model_folder(folder: Path, pooling: str = "mean") -> Path:
    """A sentence-transformers-shaped folder (the files that matter; fake weights)."""
    (folder / "1_Pooling").mkdir(parents=True, exist_ok=True)
    (folder / "modules.json").write_text(json.dumps([{"idx": 0, "path": "", "type": "Transformer"},
                                                     {"idx": 1, "path": "1_Pooling", "type": "Pooling"}]))
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": pooling}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 256}))
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "README.md").write_text("about the model")
    return folder


class FakeEncoder:
    """Deterministic unit vectors from the text and the folder's pooling setting; records calls."""

    def __init__(self, folder: Path | None = None, model_id="fake/model", weights="ab" * 32,
                 document_prefix="doc: ", dim=4):
        self.model_id, self.weights_sha256, self.document_prefix, self.dim = model_id, weights, document_prefix, dim
        self.query_prefix = "q: "
        self.source = ModelSource(model_id, str(folder), "local folder") if folder else None
        self.calls: list[list[str]] = []

    def _pooling(self) -> str:
        if self.source is None:
            return "mean"
        return json.loads((Path(self.source.location) / "1_Pooling" / "config.json").read_text())["pooling_mode"]

    def vectors(self, texts):
        rows = []
        for t in texts:
            seed = int(sha256_text(self._pooling() + self.document_prefix + t)[:8], 16)
            v = np.random.default_rng(seed).normal(size=self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)

    def encode_documents(self, texts, **kw):
        self.calls.append(list(texts))
        return self.vectors(texts)


def pooling():
    f = make_model_folder(T/"m"); c = EmbeddingCache(T/"cache"); e = FakeEncoder(f); texts = ["a", "b", "c"]
    c.encode(e, texts); (f/"1_Pooling"/"config.json").write_text('{"pooling_mode": "cls"}')
    out = c.encode(e, texts)
    return f"hits {c.hits}, misses {c.misses}; vectors right for cls: {bool(np.allclose(out, e.vectors(texts)))}"
show("pooling change, same weights", pooling)
def damaged_cache():
    c = EmbeddingCache(T/"c2"); e = FakeEncoder(); c.encode(e, ["a", "b"])
    f = (sorted((T/"c2").rglob("keys.json")) or sorted((T/"c2").rglob("*.npz")))[0]  # old layout, or a pack
    f.write_bytes(f.read_bytes()[:30])
    c.encode(e, ["a", "b"]); return f"cut {f.name}: recomputed, misses {c.misses}"
show("cut-short cache file", damaged_cache)
from gabarito.retrieval.arcadedb import ArcadeServer
def orphan():
    root = T/"root"; root.mkdir()
    srv = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "com.arcadedb.server.ArcadeDBServer", f"-Darcadedb.server.rootPath={root}"])
    (root/"server.pid").write_text(f"{srv.pid}\n"); import time; time.sleep(1.5)
    try:
        s = ArcadeServer(root)
        if hasattr(s, "_check_stale"): s._check_stale()
        else:
            (root/"server.owner").write_text(json.dumps({"owner_pid": 999999, "server_pid": srv.pid}))
            __import__("gabarito.retrieval.arcadedb.ownership", fromlist=["x"]).reap_orphan(root, root/"server.pid", print, 5)
        time.sleep(0.5)
        return f"server pid {srv.pid} alive after: {srv.poll() is None}"
    finally: srv.kill()
show("server of a dead owner", orphan)
