# Two commands for users: `make demo` and `make test`. Both install what they need first.
VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
DBT     := $(abspath $(VENV)/bin/dbt)

.PHONY: setup system-deps jars emulators demo test unit functional lint bench soak clean \
	spark41 test-spark41 dbt111 dist

setup: system-deps $(STAMP) jars

# Spark's jars (Maven artifacts pinned in dbt/adapters/s3tables/catalogs/jars.py), fetched once into
# ~/.m2/repository so no run waits on the network; instant when they are there.
jars: $(STAMP)
	@$(VENV)/bin/dbt-s3tables-jars >/dev/null

system-deps:
	@scripts/install-system-deps

# Test-only: the S3 Tables emulator (own virtualenv), Apache Iceberg's REST catalog
# test server (jars from Maven Central) and Chromium (the docs-site test).
emulators:
	@scripts/install-system-deps --browser
	@scripts/install-emulators .venv-ministack
	@scripts/install-rest-fixture .emulator-jars/iceberg-rest-fixture

# The adapter is installed as a wheel, as users get it (package data, plugin discovery by
# `dbt init`), and reinstalled whenever a file under dbt/ changes.
SOURCES := $(shell find dbt -type f ! -path '*/__pycache__/*')

# `.[spark35]` is what `pip install dbt-s3tables` gets (packaging/dbt-s3tables/), on dbt-core
# 1.12, what a new user's pip gives: the line the whole suite runs on. 1.12's install goes
# a way of its own on this network (scripts/install-python-env says why); users' pip is the
# ordinary one.
$(STAMP): pyproject.toml setup.cfg scripts/install-python-env $(SOURCES)
	scripts/install-python-env $(VENV) 1.12 dev,spark35
	rm -rf build
	touch $(STAMP)

# The same install on Spark 4.1 (`pip install 'dbt-s3tables-core[spark41]'`, the newest line
# Iceberg 1.12's Spark runtime supports), beside the default Spark 3.5 one; jars.py picks the
# matching Iceberg runtime.
VENV41  := .venv-spark41
STAMP41 := $(VENV41)/.installed

$(STAMP41): pyproject.toml setup.cfg scripts/install-python-env $(SOURCES)
	scripts/install-python-env $(VENV41) 1.12 dev,spark41 'pyspark==4.1.4'
	rm -rf build
	touch $(STAMP41)

spark41: system-deps $(STAMP41)
	@$(VENV41)/bin/dbt-s3tables-jars >/dev/null

# The other dbt line, dbt-core 1.11 (with dbt-spark 1.11, Spark 3.5), beside 1.12: `make test`
# builds integration_tests/ on it over thrift and on a cluster and compares it with the 1.12
# build table by table (tests/functional/test_engines.py), then runs the conformance classes
# and the dbt Cloud package's tests on it.
VENV111  := .venv-dbt111
STAMP111 := $(VENV111)/.installed

$(STAMP111): pyproject.toml setup.cfg scripts/install-python-env $(SOURCES)
	scripts/install-python-env $(VENV111) 1.11 dev,spark35
	rm -rf build
	touch $(STAMP111)

dbt111: system-deps $(STAMP111)

# integration_tests/ built twice on Spark 4.1 through Iceberg's REST catalog server and on Spark
# 3.5 in the embedded catalog: the same tables (pytest runs in .venv, the Spark 4.1 builds are
# .venv-spark41's dbt). `make test` runs it with the rest.
test-spark41: setup emulators spark41
	$(VENV)/bin/pytest tests/spark41

# Both distributions' wheels into dist/, for a team's package index: dbt-s3tables-core (the
# code) and dbt-s3tables (the code on Spark 3.5); `pip install --find-links dist dbt-s3tables`.
# With DOCS_URL (where this version's files can be read, e.g.
# https://github.com/acme/dbt-s3tables/blob/v0.1.0), the READMEs' links point there and both
# distributions get project URLs; without it the links stay relative, as said.
dist: $(STAMP)
	rm -rf dist build/dist-tree
ifdef DOCS_URL
	$(PYTHON) scripts/dist_tree.py build/dist-tree "$(DOCS_URL)"
	$(PYTHON) -m pip wheel --quiet --no-deps --wheel-dir dist build/dist-tree \
		build/dist-tree/packaging/dbt-s3tables
else
	@echo "DOCS_URL not set: the wheels' README links stay relative and they have no project URLs"
	$(PYTHON) -m pip wheel --quiet --no-deps --wheel-dir dist . ./packaging/dbt-s3tables
endif
	rm -rf build packaging/dbt-s3tables/build

demo: setup
	cd integration_tests && $(DBT) build --profiles-dir .

# Style, the import layers (.importlinter), strict types, no `# type: ignore` without its
# reason on the same line, and the docs (links, anchors, every accepted key documented).
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-logo .importlinter
	$(VENV)/bin/mypy
	@if grep -rnE '# type: ignore(\[[^]]*\])?[[:space:]]*$$' dbt/adapters/s3tables; then \
		echo 'each # type: ignore above needs its reason on the same line'; exit 1; fi
	$(PYTHON) scripts/check_docs.py

unit: setup
	$(VENV)/bin/pytest tests/unit

functional: setup emulators dbt111
	$(VENV)/bin/pytest tests/functional

