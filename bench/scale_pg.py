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
5. **The predictor's background reads** (--train-runs N): daemon B's drift read and training run
   (`train_from_db`), each alone, with what PostgreSQL spent on them; --idle-while-training times
   the idle phase again while daemon B trains one run after another (the load those reads put on
   the foreground). Both need scored sessions in the store: reuse one an --agents run has used.
   A "before" tree: run this script with PYTHONPATH=<that tree>/src (the daemons inherit it).

The machine's load average is reported: figures taken on a shared machine are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from latency import queries, synthetic  # noqa: E402
from bench.harnesses.daemon import DaemonProcess, start_daemon  # noqa: E402  (the one daemon starter)

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


# -- 1. build ------------------------------------------------------------------------------------
def embedder():
    """The embedder the daemons use (their settings): its model id and width name the stored vectors."""
    from kenning.core.config import load_settings
    from kenning.providers.registry import build_embedding_provider

    return build_embedding_provider(load_settings(environ={}).embedding)


def topic_vectors(embed, dims: int) -> tuple[list[tuple[str, str]], np.ndarray]:
    """The synthetic sentences' topics (subject, object) and the model's embedding of each: a
    memory's vector is its topic's plus noise, so the store has the cluster structure real
    embeddings have (random unit vectors are HNSW's worst case) and a query the model embeds
    lands near the topics it names."""
    from latency import OBJECTS, SUBJECTS

    topics = [(s, o) for s in SUBJECTS for o in OBJECTS]
    vectors = np.asarray(embed.embed_many([f"{s.capitalize()} {o}" for s, o in topics]), dtype=np.float32)
    return topics, vectors.reshape(len(topics), dims)


def topic_of(text: str, topics: list[tuple[str, str]]) -> int:
    """The index of the (subject, first object) topic a synthetic sentence is about."""
    lowered = text.lower()
    subject = next(s for s, _ in topics if lowered.startswith(s.lower()))
    rest = lowered[len(subject):]
    first = min((rest.find(o.lower()), o) for o in {o for _, o in topics} if o.lower() in rest)[1]
    return topics.index((subject, first))


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


LOADED_TABLES = ("memories", "embeddings")


def _secondary_indexes(conn) -> list[tuple[str, str]]:
    """(name, definition) of the loaded tables' indexes no constraint owns: dropped for the load,
    created again after it (one sorted build each instead of 1M inserts into each)."""
    return conn.execute(
        "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i"
        " WHERE i.indrelid = ANY(%s::regclass[]) AND NOT EXISTS"
        " (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)", (list(LOADED_TABLES),)).fetchall()


def build_store(url: str, n: int, seed: int, chunk: int, hnsw_m: int, hnsw_ef: int, noise: float) -> dict:
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
    began = time.perf_counter()
    embed = embedder()
    model, dims = embed.model_id, int(embed.dims)
    topics, centres = topic_vectors(embed, dims)
    timings["topics_s"] = round(time.perf_counter() - began, 1)
    rng = np.random.default_rng(seed)
    pyrng = random.Random(seed)
    now = datetime.now(timezone.utc)
    seen: set[str] = set()
    loaded = 0
    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")  # no per-row FTS trigger: rebuilt below
        dropped = _secondary_indexes(conn)
        for name, _ in dropped:
            conn.execute(f"DROP INDEX {name}")
        for start in range(0, n, chunk):
            texts = synthetic(min(chunk, n - start), seed + start)
            memory_rows, vector_rows, topic_ids = [], [], []
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
                topic_ids.append(topic_of(text, topics))
            vectors = centres[topic_ids] + rng.standard_normal((len(vector_rows), dims), dtype=np.float32) * (
                noise / np.sqrt(dims))
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
        conn.execute("SET maintenance_work_mem = '1GB'")
        for _, definition in dropped:
            conn.execute(definition)
        timings["indexes_s"] = round(time.perf_counter() - began, 1)
    began = time.perf_counter()
    db = PostgresDatabase(url)
    try:
        with db.with_write_tx() as tx:
            tx.raw.execute("SET LOCAL maintenance_work_mem = '1GB'")
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
        hnsw = conn.execute(f"SELECT pg_relation_size('idx_embeddings_hnsw_{dims}')").fetchone()[0]
    timings["analyze_s"] = round(time.perf_counter() - began, 1)
    return {"memories": loaded, "timings": timings, "total_s": round(sum(timings.values()), 1),
            "database_mb": round(size / 2**20), "hnsw_index_mb": round(hnsw / 2**20),
            "vectors": f"synthetic: the model's embedding of the sentence's topic (subject, object; {len(topics)}"
                       f" topics) plus Gaussian noise of norm ~{noise}, normalised ({dims} dims, model id {model})",
            "hnsw": {"m": hnsw_m, "ef_construction": hnsw_ef}}


