# Everything a newcomer needs: `make demo` and `make test` (Python 3.11+ and make only).
PY ?= python3
VENV := .venv
UV := .tools/bin/uv
export UV_COMPILE_BYTECODE := 1
export UV_PYTHON_DOWNLOADS := never
export UV_LINK_MODE := copy

.PHONY: setup demo test bench lint clean

setup: $(VENV)/.synced

$(UV):
	$(PY) -m venv .tools
	.tools/bin/pip install --quiet --disable-pip-version-check uv==0.13.8

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --all-extras --python $(PY)
	touch $@

demo: setup
	$(VENV)/bin/impcredit generate --employers 200 --seed 7 --tax-year 2023 --out data/sample
	$(VENV)/bin/impcredit annual --input data/sample --tax-year 2023 --as-of 2024-07-01 --out data/out/annual-2023 --workdir data/work

test: setup
	$(VENV)/bin/python -m pytest -n 2 --dist loadfile

bench: setup
	$(VENV)/bin/python bench/run.py

lint: setup
	$(VENV)/bin/ruff check .

clean:
	rm -rf data/work data/out data/sample data/.prefect
