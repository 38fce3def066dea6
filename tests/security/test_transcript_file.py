"""Confined transcript reading (issue 26): only regular files inside the harness folders, under
the size cap, without ever blocking on a FIFO or reading a device."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kenning.core import transcript_file as tf
from kenning.hooks.transcript_file import read_tail, read_whole, roots


@pytest.fixture
def fake_home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "user"
    (home / ".claude" / "projects" / "-w-app").mkdir(parents=True)
    return {"HOME": str(home)}


def _transcript(env: dict[str, str], name: str = "s.jsonl", text: str = '{"type":"user"}\n') -> Path:
    path = Path(env["HOME"]) / ".claude" / "projects" / "-w-app" / name
    path.write_text(text)
    return path


def test_a_transcript_inside_the_claude_folder_is_read(fake_home):
    path = _transcript(fake_home, text="line one\nline two\n")
    reading = read_whole(str(path), environ=fake_home)
    assert reading.ok and reading.text == "line one\nline two\n"
    tail = read_tail(str(path), 10, environ=fake_home)
    assert tail.ok and tail.text == "line two\n"


@pytest.mark.parametrize("target", ["/etc/passwd", "/proc/self/environ", "/dev/zero"])
def test_paths_outside_the_harness_folders_are_refused(fake_home, target):
    before = tf.REFUSALS.get("outside_roots", 0)
    reading = read_whole(target, environ=fake_home)
    assert reading.text is None and reading.reason == "outside_roots"
    assert tf.REFUSALS["outside_roots"] == before + 1


def test_a_symlink_out_of_the_folder_is_refused(fake_home, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("AKIA secret stuff")
    link = Path(fake_home["HOME"]) / ".claude" / "projects" / "-w-app" / "link.jsonl"
    link.symlink_to(secret)
    assert read_whole(str(link), environ=fake_home).reason == "outside_roots"
    (Path(fake_home["HOME"]) / ".claude" / "projects" / "dev").symlink_to("/dev")
    assert read_whole(os.path.join(fake_home["HOME"], ".claude/projects/dev/zero"), environ=fake_home).reason == "outside_roots"


def test_a_fifo_inside_the_folder_is_refused_without_blocking(fake_home):
    fifo = Path(fake_home["HOME"]) / ".claude" / "projects" / "-w-app" / "fifo.jsonl"
    os.mkfifo(fifo)
    reading = read_whole(str(fifo), environ=fake_home)  # no writer: a blocking open would hang here
    assert reading.text is None and reading.reason == "not_regular"


def test_a_sparse_file_past_the_cap_is_refused_before_reading(fake_home):
    path = _transcript(fake_home, "big.jsonl", "")
    with open(path, "r+b") as handle:
        handle.truncate(2 * 1024 ** 3)  # 2 GB, sparse
    reading = read_whole(str(path), environ=fake_home)
    assert reading.reason == "too_large" and reading.size == 2 * 1024 ** 3 and reading.text is None


def test_a_passed_deadline_reads_nothing(fake_home):
    path = _transcript(fake_home, text="x" * 100)
    reading = tf.read_transcript(str(path), roots=roots(fake_home), deadline_at=time.monotonic() - 1)
    assert reading.reason == "deadline" and reading.text is None


def test_extra_roots_come_from_the_environment_and_config(fake_home, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "t.jsonl").write_text("hello\n")
    assert read_whole(str(other / "t.jsonl"), environ=fake_home).reason == "outside_roots"
    env = {**fake_home, "KENNING_TRANSCRIPT_ROOTS": str(other)}
    assert read_whole(str(other / "t.jsonl"), environ=env).text == "hello\n"
    config = {"sessions": {"transcript_roots": [str(other)]}}
    assert read_whole(str(other / "t.jsonl"), environ=fake_home, config=config).text == "hello\n"
    assert read_whole(str(other), environ=env).reason == "outside_roots"  # the root itself is no transcript


def test_codex_and_gemini_folders_are_roots(tmp_path):
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "cx")}
    for folder in (tmp_path / "cx" / "sessions" / "2026", tmp_path / ".gemini" / "tmp" / "abc" / "chats"):
        folder.mkdir(parents=True)
        (folder / "t.jsonl").write_text("{}\n")
        assert read_whole(str(folder / "t.jsonl"), environ=env).text == "{}\n"
