"""The real agent CLIs the harness tests drive, installed from npm at pinned versions into a cache.

`PINS` is the one table: a version bump is one line. `cli_path("claude-code")` installs the pinned
package once (`npm install --prefix <dir> --no-audit --no-fund <pkg>@<ver>`) under
`$KENNING_TEST_CLIS` (default `~/.cache/kenning-test-clis`) in `<pkg with / as __>@<ver>`, and
returns the path of its executable. A file lock next to the folder keeps two pytest workers (or
two engineers) from installing the same one at once; a `.kenning-installed` marker says an install
finished. When npm is missing or the registry cannot be reached the caller gets `CliUnavailable`
(the tests skip with that reason: tests/harness/require.py).

    from bench.harnesses.clis import cli_path
    claude = cli_path("claude-code")
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pin:
    package: str
    version: str
    binary: str  # the executable's name in node_modules/.bin


PINS: dict[str, Pin] = {
    "claude-code": Pin("@anthropic-ai/claude-code", "2.1.328", "claude"),
    "codex": Pin("@openai/codex", "0.169.0", "codex"),
    "gemini": Pin("@google/gemini-cli", "0.61.0", "gemini"),
    "opencode": Pin("opencode-ai", "1.18.33", "opencode"),
    "copilot": Pin("@github/copilot", "1.0.102", "copilot"),
}

INSTALL_TIMEOUT_S = 900
MARKER = ".kenning-installed"


class CliUnavailable(RuntimeError):
    """The CLI could not be installed here (no npm, no registry); the message says why."""


def cache_root() -> Path:
    return Path(os.environ.get("KENNING_TEST_CLIS") or Path.home() / ".cache" / "kenning-test-clis").expanduser()


def install_dir(name: str) -> Path:
    pin = PINS[name]
    return cache_root() / f"{pin.package.replace('/', '__')}@{pin.version}"


def version(name: str) -> str:
    return PINS[name].version


def _binary(folder: Path, pin: Pin) -> Path:
    return folder / "node_modules" / ".bin" / pin.binary


def cli_path(name: str) -> Path:
    """The pinned CLI's executable, installing it first when the cache lacks it."""
    pin = PINS[name]
    folder = install_dir(name)
    binary = _binary(folder, pin)
    if (folder / MARKER).exists() and binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise CliUnavailable("npm is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing it: wait for it
        try:
            if (folder / MARKER).exists() and binary.exists():
                return binary
            if binary.exists() and _runs(binary):  # an install that finished before markers existed
                (folder / MARKER).write_text(f"{pin.package}@{pin.version}\n")
                return binary
            try:
                done = subprocess.run(
                    [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund",
                     f"{pin.package}@{pin.version}"],
                    capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                )
            except subprocess.TimeoutExpired as exc:
                raise CliUnavailable(f"npm install {pin.package}@{pin.version} timed out") from exc
            if done.returncode != 0 or not binary.exists():
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                raise CliUnavailable(f"npm install {pin.package}@{pin.version} failed: {' | '.join(tail)}")
            (folder / MARKER).write_text(f"{pin.package}@{pin.version}\n")
            return binary
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _runs(binary: Path) -> bool:
    try:
        return subprocess.run([str(binary), "--version"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
