"""`kenning serve` (foreground) and `kenning daemon start|stop|status` (background, pidfile, logs).

One daemon per home: `serve` holds `HomeLock` for its life and writes the pidfile only once it
holds it; a second `serve` or `daemon start` exits 2 naming the running one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kenning.cli.context import console, fail, settings
from kenning.cli.home_lock import HomeLock
from kenning.client import KenningClient
from kenning.diagnostics.logfile import install_json_log_file

if TYPE_CHECKING:
    from kenning.core.config import Settings

daemon_app = typer.Typer(help="Run kenning in the background.", no_args_is_help=True)
START_TIMEOUT_S = 90.0


def serve(
    host: str = typer.Option(None, help="Bind address (default from config: 127.0.0.1)."),
    port: int = typer.Option(None, help="Port (default from config / KENNING_PORT: 3850)."),
) -> None:
    """Run the daemon in the foreground (HTTP API, dashboard, workers)."""
    import uvicorn

    from kenning.api.app import create_app
    from kenning.core.config import load_settings
    from kenning.core.errors import ConfigError
    from kenning.providers.registry import check_model_files

    _fewer_malloc_arenas()
    base = settings()
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    try:
        cfg = load_settings(None, home=base.home, **overrides) if overrides else base
        check_model_files(cfg.embedding)
    except ConfigError as exc:
        fail(str(exc), code=2)
    lock = HomeLock(cfg.home)
    if not lock.acquire(cfg.port):
        _refuse_second(cfg.home, lock)
    cfg.pid_path.write_text(str(os.getpid()))
    if cfg.observability.log_file:
        install_json_log_file(cfg.log_dir, cfg.observability.log_file_max_bytes, cfg.log_level)
    console.print(f"kenning serving {cfg.home} on {cfg.base_url}", highlight=False)
    try:
        uvicorn.run(create_app(cfg), host=cfg.host, port=cfg.port, log_level="warning")
    except OSError as exc:
        fail(f"cannot listen on {cfg.host}:{cfg.port}: {exc}; set KENNING_PORT or port in config.yaml")
    finally:
        if _read_pid() == os.getpid():
            cfg.pid_path.unlink(missing_ok=True)
        lock.release()


def _fewer_malloc_arenas() -> None:
    """At most 2 glibc malloc arenas for the daemon's threads (default: 8 per core, each keeping its
    freed memory): at 10k memories idle 330 -> 294 MB, after 2,000 recalls 335 -> 299 MB (one run
    each, bench/latency.py --daemon-rss). A no-op without glibc."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(-8, 2)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


def _refuse_second(home: Path, lock: HomeLock) -> None:
    holder = lock.holder()
    who = holder.describe() if holder else "it has just exited; try again"
    fail(f"another kenning daemon already serves {home} ({who}); stop it with `kenning daemon stop`", code=2)


def _read_pid() -> int | None:
    path = settings().pid_path
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except OSError:
        path.unlink(missing_ok=True)
        return None
    return pid


@daemon_app.command("start")
def start() -> None:
    """Start the daemon in the background and wait until it answers."""
    cfg = settings()
    client = KenningClient(cfg.base_url, token=cfg.auth_token)
    lock = HomeLock(cfg.home)
    holder = lock.holder()
    if holder is not None:
        if holder.port == cfg.port and client.is_up():
            console.print(f"already running (pid {holder.pid}) at {cfg.base_url}", highlight=False)
            return
        _refuse_second(cfg.home, lock)
    if client.is_up():
        fail(f"something else answers at {cfg.base_url}; stop it or set KENNING_PORT")
    first_run = not cfg.db_path.exists()
    _model_ready(cfg)
    cfg.log_dir.mkdir(parents=True, exist_ok=True)
    log = open(cfg.log_dir / "daemon.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "serve"], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True, env=os.environ.copy())
    with console.status("starting kenning (loading the embedding model)…"):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                if proc.returncode == 2 and lock.holder() is not None:
                    _refuse_second(cfg.home, lock)
                fail(f"daemon exited with code {proc.returncode}; see {cfg.log_dir / 'daemon.log'}")
            if client.is_up():
                console.print(f"kenning running (pid {proc.pid}) at {cfg.base_url}", highlight=False)
                if first_run:  # a new home: which agents to connect, and how
                    from kenning.cli.init import next_steps

                    for line in next_steps(True, cfg.base_url):
                        console.print(line, highlight=False, soft_wrap=True)
                return
            time.sleep(0.25)
    fail(f"daemon did not answer within {START_TIMEOUT_S:.0f}s; see {cfg.log_dir / 'daemon.log'}")


def _model_ready(cfg: Settings) -> None:
    """Build the default embedding model here, on the user's terminal, when this install has none yet
    (pip/pipx/uv: no `make setup`), instead of inside the background daemon's start timeout."""
    from kenning.core.errors import ConfigError
    from kenning.providers.registry import check_model_files

    try:
        check_model_files(cfg.embedding)
    except ConfigError as exc:
        fail(str(exc), code=2)


@daemon_app.command("stop")
def stop() -> None:
    """Stop the background daemon."""
    pid = _read_pid()
    if not pid:
        console.print("not running")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
    settings().pid_path.unlink(missing_ok=True)
    console.print(f"stopped (pid {pid})")


@daemon_app.command("status")
def status() -> None:
    """Is the daemon running, and where?"""
    cfg = settings()
    pid = _read_pid()
    client = KenningClient(cfg.base_url, token=cfg.auth_token)
    if client.is_up():
        info = client.health()
        console.print(f"running{f' (pid {pid})' if pid else ''} at {cfg.base_url}, version {info.get('version')},"
                      f" home {info.get('home')}", highlight=False)
        return
    console.print(f"not running (expected at {cfg.base_url})", highlight=False)
    raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.add_typer(daemon_app, name="daemon")
