# Two commands: `make run` (set up + daemon with dashboard on embedded defaults)
# and `make test` (set up + the whole suite). Both depend on `make setup`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.kenning-installed
# The default embedding runtime's model: an int8 ONNX export of the bundled MiniLM weights (no download).
ONNX := $(VENV)/share/kenning/all-MiniLM-L6-v2-int8.onnx

.PHONY: setup run test lint browser dashboard-build bench-retrieval clean

setup: $(STAMP) $(ONNX)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[test]'
	touch $(STAMP)

$(ONNX): $(STAMP) src/kenning/providers/onnx_export.py
	$(PY) -m kenning.providers.onnx_export $(ONNX)

run: setup
	$(VENV)/bin/kenning serve

# The import contracts (pyproject's [tool.importlinter]) and the type checker (its [tool.mypy]).
lint: setup
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# The suite runs on TEST_WORKERS pytest-xdist workers (each its own daemons, ports, temp dirs and
# embedded PostgreSQL); --dist loadfile keeps a file on one worker, so module fixtures are built once,
# and files are handed out in collection order: tests/conftest.py puts the long ones first.
TEST_WORKERS ?= 3
test: setup lint browser
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Dashboard browser tests drive Debian's chromium headless (playwright cannot download browsers here).
browser:
	test -x /usr/bin/chromium || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

# Rebuild the dashboard (built assets are committed, so `make run` never needs this).
dashboard-build:
	cd dashboard && npm ci && npm run build

bench-retrieval: setup
	$(PY) bench/retrieval_locomo.py --out bench/out/retrieval_locomo.json

clean:
	rm -rf $(VENV) build *.egg-info