# -- 2. daemons ------------------------------------------------------------------------------------
class Daemon:
    """One `kenning serve` in front of the PostgreSQL store (`store: postgres` at `url`), its own home under
    `root`; started by bench.harnesses.daemon.start_daemon (a free port, the health wait, home/daemon.log)."""

    def __init__(self, name: str, url: str, root: Path) -> None:
        self.process: DaemonProcess = start_daemon(root / name, f"store:\n  backend: postgres\n  url: {url}\n",
                                                   log_name="daemon.log", timeout_s=300)
        self.home, self.port, self.base_url = self.process.home, self.process.port, self.process.base_url
        self.proc = self.process.proc

    def rss_mb(self) -> dict:
        pids = [self.proc.pid] + _children(self.proc.pid)
        rss = {pid: _rss_kb(pid) for pid in pids}
        return {"process_mb": round(rss[self.proc.pid] / 1024), "with_children_mb": round(sum(rss.values()) / 1024)}

    def trainings(self) -> int:
        """Training runs this daemon has logged (its predictor's, in its home)."""
        answer = httpx.get(f"{self.base_url}/api/predictor/training", params={"limit": 1}, timeout=30)
        return int(answer.json().get("total", 0)) if answer.status_code == 200 else 0

    def stop(self) -> None:
        self.process.stop()


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _role(pid: int) -> str:
    """A process by the module it runs (kenning.predictor.sidecar, kenning.predictor.fit, ...), else its name."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return "gone"
    return argv[argv.index("-m") + 1] if "-m" in argv[:-1] else Path(argv[0]).name


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


def _postgres_pids() -> list[int]:
    return [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()
            and Path(e, "comm").exists() and Path(e, "comm").read_text().strip() == "postgres"]


def _cpu_of(pids: list[int]) -> float:
    return sum(_cpu_by_pid(pids).values())


def _cpu_by_pid(pids: list[int]) -> dict[int, float]:
    out = {}
    for pid in pids:
        try:
            out[pid] = _cpu_s(pid)
        except (OSError, IndexError, ValueError):
            pass
    return out


def _postgres_cpu_since(before: dict[int, float]) -> float:
    """CPU seconds all PostgreSQL processes used since `before` (`_cpu_by_pid` of them then): a
    process that started since counts whole; one that exited since is lost (its last figure is
    unknown), so the result is a lower bound, never negative."""
    now = _cpu_by_pid(_postgres_pids())
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in now.items())


def settle(daemons: list[Daemon], limit_s: float, window_s: float = 5.0, quiet_share: float = 0.05) -> dict:
    """Wait until the daemons (with their children: the predictor sidecar) and PostgreSQL are idle — a window
    in which they used less than `quiet_share` of one core — so that "idle" times an idle server, not the
    work a daemon starts with (an extraction backlog, a predictor fit that is due, the health check). At most
    `limit_s`; reports the wait and whether it settled."""
    began = time.monotonic()
    windows = 0
    while True:
        pids = [p for d in daemons for p in (d.proc.pid, *_children(d.proc.pid))] + _postgres_pids()
        before = _cpu_by_pid(pids)
        time.sleep(window_s)
        after = _cpu_by_pid([*pids, *(p for d in daemons for p in _children(d.proc.pid)), *_postgres_pids()])
        used = sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())  # a process that started counts whole
        windows += 1
        if used < quiet_share * window_s:
            return {"settled": True, "waited_s": round(time.monotonic() - began, 1), "windows": windows}
        if time.monotonic() - began > limit_s:
            return {"settled": False, "waited_s": round(time.monotonic() - began, 1), "windows": windows,
                    "last_window_cpu_s": round(used, 2)}


class Statements:
    """pg_stat_statements (--statements): which statements each idle phase ran, with their calls and
    server time per request, so that a request's database time is seen statement by statement. Both
    daemons' background work runs meanwhile: its statements show with calls unrelated to `runs`."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

    def reset(self) -> None:
        self.conn.execute("SELECT pg_stat_statements_reset()")

    def top(self, runs: int, n: int = 15) -> list[dict]:
        rows = self.conn.execute(
            "SELECT query, calls, total_exec_time, mean_exec_time, rows FROM pg_stat_statements"
            " WHERE query NOT LIKE '%%pg_stat_statements%%' ORDER BY total_exec_time DESC LIMIT %s", (n,)).fetchall()
        return [{"query": " ".join(q.split())[:240], "calls": calls, "calls_per_request": round(calls / runs, 2),
                 "mean_ms": round(mean, 2), "ms_per_request": round(total / runs, 2), "rows": rows_}
                for q, calls, total, mean, rows_ in rows]


