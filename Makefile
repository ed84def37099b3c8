# dpcert: `make test` and `make demo` work on a fresh machine from this repo alone.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: test test-fast demo bench lint typecheck pytest clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check accounting learners verification tests examples
	$(VENV)/bin/ruff format --check accounting learners verification tests examples

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict accounting learners verification tests

# The whole suite, on every core (pytest-xdist); CI runs this.
pytest: $(STAMP)
	$(PY) -m pytest -q -n auto --dist worksteal

test: lint typecheck pytest

# The inner loop: the suite without the tests marked slow, on every core (under 2 minutes).
test-fast: lint
	$(PY) -m pytest -q -n auto --dist worksteal -m "not slow"

demo: $(STAMP)
	$(VENV)/bin/dp-regret reproduce figure1 --quick --no-progress

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(PY) -m pytest tests/benchmarks -o addopts="" --benchmark-only --benchmark-columns=min,median,mean,max,rounds

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
