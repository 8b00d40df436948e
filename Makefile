# The two commands of the README: `make train` (main job) and `make test` (all tests, docs, lint).
# Each creates the virtual environment .venv on first use: `make train` with what training needs
# (requirements.txt), `make test`, `make docs` and `make lint` add requirements-dev.txt.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
RUN_DIR ?= data/promp_point_quickstart
export TF_CPP_MIN_LOG_LEVEL ?= 2

.PHONY: venv venv-dev venv-metaworld train test test-metaworld docs lint bench clean

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install -e .
	touch $@

# pytest, Sphinx and the linters, on top of the training environment.
venv-dev: $(VENV)/.installed-dev

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install -r requirements-dev.txt
	touch $@

# Optional Meta-World venv: metaworld 3.1.1 pins mujoco 3.3.0, so it cannot share .venv (mujoco 4).
METAWORLD_VENV ?= .venv-metaworld
METAWORLD_PY := $(METAWORLD_VENV)/bin/python

venv-metaworld: $(METAWORLD_VENV)/.installed

$(METAWORLD_VENV)/.installed: requirements-metaworld.txt setup.py
	$(PYTHON) -m venv $(METAWORLD_VENV)
	$(METAWORLD_PY) -m pip install --upgrade pip
	$(METAWORLD_PY) -m pip install -r requirements-metaworld.txt
	$(METAWORLD_PY) -m pip install -e ".[test,metaworld]"
	touch $@

# --overwrite: each `make train` replaces the quick-start run (a run script never does unasked).
train: venv
	$(PY) experiments/promp_run_point_mass.py --dump_path $(RUN_DIR) --overwrite
	$(PY) experiments/plot.py $(RUN_DIR) --output $(RUN_DIR)/learning_curve.png

test: venv-dev
	$(PY) -m pytest tests -q --durations=15
	$(MAKE) docs
	$(MAKE) lint

# The Meta-World tests, and the other envs' tests on the metaworld venv's mujoco 3.3.
test-metaworld: venv-metaworld
	$(METAWORLD_PY) -m pytest -q tests/test_metaworld.py tests/test_mujoco_envs.py \
		tests/test_point_envs.py tests/test_batched_envs.py tests/test_normalized_env.py

# docs/api is autosummary's output: regenerated each time, so a removed module leaves no page.
docs: venv-dev
	rm -rf docs/api
	$(PY) -m sphinx -n -W --keep-going -b html docs docs/_build/html

# ruff.toml and mypy.ini hold the settings.
lint: venv-dev
	$(PY) -m ruff check . && $(PY) -m mypy

bench: venv
	$(PY) benchmarks/sampling_benchmark.py

clean:
	rm -rf $(VENV) $(METAWORLD_VENV) docs/_build docs/api docs/_generated