def idle_latency(daemon: Daemon, runs: int, seed: int, statements: Statements | None = None) -> dict:
    """Recall (limit 10, a project) and session start through daemon A, one after the other: wall
    times, and CPU milliseconds per request of the daemon process and of all PostgreSQL processes
    (the machine's load stretches the first, hardly the second); with `statements`, the statements
    each phase ran (pg_stat_statements)."""
    qs = queries(runs, seed)
    out: dict = {}
    with httpx.Client(base_url=daemon.base_url, timeout=60) as http:
        for i in range(5):  # warm: model, prepared statements, caches
            http.post("/api/memory/recall", json={"query": qs[i], "limit": 10}).raise_for_status()
        requests = {
            "recall": lambda i, q: http.post("/api/memory/recall", json={
                "query": q, "limit": 10, "project": PROJECTS[i % len(PROJECTS)]}),
            "session_start": lambda i, q: http.post("/api/hooks/session-start", json={
                "session_key": f"idle-{i}-{uuid.uuid4().hex[:6]}", "harness": "bench",
                "project": PROJECTS[i % len(PROJECTS)], "cwd": f"/src/{PROJECTS[i % len(PROJECTS)]}",
                "context": f"branch: {q[:40]}"}),
        }
        for name, send in requests.items():
            times = []
            if statements:
                statements.reset()
            daemon_cpu, pg_cpu = _cpu_of([daemon.proc.pid]), _cpu_by_pid(_postgres_pids())
            for i, q in enumerate(qs):
                began = time.perf_counter()
                send(i, q).raise_for_status()
                times.append((time.perf_counter() - began) * 1000)
            out[name] = {**summary(times),
                         "slowest": [[i, round(ms, 1)] for i, ms in sorted(enumerate(times), key=lambda t: -t[1])[:20]],
                         "daemon_cpu_ms_per_request": round((_cpu_of([daemon.proc.pid]) - daemon_cpu) * 1000 / runs, 1),
                         "postgres_cpu_ms_per_request": round(_postgres_cpu_since(pg_cpu) * 1000 / runs, 1)}
            if statements:
                out[name]["statements"] = statements.top(runs)
    return out


