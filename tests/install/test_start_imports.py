"""What a daemon's start-up imports: the app is built and started (store, model, workers) without
the packages only some requests use (the torch stack, networkx, BeautifulSoup, detect-secrets and requests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

NOT_AT_START = ("torch", "sentence_transformers", "transformers", "onnx", "networkx", "bs4", "detect_secrets",
                "requests", "tree_sitter_python", "psycopg", "schemathesis", "playwright")
PROBE = (
    "import json, sys\n"
    "from kenning.api.app import create_app\n"
    "from kenning.core.config import load_settings\n"
    "from fastapi.testclient import TestClient\n"
    "with TestClient(create_app(load_settings()), base_url='http://127.0.0.1') as client:\n"  # runs the start-up: store, model, workers
    "    assert client.get('/api/health').status_code == 200\n"
    "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
)


def test_starting_the_daemon_app_imports_none_of_the_heavy_optional_packages(tmp_path):
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "fastapi" in loaded and "kenning" in loaded  # the probe did build and start the app
    assert not loaded & set(NOT_AT_START), sorted(loaded & set(NOT_AT_START))
