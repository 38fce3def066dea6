"""A team server at scale: one embedded PostgreSQL with N memories, two kenning daemons in front of it.

    .venv/bin/python bench/scale_pg.py --memories 20000 --duration 30 --agents 10   # a quick look
    nice -n 5 .venv/bin/python bench/scale_pg.py --out /tmp/scale_pg.json          # 1,000,000, 50 agents, 5 min

1. **Build** (timed per step): an embedded PostgreSQL (pgvector; `store.pg.server`), kenning's
   migrations, then N synthetic memories (bench/latency.py's sentences, 20 projects) bulk-loaded
   with COPY — the full-text sync trigger is off during the load and the BM25 tables are rebuilt
   in one statement after it (`store.pg.search.rebuild_fts`), as a migration of a big store would
   — and one **synthetic unit vector** per memory (random, not the model's: the latency figures
   are real, what recall finds by meaning is not), then the HNSW index (built here with
   --hnsw-m / --hnsw-ef-construction; the daemon's own default is pgvector's m 16 / 64).
2. **Two daemons** (`kenning serve`, each its own home, both `store: postgres` on the one database;
   pipeline workers on): recall p50/p95 and session-start p50/p95 through daemon A, idle.
3. **Agents**: --agents threads for --duration seconds, each a simulated coding agent: session
   start, then turns of user-prompt-submit, post-tool-use and now and then a remember, a think time
   between hooks (--think-ms), session end; every request goes to one daemon or the other at
   random (a balancer without affinity). Reported: each hook's p50/p95, errors (any non-2xx or
   transport failure), and **lost writes**: every remembered id is read back through the *other*
   daemon afterwards, and every extract job those memories queued must have been leased exactly once.
4. **RSS** of each daemon (its process and children) after the run.

The machine's load average is reported: figures taken on a shared machine are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import queries, synthetic  # noqa: E402

PROJECTS = [f"team-{i:02d}" for i in range(20)]
PG_EPOCH = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": pct(values, 0.5), "p95": pct(values, 0.95), "p99": pct(values, 0.99),
            "max": round(max(values), 2) if values else None}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- 1. build ------------------------------------------------------------------------------------
def embedding_identity() -> tuple[str, int]:
    """The model id and width the daemons' embedder stores vectors under (their settings)."""
    from kenning.core.config import load_settings
    from kenning.providers.registry import build_embedding_provider

    embedder = build_embedding_provider(load_settings(environ={}).embedding)
    return embedder.model_id, int(embedder.dims)


def _binary_rows(rows: list[tuple[str, str, int, np.ndarray, str]]) -> bytes:
    """COPY BINARY rows of embeddings(content_hash, model, dims, vector, vec, created_at)."""
    out = bytearray()
    for content_hash, model, dims, vector, created in rows:
        h, m, c = content_hash.encode(), model.encode(), created.encode()
        blob = vector.astype("<f4").tobytes()
        vec = struct.pack("!hh", dims, 0) + vector.astype(">f4").tobytes()  # pgvector's vector_recv
        out += struct.pack("!h", 6)
        out += struct.pack("!i", len(h)) + h + struct.pack("!i", len(m)) + m + struct.pack("!ii", 4, dims)
        out += struct.pack("!i", len(blob)) + blob + struct.pack("!i", len(vec)) + vec
        out += struct.pack("!i", len(c)) + c
    return bytes(out)