def training_reads(daemon: Daemon, runs: int, statements: Statements | None = None) -> dict:
    """--train-runs: the predictor's background reads at this size, each run alone, on daemon B: the
    drift read an interval training does first (`GET /api/predictor/drift`, the same store read), then
    a training run (`POST /api/predictor/train`: the sidecar's `train_from_db` reads every session it
    trains on). Wall time of each, CPU seconds of all PostgreSQL processes per run (the machine's load
    stretches the first, hardly the second), what the sidecar says it read (`training_reads`; an
    older kenning's sidecar does not say), and with --statements the statements each run ran."""
    out: list[dict] = []
    with httpx.Client(base_url=daemon.base_url, timeout=900) as http:
        for _ in range(runs):
            if statements:
                statements.reset()
            pg_cpu = _cpu_by_pid(_postgres_pids())
            began = time.perf_counter()
            http.get("/api/predictor/drift").raise_for_status()
            drift_ms = (time.perf_counter() - began) * 1000
            began = time.perf_counter()
            with PeakRss(daemon) as peak:
                answer = http.post("/api/predictor/train")
            answer.raise_for_status()
            result = answer.json()
            run = {"drift_ms": round(drift_ms, 1), "train_ms": round((time.perf_counter() - began) * 1000, 1),
                   "rss_peak_during_fit": {**peak.peak, "by_process_mb": peak.parts}, "rss_after_fit": daemon.rss_mb(),
                   "postgres_cpu_s": round(_postgres_cpu_since(pg_cpu), 2), "samples_used": result.get("samples_used"),
                   "swapped": result.get("swapped"), "error": result.get("error"),
                   "training_reads": result.get("training_reads")}
            if statements:
                run["statements"] = statements.top(1, n=12)
            out.append(run)
            print(json.dumps({"training_run": {k: v for k, v in run.items() if k != "statements"}}), file=sys.stderr)
    return {"runs": out}


class PeakRss:
    """The daemon's largest RSS (process, and with all its descendants: the sidecar, its guard and a fit
    process while one runs) sampled every 0.2 s while the block runs."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon, self.stop, self.peak = daemon, threading.Event(), {"process_mb": 0, "with_children_mb": 0}
        self.parts: list[tuple[str, int]] = []
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.stop.is_set():
            parts = {pid: _rss_kb(pid) for pid in [self.daemon.proc.pid] + _children(self.daemon.proc.pid)}
            total = round(sum(parts.values()) / 1024)
            if total > self.peak["with_children_mb"]:  # what each process held at the peak
                self.parts = sorted(((_role(pid), round(kb / 1024)) for pid, kb in parts.items()), key=lambda p: -p[1])
            self.peak = {"process_mb": max(self.peak["process_mb"], round(parts[self.daemon.proc.pid] / 1024)),
                         "with_children_mb": max(self.peak["with_children_mb"], total)}
            self.stop.wait(0.2)

    def __enter__(self) -> PeakRss:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


class Watch:
    """Each daemon's RSS peak (PeakRss) and the training runs it logged while the block runs."""

    def __init__(self, daemons: list[Daemon]) -> None:
        self.daemons = daemons
        self.peaks = [PeakRss(d) for d in daemons]
        self.trained: list[int] = []

    def __enter__(self) -> Watch:
        self.trained = [d.trainings() for d in self.daemons]
        for peak in self.peaks:
            peak.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        for peak in self.peaks:
            peak.__exit__()
        self.trained = [d.trainings() - before for d, before in zip(self.daemons, self.trained)]

    def report(self) -> dict:
        return {d.home.name: {**p.peak, "by_process_mb": p.parts, "trainings": t}
                for d, p, t in zip(self.daemons, self.peaks, self.trained)}


