# Two commands for users: `make demo` and `make test`. Both install what they need first.
VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
DBT     := $(abspath $(VENV)/bin/dbt)

.PHONY: setup system-deps emulators demo test unit functional lint bench soak clean

setup: system-deps $(STAMP)

system-deps:
	@scripts/install-system-deps

# Test-only: the S3 Tables emulator (own virtualenv) and the S3A jars Spark reaches it with.
emulators:
	@scripts/install-emulators .venv-ministack .emulator-jars

# The adapter is installed as a wheel, as users get it (package data, plugin discovery by
# `dbt init`), and reinstalled whenever a file under dbt/ changes.
SOURCES := $(shell find dbt -type f ! -path '*/__pycache__/*')

$(STAMP): pyproject.toml setup.cfg $(SOURCES)
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet '.[dev]'
	$(PYTHON) -m pip install --quiet --no-deps --force-reinstall .
	rm -rf build
	touch $(STAMP)

demo: setup
	cd integration_tests && $(DBT) build --profiles-dir .

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

unit: setup
	$(VENV)/bin/pytest tests/unit

functional: setup emulators
	$(VENV)/bin/pytest tests/functional

test: lint emulators
	$(VENV)/bin/pytest tests

bench: setup
	$(PYTHON) bench/seed_load.py
	$(PYTHON) bench/incremental_merge.py
	$(PYTHON) bench/add_column.py
	$(PYTHON) bench/first_model.py
	$(PYTHON) bench/growth.py

# Kill dbt at random moments, round after round; reports violations (must be 0).
SOAK_ROUNDS ?= 50
soak: setup
	$(PYTHON) bench/soak.py --rounds $(SOAK_ROUNDS) --threads 1
	$(PYTHON) bench/soak.py --rounds $(SOAK_ROUNDS) --threads 4

clean:
	rm -rf integration_tests/target integration_tests/warehouse integration_tests/logs .spark-run
