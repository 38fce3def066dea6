"""A wheel built from this tree works by itself: installed into a fresh virtual environment (no
`make`, no editable install, no model file), `kenning daemon start` builds the embedding model at
first need, then the daemon remembers, recalls and serves the dashboard; a model file cut short
is rebuilt on the next start instead of being loaded.

The environment is made with uv (the `uv` wheel, a test dependency) because it installs the
~200 MB PyTorch wheel from its cache in seconds where pip unpacks it for a minute; the wheel and
its dependencies are the same either way. pip's `find-links` (here /opt/wheels, which holds the
CPU build of torch) is passed on to uv, which does not read pip's configuration.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from bench.harnesses.daemon import free_port

REPO = Path(__file__).resolve().parents[2]
TORCH = "torch==2.13.0"


def _uv() -> str:
    try:
        from uv import find_uv_bin
    except ImportError:
        pytest.fail("uv is not installed: it is in the [test] extra (`make setup`)")
    return find_uv_bin()


def _pip_find_links() -> list[str]:
    """pip's find-links (its environment variable, else its configuration), for uv to see the same wheels."""
    configured = os.environ.get("PIP_FIND_LINKS") or subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True, text=True).stdout
    return configured.split()


def _source_copy(dest: Path) -> Path:
    """The tree as git sees it (tracked and untracked, not ignored): no stale build/ or .venv."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = REPO / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def _run(cmd: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{cmd} -> {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def test_a_wheel_installs_into_a_fresh_venv_and_runs_the_daemon(tmp_path):
    uv = _uv()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "VIRTUAL_ENV", "PYTHON"))}
    find_links = _pip_find_links()
    links = [arg for f in find_links for arg in ("--find-links", f)]

    source = _source_copy(tmp_path / "src")
    _run([uv, "build", "--wheel", "--out-dir", str(tmp_path / "dist"), str(source)], env)
    wheels = list((tmp_path / "dist").glob("kenning-*.whl"))
    assert len(wheels) == 1, wheels

    venv = tmp_path / "venv"
    _run([uv, "venv", "--python", sys.executable, str(venv)], env)
    _run([uv, "pip", "install", "--python", str(venv / "bin" / "python"), *links, TORCH, str(wheels[0])], env)
    kenning = str(venv / "bin" / "kenning")
    model = venv / "share" / "kenning" / "all-MiniLM-L6-v2-int8.onnx"
    assert not model.exists()  # the wheel ships no model: it is built at first need
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import kenning; print(kenning.__file__)"],
                          capture_output=True, text=True, env=env, check=True).stdout
    assert str(venv) in site and str(REPO) not in site  # the installed copy, not this checkout

    home, port = tmp_path / "home", free_port()
    env |= {"HOME": str(tmp_path), "KENNING_HOME": str(home), "KENNING_PORT": str(port)}
    started = _run([kenning, "daemon", "start"], env)
    building = [line for line in started.stderr.splitlines() if line.startswith("kenning: ")]
    assert len(building) == 1 and "building the embedding model" in building[0], started.stderr
    assert str(model) in building[0]  # one line, saying where the model is kept
    assert model.is_file() and model.with_name(model.name + ".sha256").is_file()
    try:
        assert "kenning running" in started.stdout, started.stdout
        assert "no agent found" in started.stdout  # a first start says what to connect (HOME has no agent)
        stored = _run([kenning, "remember", "We deploy billing with helm, never kubectl apply",
                       "-p", "billing", "-t", "decision", "--json"], env)
        memory_id = json.loads(stored.stdout)["id"]
        recalled = _run([kenning, "recall", "how do we deploy billing?", "-p", "billing"], env)
        assert memory_id in recalled.stdout and "strong" in recalled.stdout, recalled.stdout  # a readable match
        base = f"http://127.0.0.1:{port}"
        page = httpx.get(f"{base}/", timeout=30)
        assert page.status_code == 200 and "<script" in page.text, page.text[:500]
        asset = page.text.split('src="')[1].split('"')[0]
        assert httpx.get(f"{base}{asset}", timeout=30).status_code == 200
        assert httpx.get(f"{base}/api/health", timeout=30).json()["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8"
    finally:
        stopped = subprocess.run([kenning, "daemon", "stop"], env=env, capture_output=True, text=True, timeout=60)
    assert "stopped" in stopped.stdout, stopped.stdout + stopped.stderr

    data = model.read_bytes()
    model.write_bytes(data[: len(data) // 3])  # a model file cut short (a crash, a full disk)
    restarted = _run([kenning, "daemon", "start"], env)
    try:
        assert "partial" in restarted.stderr and "rebuilding" in restarted.stderr, restarted.stderr
        assert model.stat().st_size == len(data)
        again = _run([kenning, "recall", "helm deploys", "-p", "billing"], env)
        assert memory_id in again.stdout, again.stdout
    finally:
        subprocess.run([kenning, "daemon", "stop"], env=env, capture_output=True, timeout=60)
