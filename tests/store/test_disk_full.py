"""Disk full (issue 12 item 6): on a real full disk (a small tmpfs) remember answers 507 "disk is
full" — never a 500 —, the storage health domain goes red, `kenning doctor` exits non-zero, and
once space is freed writes work again with nothing lost."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from bench.harnesses.daemon import start_daemon


@pytest.fixture
def tmpfs(tmp_path: Path):
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(path: Path) -> Path:
    """Write zeros until the disk says ENOSPC (1 MiB blocks, then 4 KiB ones for the last bytes)."""
    filler = path / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1024 * 1024, 4096):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler


def test_full_disk_answers_507_and_turns_storage_red(tmpfs):
    daemon = start_daemon(tmpfs / "home")
    try:
        with daemon.client() as client:
            for i in range(3):
                assert client.post("/api/memory/remember", json={"content": f"stored before the disk filled {i}"}
                                   ).status_code == 200
            filler = _fill(tmpfs)
            statuses = []
            for i in range(200):  # SQLite can reuse WAL space for a while; it fails as soon as it must grow
                r = client.post("/api/memory/remember", json={
                    "content": f"note {i} {uuid.uuid4().hex} " + "padding words for a bigger page " * 600})
                statuses.append(r.status_code)
                if r.status_code != 200:
                    break
            assert statuses[-1] == 507, statuses
            assert set(statuses[:-1]) <= {200}
            assert "disk is full" in r.json()["error"]
            storage = client.get("/api/diagnostics/storage").json()
            assert storage["status"] == "unhealthy", storage
            assert any("disk is full" in p["message"] for p in storage["problems"])
            env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
            doctor = subprocess.run([sys.executable, "-m", "kenning", "doctor", "--json"], env=env,
                                    capture_output=True, text=True, timeout=180)
            assert doctor.returncode == 2, doctor.stdout[-2000:] + doctor.stderr

            filler.unlink()
            again = client.post("/api/memory/remember", json={"content": "stored after space was freed"})
            assert again.status_code == 200, again.text
            assert client.get("/api/memory").json()["total"] == 4 + statuses.count(200)
            assert client.get("/api/diagnostics/storage").json()["status"] != "unhealthy"
    finally:
        daemon.stop()
