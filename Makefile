# Two commands: `make run` (set up + daemon with dashboard on embedded defaults)
# and `make test` (set up + the whole suite). Both depend on `make setup`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.kenning-installed

.PHONY: setup run test lint bench-retrieval clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[test]'
	touch $(STAMP)

run: setup
	$(VENV)/bin/kenning serve

lint: setup
	$(VENV)/bin/lint-imports

test: setup lint
	$(VENV)/bin/pytest -q

bench-retrieval: setup
	$(PY) bench/retrieval_locomo.py --out bench/out/retrieval_locomo.json

clean:
	rm -rf $(VENV) build *.egg-info
