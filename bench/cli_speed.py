"""How long the everyday commands take with the daemon up (issue 35): median wall time of `kenning
remember | recall | list | show | stats | doctor | review`, each a fresh process as a user runs it, next to
the floor measured in the same run (a bare `python -c pass`, and `import typer` — the CLI framework every
command loads). With `--before OLD/src`, an older tree runs in the same rounds, command by command
interleaved with this one, each against its own daemon: both see the same load, and `this_over_before`
gives the ratios.

A daemon of the code under test is started on a fresh KENNING_HOME and seeded with memories over HTTP;
then the commands run round-robin (`--runs` rounds), so a machine busy with other work slows them all
alike. Compare two trees by running this twice on the same machine, the old one with
PYTHONPATH=<its src> (the subprocesses inherit it):

    git worktree add /tmp/before d1e8640
    python bench/cli_speed.py --before /tmp/before/src --out bench/out/cli_speed.json

Prints JSON: {"this": {"commands": {name: {"median_s", "min_s", "median_cpu_s", "runs"}}, "floor": {...},
"ratios": {name: median wall / python floor}, "where": the kenning package used}, "before": the same,
"this_over_before": {name: {"wall", "cpu"}}, "load_average"}. On a loaded machine
the wall time is mostly waiting for a core; the CPU seconds (user + system of the command's process) say
what the command itself costs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

SEED = [f"Deploys of service {i} go through helm upgrade with --atomic, never kubectl apply" for i in range(20)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):  # doctor exits 2 when unhealthy: still a measured answer
        raise SystemExit(f"{argv[3:]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds of every command (the median is reported)")
    parser.add_argument("--before", type=Path, help="also run another tree's src/ (PYTHONPATH) in the same rounds, "
                                                    "interleaved command by command, so both see the same load")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()

    trees = {"this": None, **({"before": args.before} if args.before else {})}
    kenning = [sys.executable, "-m", "kenning"]
    envs: dict[str, dict[str, str]] = {}
    commands: dict[str, dict[str, object]] = {}
    try:
        for tree, src in trees.items():
            home = Path(tempfile.mkdtemp(prefix=f"kenning-cli-speed-{tree}-"))
            port = free_port()
            env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(port), "COLUMNS": "120"}
            env.pop("KENNING_URL", None)
            if src is not None:
                env["PYTHONPATH"] = str(src)
            envs[tree] = env
            subprocess.run([*kenning, "daemon", "start"], env=env, capture_output=True, text=True, timeout=600,
                           check=True)
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
                stored = http.post("/api/memory/batch", json={"memories": [
                    {"content": text, "project": "bench", "type": "decision"} for text in SEED]}).json()["results"]
            commands[tree] = _commands(kenning, stored[0]["id"])
        floors = {"python -c pass": lambda i: [sys.executable, "-c", "pass"],
                  "python -c 'import typer'": lambda i: [sys.executable, "-c", "import typer"]}
        for tree in trees:  # one warm-up each (disk cache, the daemon's first call)
            for argv in {**commands[tree], **floors}.values():
                timed(argv(-1), envs[tree])
        times = {tree: {name: [] for name in [*commands[tree], *floors]} for tree in trees}
        cpu = {tree: {name: [] for name in [*commands[tree], *floors]} for tree in trees}
        for i in range(args.runs):
            for name in [*commands["this"], *floors]:
                for tree in trees:
                    argv = {**commands[tree], **floors}[name]
                    wall, used = timed(argv(i), envs[tree])
                    times[tree][name].append(wall)
                    cpu[tree][name].append(used)
    finally:
        for env in envs.values():
            subprocess.run([*kenning, "daemon", "stop"], env=env, capture_output=True, timeout=120)

    def summary(tree: str, name: str) -> dict[str, object]:
        return {"median_s": round(statistics.median(times[tree][name]), 3), "min_s": round(min(times[tree][name]), 3),
                "median_cpu_s": round(statistics.median(cpu[tree][name]), 3), "runs": len(times[tree][name])}

    out: dict[str, object] = {"runs": args.runs, "load_average": os.getloadavg()}
    for tree in trees:
        floor = statistics.median(times[tree]["python -c pass"])
        where = subprocess.run([sys.executable, "-c", "import kenning; print(kenning.__file__)"], env=envs[tree],
                               capture_output=True, text=True, check=True).stdout.strip()
        out[tree] = {
            "where": where,
            "commands": {name: summary(tree, name) for name in commands[tree]},
            "floor": {name: summary(tree, name) for name in floors},
            "ratios": {name: round(statistics.median(times[tree][name]) / floor, 1) for name in commands[tree]},
        }
    if args.before:
        out["this_over_before"] = {
            name: {"wall": round(statistics.median(times["this"][name]) / statistics.median(times["before"][name]), 2),
                   "cpu": round(statistics.median(cpu["this"][name]) / statistics.median(cpu["before"][name]), 2)}
            for name in commands["this"]}
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


def _commands(kenning: list[str], memory_id: str) -> dict[str, object]:
    return {
        "remember": lambda i: [*kenning, "remember", f"bench note {i}: the staging cluster is eu-west-1", "-p", "bench"],
        "recall": lambda i: [*kenning, "recall", "how do we deploy with helm?", "-p", "bench"],
        "list": lambda i: [*kenning, "list", "-p", "bench"],
        "show": lambda i: [*kenning, "show", memory_id],
        "stats": lambda i: [*kenning, "stats"],
        "doctor": lambda i: [*kenning, "doctor"],
        "review": lambda i: [*kenning, "review"],
    }


if __name__ == "__main__":
    main()