# Two test processes (pytest-xdist), one per core; `--dist loadfile` keeps each test file on
# one process, so a module's servers start once (`loadscope` sends a module's classes to
# both). The files go in tests/conftest.py's order, slow ones first (xdist's own reorder
# would send the files of many quick tests first and leave the slow ones for the end).
# The dbt processes the tests start run Spark's JVM with C1 only, the tests' own JVMs
# without generated code (tests/functional/harness.py).
# Then, on dbt-core 1.11 (the whole suite ran on 1.12; test_engines.py built integration_tests/
# on 1.11 over thrift and on a cluster, every model kind and strategy, and compared it with
# the 1.12 build table by table):
# what runs through dbt-core's own code, which differs between the lines (its macros and
# tasks): the conformance classes but for those of the adapter's own materializations
# (incremental strategies, schema changes, copies, Python models, concurrent threads: the
# 1.11 integration build runs them), and the dbt Cloud package's classes that go through
# dbt-core's materializations (seeds, snapshots, contracts, --empty, dbt's own flags), the
# dbt-spark shim's, and the package machine's fixed walk (every strategy of the package's
# incremental materialization, in sequence); not the package's strategy and incremental
# classes one by one, whose materialization is the package's own Jinja, rendered the same
# on both lines (6 of the 1.11 part's 9 minutes went to classes that repeat this).
DBT111_TESTS := tests/functional/adapter tests/functional/test_spark_package.py
DBT111_IGNORE := $(addprefix --ignore=tests/functional/adapter/,test_incremental_suite.py \
	test_on_schema_change.py test_simple_copy.py test_python_model.py test_concurrency.py)
# (-k matches by substring: `TestEmpty` is TestEmpty, TestEmptySeed and TestEmptySeedFlag.)
DBT111_SELECT := not test_spark_package or TestSeed or TestReseed or TestEmpty \
	or TestAnEmptyRebuild or TestSimpleSnapshot or TestSnapshot or TestTableConstraints \
	or TestTableContractSqlHeader or TestWithoutTheShim or TestLegacyFlag or TestDbtsOwnKeys \
	or test_a_walk_of_the_package_promises
test: lint emulators spark41 dbt111
	$(VENV)/bin/pytest tests -n 2 --dist loadfile --no-loadscope-reorder --durations=30
	$(VENV111)/bin/pytest $(DBT111_TESTS) $(DBT111_IGNORE) -k '$(DBT111_SELECT)' -n 2 \
		--dist loadfile --no-loadscope-reorder --durations=10

# spark_lines.py runs format_versions.py (v2 vs v3 vs copy-on-write vs dbt-spark) and the
# edit-run loop on Spark 3.5, then on 4.1, and prints the two lines side by side.
bench: setup spark41
	$(PYTHON) bench/seed_load.py
	$(PYTHON) bench/incremental_scale.py
	$(PYTHON) bench/merge_dedup.py
	$(PYTHON) bench/merge_phases.py
	$(PYTHON) bench/dag_rerun.py
	$(PYTHON) bench/add_column.py
	$(PYTHON) bench/first_model.py
	$(PYTHON) bench/parse_ls.py
	$(PYTHON) bench/watch_loop.py
	$(PYTHON) bench/upstream_changes.py
	$(PYTHON) bench/growth.py
	$(PYTHON) bench/statements_per_run.py
	$(PYTHON) bench/statements_per_node.py
	$(PYTHON) bench/statements_per_node.py --dag
	$(PYTHON) bench/server_dag_rerun.py --in-process
	$(PYTHON) bench/server_dag_rerun.py --merge-rows 10000000 --workloads merge
	$(PYTHON) bench/server_integration_build.py
	$(PYTHON) bench/server_upstream_changes.py
	$(PYTHON) bench/maintenance.py
	$(PYTHON) bench/audit_publish.py
	$(PYTHON) bench/spark_lines.py

# dbt runs round after round under a fault; each kind reports its violations (must be 0):
# kill (SIGKILL at random moments, SOAK_ROUNDS rounds), overlap (two runs on the same tables
# at once) and disk-full (writes on a full disk), SOAK_FAULT_ROUNDS rounds each (slower).
# disk-full mounts a tmpfs for the warehouse, which needs root: without, it says so and skips.
# Then the promises' state machine (tests/property/, docs/guarantees.md) long, from a random
# seed it prints (a failure prints the command that replays it): PROMISES_EXAMPLES examples
# of PROMISES_STEPS steps in process, then PROMISES_KILL_EXAMPLES with dbt in subprocesses
# SIGKILLed at random moments, then PROMISES_CONCURRENT_EXAMPLES with two dbt processes at
# once on the same tables (overlapping runs of the same readers, an upstream racing them).
# Every kind runs even if one before it found violations; the target fails if any did.
SOAK_ROUNDS ?= 50
SOAK_FAULT_ROUNDS ?= 10
PROMISES_EXAMPLES ?= 40
PROMISES_STEPS ?= 20
PROMISES_KILL_EXAMPLES ?= 6
PROMISES_CONCURRENT_EXAMPLES ?= 6
soak: setup
	status=0; \
	$(PYTHON) bench/promises_soak.py --examples $(PROMISES_EXAMPLES) --steps $(PROMISES_STEPS) || status=1; \
	$(PYTHON) bench/promises_soak.py --kill --examples $(PROMISES_KILL_EXAMPLES) --steps 10 || status=1; \
	$(PYTHON) bench/promises_soak.py --concurrent --examples $(PROMISES_CONCURRENT_EXAMPLES) --steps 10 || status=1; \
	$(PYTHON) bench/soak.py --rounds $(SOAK_ROUNDS) --threads 1 || status=1; \
	$(PYTHON) bench/soak.py --rounds $(SOAK_ROUNDS) --threads 4 || status=1; \
	$(PYTHON) bench/soak.py --fault overlap --rounds $(SOAK_FAULT_ROUNDS) || status=1; \
	$(PYTHON) bench/soak.py --fault disk-full --rounds $(SOAK_FAULT_ROUNDS) || status=1; \
	exit $$status

clean:
	rm -rf integration_tests/target integration_tests/warehouse integration_tests/logs .spark-run