class TrainingLoop:
    """--idle-while-training: daemon B trains (`POST /api/predictor/train`), one run after the other,
    while the idle phase times daemon A: the background load the predictor puts on the one database."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon, self.stop, self.runs, self.errors = daemon, threading.Event(), 0, 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        with httpx.Client(base_url=self.daemon.base_url, timeout=900) as http:
            while not self.stop.is_set():
                try:
                    http.get("/api/predictor/drift").raise_for_status()
                    answer = http.post("/api/predictor/train")
                    answer.raise_for_status()
                    failed = answer.json().get("error")  # e.g. one the daemon started itself still runs
                except (httpx.HTTPError, ValueError) as exc:
                    failed = str(exc)
                if failed:
                    self.errors += 1
                    time.sleep(1)
                else:
                    self.runs += 1

    def __enter__(self) -> TrainingLoop:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=900)


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used: for a PostgreSQL backend, what its queries
    cost the server whatever the machine's load (the load stretches wall times, not these)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


PREWARMED = ("idx_embeddings_hnsw_%", "memories_fts_terms_pkey", "memories_fts_df_pkey", "idx_memories_hash_project",
             "memories_pkey", "idx_memories_effective_key", "idx_memories_standing_order")


def prewarm(url: str) -> dict:
    """Load the indexes recall and session start read into shared_buffers (pg_prewarm), as a team
    server that has run a while holds them (docs/teams.md: autoprewarm keeps them across restarts)."""
    import psycopg

    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        rows = conn.execute("SELECT relname, pg_prewarm(oid::regclass) FROM pg_class WHERE relkind = 'i'"
                            " AND relname LIKE ANY(%s)", (list(PREWARMED),)).fetchall()
    return {"blocks": dict(rows), "s": round(time.perf_counter() - began, 1)}


def in_database(url: str, runs: int, seed: int) -> dict:
    """Recall's two candidate queries timed in this process, without HTTP or the daemon: the vector
    leg (`store.search.vector_search`) and the BM25 leg (`store.search.bm25_search`), each with a
    project filter as recall's (1 memory in 20 passes), limit 100 — wall time, and the server
    backend's CPU time per query (/proc: the machine's load does not inflate it); then the same
    statements under EXPLAIN ANALYZE — the server's execution time, which the machine's load
    distorts less — and one plan of each, with its buffers."""
    from kenning.core.types import MemoryFilter
    from kenning.store.memories import filter_sql
    from kenning.store.pg.db import PostgresDatabase
    from kenning.store.search import bm25_search, fts_tokens, vector_search

    try:
        from kenning.store.pg.search import (POSTINGS_WINDOW, _set_ef_search, bm25_search_sql, vector_literal,
                                             vector_search_sql)
    except ImportError:  # an older kenning (a "before" run): wall times only
        POSTINGS_WINDOW = None

    embed = embedder()
    qs = queries(runs, seed + 3)
    vectors = embed.embed_many(qs)
    dims = int(embed.dims)
    db = PostgresDatabase(url, read_only=True)
    wall: dict[str, list[float]] = {"vector": [], "bm25": []}
    server: dict[str, list[float]] = {"vector": [], "bm25": []}
    hits: dict[str, list[int]] = {"vector": [], "bm25": []}
    cpu: dict[str, float] = {}
    plans: dict[str, list[str]] = {}
    try:
        conn = db.reader()
        for i, v in enumerate(embed.embed_many(queries(20, seed + 5))):  # warm: a server runs warm
            vector_search(conn, v, embed.model_id, MemoryFilter(project=PROJECTS[i % len(PROJECTS)]), 100)
        legs = {"vector": lambda q, v, f: vector_search(conn, v, embed.model_id, f, 100),
                "bm25": lambda q, v, f: bm25_search(conn, q, f, 100)}
        for leg, run in legs.items():  # one leg at a time: the server's CPU seconds are per leg
            cpu_before = _cpu_s(conn.raw.info.backend_pid)
            for i, (q, v) in enumerate(zip(qs, vectors)):
                filters = MemoryFilter(project=PROJECTS[i % len(PROJECTS)])
                began = time.perf_counter()
                hits[leg].append(len(run(q, v, filters)))
                wall[leg].append((time.perf_counter() - began) * 1000)
            cpu[leg] = round((_cpu_s(conn.raw.info.backend_pid) - cpu_before) * 1000 / len(qs), 1)
        for i, (q, v) in enumerate(zip(qs, vectors) if POSTINGS_WINDOW else []):
            where, params = filter_sql(MemoryFilter(project=PROJECTS[i % len(PROJECTS)]))
            literal = vector_literal(v)
            _set_ef_search(conn, 400)
            statements = {
                "vector": (vector_search_sql(dims, where), (literal, embed.model_id, *params, literal, 100)),
                "bm25": (bm25_search_sql(where), (POSTINGS_WINDOW, " ".join(fts_tokens(q)), POSTINGS_WINDOW, 3200,
                                                  *params, 100)),
            }
            for leg, (sql, args) in statements.items():
                if i == 0:
                    plans[leg] = [r[0] for r in conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, args).fetchall()]
                plan = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, args).fetchone()[0]
                server[leg].append(float(plan[0]["Execution Time"]))
    finally:
        db.close()
    out: dict = {"queries": runs, "filter": "project (1 memory in 20 passes)", "limit": 100}
    for leg in ("vector", "bm25"):
        out[leg] = {"wall_ms": summary(wall[leg]), "server_ms": summary(server[leg]), "hits_min": min(hits[leg]),
                    "server_cpu_ms_per_query": cpu[leg], "plan_of": qs[0], "plan": plans.get(leg)}
    return out


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
        # one connection per read: a kept-alive one the daemon closed reads as a reset (it ended a run)
        others = [httpx.Client(base_url=d.base_url, timeout=30, headers={"Connection": "close"},
                               transport=httpx.HTTPTransport(retries=2)) for d in self.daemons]
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
    parser.add_argument("--after-s", type=float, default=90.0,
                        help="seconds the daemons' RSS is watched after the agents stop (the training runs"
                        " that waited for the burst to end)")
    parser.add_argument("--idle-runs", type=int, default=200, help="recalls and session starts timed idle")
    parser.add_argument("--chunk", type=int, default=50_000, help="memories per COPY transaction")
    parser.add_argument("--hnsw-m", type=int, default=8)
    parser.add_argument("--hnsw-ef-construction", type=int, default=32)
    parser.add_argument("--noise", type=float, default=0.6,
                        help="norm of the Gaussian noise added to a memory's topic vector (cos to its topic ~0.85)")
    parser.add_argument("--shared-buffers", default="2GB", help="the server's shared_buffers (docs/teams.md: at"
                        " least the HNSW index, ~1.6 GB at 1M memories with m 8)")
    parser.add_argument("--effective-cache-size", default="6GB")
    parser.add_argument("--no-prewarm", dest="prewarm", action="store_false",
                        help="measure with cold buffers (no pg_prewarm of the indexes first)")
    parser.add_argument("--settle-s", type=float, default=300.0,
                        help="before the idle phase, wait up to this long for the daemons, their sidecars and"
                        " PostgreSQL to go idle (the work a daemon starts with); 0: do not wait")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL data folder and daemon homes")
    parser.add_argument("--build-only", action="store_true", help="build the store, keep it, stop (see --reuse)")
    parser.add_argument("--root", type=Path, help="build the store in this (new) folder instead of a temporary one")
    parser.add_argument("--reuse", type=Path, help="the folder a --build-only run kept: measure on that store")
    parser.add_argument("--in-database-only", action="store_true",
                        help="time the recall queries in-process (and EXPLAIN ANALYZE them), then stop")
    parser.add_argument("--no-in-database", dest="in_database", action="store_false",
                        help="skip the in-process timing of the recall queries (go to the daemons)")
    parser.add_argument("--statements", action="store_true",
                        help="load pg_stat_statements and report each idle phase's statements (calls, ms per request)")
    parser.add_argument("--train-runs", type=int, default=0,
                        help="after the idle phase, this many predictor training runs on daemon B, each alone"
                             " (drift read + train_from_db): their reads (needs scored sessions: an --agents run)")
    parser.add_argument("--idle-while-training", action="store_true",
                        help="time the idle phase a second time while daemon B trains one run after another")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    think = tuple(int(x) for x in args.think_ms.split(","))

    from kenning.store.pg.server import EmbeddedPostgres

    root = args.reuse or args.root or Path(tempfile.mkdtemp(prefix="kenning-scale-pg-"))
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)  # the server may run as its own OS user (store.pg.server)
    keep = args.keep or args.build_only or args.reuse is not None
    results: dict = {"bench": "scale_pg", "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                                      "platform": platform.platform()},
                     "note": "vectors are synthetic (topic embedding + noise, see build.vectors): latency figures"
                             " only, not recall quality"}
    settings = {"shared_buffers": args.shared_buffers, "effective_cache_size": args.effective_cache_size,
                "max_wal_size": "4GB"}
    if args.statements:
        settings["shared_preload_libraries"] = "pg_stat_statements"
    results["postgres_settings"] = settings
    try:
        pg = EmbeddedPostgres(root / "pg", settings=settings).start()
    except TypeError:  # an older kenning (a "before" run): the data folder's postgresql.auto.conf decides
        results["postgres_settings"] = "the data folder's (an older EmbeddedPostgres takes none)"
        pg = EmbeddedPostgres(root / "pg").start()
    daemons: list[Daemon] = []
    try:
        if args.reuse:
            url = pg.url("kenning_scale")
            results["build"] = json.loads((root / "build.json").read_text())
            began = time.perf_counter()  # migrations newer than the stored build (a daemon would run them)
            from kenning.core.config_store import StoreSettings
            from kenning.store.factory import open_store

            open_store(StoreSettings(backend="postgres", url=url), Path("unused")).close()
            results["migrate_on_reuse_s"] = round(time.perf_counter() - began, 1)
        else:
            url = pg.create_database("kenning_scale")
            results["build"] = build_store(url, args.memories, args.seed, args.chunk, args.hnsw_m,
                                           args.hnsw_ef_construction, args.noise)
            results["build"]["load_average"] = os.getloadavg()
            (root / "build.json").write_text(json.dumps(results["build"], indent=2))
        print(json.dumps({"build": results["build"]}), file=sys.stderr)
        if args.build_only:
            return
        results["prewarm"] = prewarm(url) if args.prewarm else None
        if args.in_database:
            results["in_database"] = in_database(url, args.idle_runs, args.seed)
            results["in_database"]["load_average"] = os.getloadavg()
            print(json.dumps({"in_database": {k: {"wall_ms": v["wall_ms"], "server_ms": v["server_ms"]}
                                              for k, v in results["in_database"].items() if isinstance(v, dict)
                                              and "wall_ms" in v}}), file=sys.stderr)
        if args.in_database_only:
            if args.out:
                args.out.write_text(json.dumps(results, indent=2) + "\n")
            return
        began = time.perf_counter()
        for name in ("daemon-a", "daemon-b"):  # one after the other (each waits for its health)
            daemons.append(Daemon(name, url, root))
        results["daemon_start_s"] = round(time.perf_counter() - began, 1)
        if args.settle_s > 0:
            results["settle"] = settle(daemons, args.settle_s)
            print(json.dumps({"settle": results["settle"]}), file=sys.stderr)
        results["idle"] = idle_latency(daemons[0], args.idle_runs, args.seed,
                                       Statements(url) if args.statements else None)
        results["rss_idle"] = {d.home.name: d.rss_mb() for d in daemons}
        print(json.dumps({"idle": results["idle"]}), file=sys.stderr)
        results["idle"]["load_average"] = os.getloadavg()
        if args.idle_while_training:
            with TrainingLoop(daemons[1]) as loop:
                results["idle_while_training"] = idle_latency(daemons[0], args.idle_runs, args.seed + 1,
                                                              Statements(url) if args.statements else None)
            results["idle_while_training"].update(training_runs=loop.runs, training_errors=loop.errors,
                                                  load_average=os.getloadavg())
            print(json.dumps({"idle_while_training": results["idle_while_training"]}), file=sys.stderr)
        if args.train_runs:
            results["training_reads"] = training_reads(daemons[1], args.train_runs,
                                                       Statements(url) if args.statements else None)
            results["training_reads"]["load_average"] = os.getloadavg()
        if args.agents > 0:
            agents = Agents(daemons, args.agents, args.duration, think, args.seed)
            with Watch(daemons) as during:  # the runs the agents' session ends make due wait for the burst's end
                results["agents"] = agents.run()
            results["rss_peak_during_agents"] = during.report()
            print(json.dumps({"agents": results["agents"]}), file=sys.stderr)
            with Watch(daemons) as after:  # ... and run now
                time.sleep(5)  # the last extract jobs
                results["verify"] = agents.verify(url)
                time.sleep(max(0.0, args.after_s - 5))
            results["rss_peak_after_agents"] = {name: {**v, "window_s": args.after_s} for name, v in after.report().items()}
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
