# The two commands of the README: `make train` (main job) and `make test` (all tests, docs, lint).
# Each creates the virtual environment .venv on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
RUN_DIR ?= data/promp_point_quickstart
export TF_CPP_MIN_LOG_LEVEL ?= 2

.PHONY: venv train test docs lint bench clean

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install -e ".[test,docs]"
	touch $@

train: venv
	rm -rf $(RUN_DIR)
	$(PY) experiments/promp_run_point_mass.py --dump_path $(RUN_DIR)
	$(PY) experiments/plot.py $(RUN_DIR) --output $(RUN_DIR)/learning_curve.png

test: venv
	$(PY) -m pytest tests -q --durations=15
	$(MAKE) docs
	$(MAKE) lint

docs: venv
	$(PY) -m sphinx -n -W --keep-going -b html docs docs/_build/html

# ruff.toml and mypy.ini hold the settings.
lint: venv
	$(PY) -m ruff check . && $(PY) -m mypy

bench: venv
	$(PY) benchmarks/sampling_benchmark.py

clean:
	rm -rf $(VENV) docs/_build docs/api docs/_generated