def build_store(url: str, n: int, model: str, dims: int, seed: int, chunk: int, hnsw_m: int, hnsw_ef: int) -> dict:
    import psycopg

    from kenning.core.config_store import StoreSettings
    from kenning.core.text import normalize_content
    from kenning.store.factory import open_store
    from kenning.store.pg.db import PostgresDatabase
    from kenning.store.pg.search import rebuild_fts

    timings: dict[str, float] = {}
    began = time.perf_counter()
    open_store(StoreSettings(backend="postgres", url=url), Path("unused")).close()  # kenning's migrations
    timings["migrate_s"] = round(time.perf_counter() - began, 1)
    rng = np.random.default_rng(seed)
    pyrng = random.Random(seed)
    now = datetime.now(timezone.utc)
    seen: set[str] = set()
    loaded = 0
    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")  # no per-row FTS trigger: rebuilt below
        for start in range(0, n, chunk):
            texts = synthetic(min(chunk, n - start), seed + start)
            memory_rows, vector_rows = [], []
            for i, text in enumerate(texts):
                text = f"{text} (note {start + i})"  # unique: COPY has no dedup
                norm = normalize_content(text)
                if norm.content_hash in seen:
                    continue
                seen.add(norm.content_hash)
                created = (now - timedelta(days=pyrng.uniform(0, 365))).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
                memory_rows.append((uuid.uuid4().hex[:16], norm.storage, norm.normalized, norm.content_hash, "fact",
                                    round(pyrng.uniform(0.05, 0.95), 2), PROJECTS[(start + i) % len(PROJECTS)],
                                    created, created, model))
                vector_rows.append((norm.content_hash, created))
            vectors = rng.standard_normal((len(vector_rows), dims), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            with conn.transaction():
                with conn.cursor().copy("COPY memories (id, content, normalized_content, content_hash, type, importance,"
                                        " project, created_at, updated_at, embedding_model) FROM STDIN") as copy:
                    for row in memory_rows:
                        copy.write_row(row)
                with conn.cursor().copy("COPY embeddings (content_hash, model, dims, vector, vec, created_at)"
                                        " FROM STDIN (FORMAT BINARY)") as copy:
                    copy.write(PG_EPOCH)
                    copy.write(_binary_rows([(h, model, dims, v, c) for (h, c), v in zip(vector_rows, vectors)]))
                    copy.write(struct.pack("!h", -1))
            loaded += len(memory_rows)
            print(f"  loaded {loaded:,} memories ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
    timings["copy_s"] = round(time.perf_counter() - began, 1)
    began = time.perf_counter()
    db = PostgresDatabase(url)
    try:
        with db.with_write_tx() as tx:
            rebuild_fts(tx)
    finally:
        db.close()
    timings["fts_rebuild_s"] = round(time.perf_counter() - began, 1)
    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'")  # the graph in memory: a build past it crawls
        conn.execute("SET max_parallel_maintenance_workers = 1")
        conn.execute(f"CREATE INDEX IF NOT EXISTS idx_embeddings_hnsw_{dims} ON embeddings USING hnsw"
                     f" ((vec::vector({dims})) vector_cosine_ops) WITH (m = {hnsw_m}, ef_construction = {hnsw_ef})"
                     f" WHERE dims = {dims}")
    timings["hnsw_s"] = round(time.perf_counter() - began, 1)
    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    timings["analyze_s"] = round(time.perf_counter() - began, 1)
    return {"memories": loaded, "timings": timings, "total_s": round(sum(timings.values()), 1),
            "database_mb": round(size / 2**20), "vectors": f"synthetic random unit vectors ({dims} dims, model id {model})",
            "hnsw": {"m": hnsw_m, "ef_construction": hnsw_ef}}


# -- 2. daemons ------------------------------------------------------------------------------------
class Daemon:
    def __init__(self, name: str, url: str, root: Path) -> None:
        self.home = root / name
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "config.yaml").write_text(f"store:\n  backend: postgres\n  url: {url}\n")
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "KENNING_HOME": str(self.home), "KENNING_PORT": str(self.port)}
        self.log = open(self.home / "daemon.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "kenning", "serve"], env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait(self, timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"daemon exited: {(self.home / 'daemon.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/api/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise SystemExit("daemon did not start; see " + str(self.home / "daemon.log"))

    def rss_mb(self) -> dict:
        pids = [self.proc.pid] + _children(self.proc.pid)
        rss = {pid: _rss_kb(pid) for pid in pids}
        return {"process_mb": round(rss[self.proc.pid] / 1024), "with_children_mb": round(sum(rss.values()) / 1024)}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int(Path(entry, "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == pid:
                found.append(int(entry.name))
                found += _children(int(entry.name))
    return found


def idle_latency(daemon: Daemon, runs: int, seed: int) -> dict:
    qs = queries(runs, seed)
    recall, start = [], []
    with httpx.Client(base_url=daemon.base_url, timeout=60) as http:
        for i in range(5):  # warm: model, prepared statements, caches
            http.post("/api/memory/recall", json={"query": qs[i], "limit": 10}).raise_for_status()
        for i, q in enumerate(qs):
            began = time.perf_counter()
            http.post("/api/memory/recall", json={"query": q, "limit": 10,
                                                  "project": PROJECTS[i % len(PROJECTS)]}).raise_for_status()
            recall.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            http.post("/api/hooks/session-start", json={
                "session_key": f"idle-{i}-{uuid.uuid4().hex[:6]}", "harness": "bench",
                "project": PROJECTS[i % len(PROJECTS)], "cwd": f"/src/{PROJECTS[i % len(PROJECTS)]}",
                "context": f"branch: {q[:40]}"}).raise_for_status()
            start.append((time.perf_counter() - began) * 1000)
    return {"recall": summary(recall), "session_start": summary(start)}


# -- 3. agents -------------------------------------------------------------------------------------
class Agents:
    def __init__(self, daemons: list[Daemon], count: int, duration_s: float, think_ms: tuple[int, int], seed: int):
        self.daemons, self.count, self.duration_s, self.think_ms = daemons, count, duration_s, think_ms
        self.prompts = queries(400, seed + 11)
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.written: list[tuple[str, str, int]] = []  # (memory id, content, daemon index that stored it)
        self.sessions = 0

    def _post(self, clients: list[httpx.Client], rng: random.Random, hook: str, path: str, body: dict) -> dict | None:
        which = rng.randrange(len(clients))
        began = time.perf_counter()
        try:
            response = clients[which].post(path, json=body)
            ok = response.status_code < 300
            answer = response.json() if ok else None
            if not ok:
                self._error(f"{hook}: HTTP {response.status_code} {response.text[:200]}")
        except (httpx.HTTPError, ValueError) as exc:
            self._error(f"{hook}: {type(exc).__name__}: {exc}")
            return None
        with self.lock:
            self.latency.setdefault(hook, []).append((time.perf_counter() - began) * 1000)
        if isinstance(answer, dict):
            answer["_daemon"] = which
        return answer

    def _error(self, message: str) -> None:
        with self.lock:
            self.errors.append(message)

    def _think(self, rng: random.Random) -> None:
        time.sleep(rng.uniform(*self.think_ms) / 1000)

    def agent(self, index: int, until: float) -> None:
        rng = random.Random(index)
        # one connection per request, as a hook process makes (a reused keep-alive connection the
        # daemon closed after its idle timeout reads as a reset: 2 of 265 requests in one run)
        clients = [httpx.Client(base_url=d.base_url, timeout=30, headers={"Connection": "close"})
                   for d in self.daemons]
        project = PROJECTS[index % len(PROJECTS)]
        note = 0
        try:
            while time.monotonic() < until:
                key = f"agent-{index}-{uuid.uuid4().hex[:8]}"
                self._post(clients, rng, "session_start", "/api/hooks/session-start", {
                    "session_key": key, "harness": "bench", "project": project, "cwd": f"/src/{project}"})
                for turn in range(rng.randint(3, 8)):
                    if time.monotonic() >= until:
                        break
                    self._think(rng)
                    self._post(clients, rng, "user_prompt_submit", "/api/hooks/user-prompt-submit",
                               {"session_key": key, "prompt": rng.choice(self.prompts)})
                    for step in range(rng.randint(1, 3)):
                        self._think(rng)
                        self._post(clients, rng, "post_tool_use", "/api/hooks/post-tool-use", {
                            "session_key": key, "harness": "bench", "tool_name": "Bash", "cwd": f"/src/{project}",
                            "tool_input": {"command": f"pytest -q tests/test_{turn}_{step}.py"},
                            "tool_response": {"output": "3 passed", "exit_code": 0}, "tool_use_id": uuid.uuid4().hex})
                    if turn % 2 == 0:
                        note += 1
                        content = (f"Agent {index} learned in {project}: the {rng.choice(['cache', 'queue', 'index'])}"
                                   f" needs warm-up number {note} before the {rng.choice(['deploy', 'test', 'build'])}.")
                        answer = self._post(clients, rng, "remember", "/api/memory/remember",
                                            {"content": content, "project": project, "importance": 0.6})
                        if answer and isinstance(answer.get("id"), str):
                            with self.lock:
                                self.written.append((answer["id"], content, int(answer["_daemon"])))
                self._post(clients, rng, "session_end", "/api/hooks/session-end",
                           {"session_key": key, "transcript": None, "reason": "exit"})
                with self.lock:
                    self.sessions += 1
        finally:
            for client in clients:
                client.close()

    def run(self) -> dict:
        until = time.monotonic() + self.duration_s
        threads = [threading.Thread(target=self.agent, args=(i, until)) for i in range(self.count)]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        hooks = [v for k, v in self.latency.items() if k != "remember"]
        return {"agents": self.count, "duration_s": round(time.perf_counter() - began, 1),
                "think_ms": list(self.think_ms), "sessions": self.sessions,
                "requests": sum(len(v) for v in self.latency.values()) + len(self.errors),
                "hooks_all": summary([x for v in hooks for x in v]),
                "by_hook": {k: summary(v) for k, v in sorted(self.latency.items())},
                "errors": len(self.errors), "error_samples": self.errors[:10], "remembered": len(self.written)}

    def verify(self, url: str) -> dict:
        """Every remembered memory read back through the other daemon; its extract job leased once."""
        import psycopg

        lost, mismatched = [], []
        others = [httpx.Client(base_url=d.base_url, timeout=30) for d in self.daemons]
        try:
            for memory_id, content, stored_by in self.written:
                response = others[1 - stored_by].get(f"/api/memory/{memory_id}")
                if response.status_code != 200:
                    lost.append(memory_id)
                elif response.json().get("content") != content:
                    mismatched.append(memory_id)
        finally:
            for client in others:
                client.close()
        ids = [w[0] for w in self.written]
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT status, attempts, leased_by FROM memory_jobs WHERE job_type = 'extract'"
                                " AND memory_id = ANY(%s)", (ids,)).fetchall()
        by_status: dict[str, int] = {}
        for status, _, _ in rows:
            by_status[status] = by_status.get(status, 0) + 1
        done = [r for r in rows if r[0] == "completed"]
        daemons = {str(r[2]).split(":")[1] if r[2] and ":" in str(r[2]) else str(r[2]) for r in done}
        return {"lost_writes": len(lost), "content_mismatches": len(mismatched), "lost_samples": lost[:5],
                "extract_jobs": {"by_status": by_status, "completed_leased_more_than_once": sum(r[1] > 1 for r in done),
                                 "completed_by_processes": len(daemons)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--duration", type=float, default=300.0, help="seconds the agents run")
    parser.add_argument("--think-ms", default="500,2000", help="min,max pause between an agent's hooks")
    parser.add_argument("--idle-runs", type=int, default=200, help="recalls and session starts timed idle")
    parser.add_argument("--chunk", type=int, default=50_000, help="memories per COPY transaction")
    parser.add_argument("--hnsw-m", type=int, default=8)
    parser.add_argument("--hnsw-ef-construction", type=int, default=32)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL data folder and daemon homes")
    parser.add_argument("--build-only", action="store_true", help="build the store, keep it, stop (see --reuse)")
    parser.add_argument("--reuse", type=Path, help="the folder a --build-only run kept: measure on that store")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    think = tuple(int(x) for x in args.think_ms.split(","))

    from kenning.store.pg.server import EmbeddedPostgres

    root = args.reuse or Path(tempfile.mkdtemp(prefix="kenning-scale-pg-"))
    root.chmod(0o755)  # the server may run as its own OS user (store.pg.server)
    keep = args.keep or args.build_only or args.reuse is not None
    results: dict = {"bench": "scale_pg", "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                                      "platform": platform.platform()},
                     "note": "vectors are synthetic random unit vectors: latency figures only, not recall quality"}
    pg = EmbeddedPostgres(root / "pg").start()
    daemons: list[Daemon] = []
    try:
        if args.reuse:
            url = pg.url("kenning_scale")
            results["build"] = json.loads((root / "build.json").read_text())
        else:
            url = pg.create_database("kenning_scale")
            model, dims = embedding_identity()
            results["build"] = build_store(url, args.memories, model, dims, args.seed, args.chunk, args.hnsw_m,
                                           args.hnsw_ef_construction)
            results["build"]["load_average"] = os.getloadavg()
            (root / "build.json").write_text(json.dumps(results["build"], indent=2))
        print(json.dumps({"build": results["build"]}), file=sys.stderr)
        if args.build_only:
            return
        began = time.perf_counter()
        daemons = [Daemon("daemon-a", url, root), Daemon("daemon-b", url, root)]
        for daemon in daemons:
            daemon.wait()
        results["daemon_start_s"] = round(time.perf_counter() - began, 1)
        results["idle"] = idle_latency(daemons[0], args.idle_runs, args.seed)
        results["rss_idle"] = {d.home.name: d.rss_mb() for d in daemons}
        print(json.dumps({"idle": results["idle"]}), file=sys.stderr)
        agents = Agents(daemons, args.agents, args.duration, think, args.seed)
        results["agents"] = agents.run()
        print(json.dumps({"agents": results["agents"]}), file=sys.stderr)
        time.sleep(5)  # the last extract jobs
        results["verify"] = agents.verify(url)
        results["rss_after"] = {d.home.name: d.rss_mb() for d in daemons}
        results["load_average"] = os.getloadavg()
    finally:
        for daemon in daemons:
            daemon.stop()
        if keep:  # the server stops, its data stays
            subprocess.run([str(pg.bin / "pg_ctl"), "-D", str(pg.data_dir), "-w", "stop"], user=pg.user,
                           capture_output=True, timeout=120)
            print(f"kept: {root}", file=sys.stderr)
        else:
            pg.stop()
            shutil.rmtree(root, ignore_errors=True)
    text = json.dumps(results, indent=2)
    if args.out and not args.build_only:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
