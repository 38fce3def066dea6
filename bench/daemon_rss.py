"""Resident memory of a real daemon and its children, idle and after N recalls (used by latency.py).

A `python -m kenning serve` on a temp home is filled over HTTP with the synthetic memories of
latency.py, left idle, and measured from /proc (VmRSS of the daemon and of every descendant:
the predictor sidecar, …); then N recalls (hybrid, unseen queries) run over HTTP and it is
measured again. The top imported libraries of the daemon are listed from its /proc maps
(resident KiB per mapped file), which says where the memory goes. Recall cost is reported as HTTP
p50/p95 and as the daemon's CPU milliseconds per recall (from /proc; the steady figure under load).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.harnesses.daemon import start_daemon  # noqa: E402  (the one daemon starter of benches and tests)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found + [g for c in found for g in _children(c)]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of the process (all its threads) so far: steadier than wall time
    when other jobs share the cores."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cmd(pid: int) -> str:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return " ".join(a.decode(errors="replace") for a in argv[1:4] if a)


def _by_library(pid: int, top: int = 8) -> dict[str, float]:
    """Resident MB per mapped file (anonymous memory as '[anon]'), largest first."""
    sizes: Counter[str] = Counter()
    current = "[anon]"
    try:
        text = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return {}
    for line in text.splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and ":" in head[3]:
            path = head[5] if len(head) > 5 else "[anon]"
            current = "[anon]" if path.startswith("[") and path not in ("[heap]",) else path
            for marker in ("site-packages/", "lib/python3"):
                if marker in current:
                    current = current.split(marker, 1)[1].split("/", 1)[0]
                    break
        elif head and head[0] == "Rss:":
            sizes[current] += int(head[1])
    return {name: round(kb / 1024, 1) for name, kb in sizes.most_common(top)}


def snapshot(pid: int) -> dict:
    procs = [{"pid": p, "cmd": _cmd(p), "rss_mb": _rss_mb(p)} for p in [pid, *_children(pid)]]
    libraries = _by_library(pid, top=1000)
    return {"processes": procs, "total_mb": round(sum(p["rss_mb"] for p in procs), 1),
            "daemon_by_library_mb": dict(list(libraries.items())[:8]), "daemon_mapped": sorted(libraries)}


def parse_variant(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """`LABEL[=SRC][,KEY=VALUE...]`: a daemon importing kenning from SRC (a `src` folder; default: this
    process's), with embedding settings KEY=VALUE in its config.yaml (e.g. runtime=torch)."""
    head, *settings = spec.split(",")
    label, _, src = head.partition("=")
    return label, src or None, dict(item.split("=", 1) for item in settings)


def measure(size: int, recalls: int, texts: list[str], prompts: list[str], idle_s: float = 20.0,
            src: str | None = None, embedding: dict[str, str] | None = None) -> dict:
    home = Path(tempfile.mkdtemp(prefix="kenning-bench-rss-"))
    config = ("embedding:\n" + "".join(f"  {k}: {v}\n" for k, v in embedding.items())) if embedding else None
    daemon = start_daemon(home, config, log_name="daemon.log", timeout_s=300, src=src)
    proc = daemon.proc
    try:
        with daemon.client(timeout=600) as http:
            fresh = snapshot(proc.pid)
            for i in range(0, size, 500):
                http.post("/api/memory/batch", json={"memories": [
                    {"content": t, "project": "bench"} for t in texts[i:min(size, i + 500)]]}).raise_for_status()
            time.sleep(idle_s)
            idle = snapshot(proc.pid)
            began, cpu_before = time.perf_counter(), _cpu_s(proc.pid)
            took = []
            for i in range(recalls):
                t0 = time.perf_counter()
                http.post("/api/memory/recall", json={"query": prompts[i % len(prompts)], "limit": 10}).raise_for_status()
                took.append(1000 * (time.perf_counter() - t0))
            elapsed, cpu_used = time.perf_counter() - began, _cpu_s(proc.pid) - cpu_before
            after = snapshot(proc.pid)
            model = http.get("/api/health").json().get("embedding_model")
    finally:
        daemon.stop()
    took.sort()
    return {"size": size, "recalls": recalls, "recall_s": round(elapsed, 1), "embedding_model": model,
            "src": src, "embedding": embedding or {},
            "recall_http_ms": {"p50": round(took[len(took) // 2], 1), "p95": round(took[int(0.95 * (len(took) - 1))], 1)},
            "daemon_cpu_ms_per_recall": round(1000 * cpu_used / max(recalls, 1), 2),
            "torch_mapped": _maps_torch(proc.pid, after), "started_empty": fresh, "idle": idle, "after_recalls": after}


def _maps_torch(pid: int, after: dict) -> bool:
    """Whether the daemon had PyTorch loaded (its libraries among the mapped files at the last snapshot)."""
    return any(name == "torch" for name in after.get("daemon_mapped", []))
