"""The CLI without a daemon: commands that need no embedding never load the model (nor torch).

Each run is a real `kenning` process on a fresh KENNING_HOME whose port has nothing listening;
what it imported is read from `sys.modules` at exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("torch", "sentence_transformers", "transformers", "onnxruntime", "fastapi", "uvicorn",
         "networkx", "bs4", "detect_secrets", "requests")
SCANNER = ["detect_secrets", "requests"]  # the secret scanner's detectors: imported by what stores text


def runner(report: str) -> str:
    """A script that runs `kenning ARGS` in its interpreter, then prints `LOADED ` and the JSON of
    `report` (an expression over `sys.modules`) on a last line, and exits with the command's code."""
    return (
        "import json, sys\n"
        "from kenning.cli.main import main\n"
        "sys.argv = ['kenning', *json.loads(sys.argv[1])]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    code = exc.code or 0\n"
        "else:\n"
        "    code = 0\n"
        f"print('\\nLOADED ' + json.dumps({report}))\n"
        "sys.exit(code)\n"
    )


RUNNER = runner(f"sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))")


def run_local(home, port: int, *args: str, script: str = RUNNER) -> tuple[subprocess.CompletedProcess, list[str]]:
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(port)}
    env.pop("KENNING_URL", None)
    result = subprocess.run([sys.executable, "-c", script, json.dumps(list(args))], env=env,
                            capture_output=True, text=True, timeout=300)
    body, _, loaded = result.stdout.rpartition("\nLOADED ")
    result.stdout = body
    return result, json.loads(loaded or "null")


def test_commands_without_embedding_never_load_the_model(tmp_path, unused_port):
    home = tmp_path / "home"
    result, loaded = run_local(home, unused_port, "remember", "Deploy with scripts/ship.sh", "-p", "demo", "--json")
    assert result.returncode == 0, result.stderr
    assert loaded == SCANNER, f"`remember` (local, raw-first) imported {loaded}"
    memory_id = json.loads(result.stdout)["id"]

    out = tmp_path / "export.json"
    for args in (["list", "--json"], ["show", memory_id], ["stats", "--json"], ["sessions", "list"],
                 ["export", "--out", str(out)], ["forget", memory_id]):
        result, loaded = run_local(home, unused_port, *args)
        assert result.returncode == 0, (args, result.stderr)
        assert loaded == [], f"`kenning {' '.join(args)}` imported {loaded}"
    assert [m["id"] for m in json.loads(out.read_text())] == [memory_id]


def test_raw_first_memories_are_embedded_by_the_next_local_recall(tmp_path, unused_port):
    home = tmp_path / "home"
    stored, _ = run_local(home, unused_port, "remember", "The staging database lives on port 6543", "--json")
    memory_id = json.loads(stored.stdout)["id"]
    listed, _ = run_local(home, unused_port, "list", "--json")
    assert json.loads(listed.stdout)["items"][0]["embedding_model"] is None  # stored raw, no vector yet

    found, loaded = run_local(home, unused_port, "recall", "where is staging's db", "--preset", "dense", "--json")
    assert found.returncode == 0, found.stderr
    assert loaded == ["onnxruntime"]  # recall is what needs the model: the ONNX runtime, never torch
    assert [hit["id"] for hit in json.loads(found.stdout)] == [memory_id]
    listed, _ = run_local(home, unused_port, "list", "--json")
    assert json.loads(listed.stdout)["items"][0]["embedding_model"]
