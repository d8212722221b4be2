#!/usr/bin/env bash
# Quick start, command 2: set up and run the tests (what CI runs). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-browser.sh
bash scripts/setup-engines.sh &   # npm, beside pip and uv (each says what it could not install; never fails)
engines=$!
bash scripts/setup-venv.sh bench,audit,test
wait "$engines"
.venv/bin/ruff check .   # lint first: configured in pyproject.toml [tool.ruff]
# the layer contracts ([tool.importlinter]) and the type checker over jaxci/ ([tool.mypy]; its cache in .mypy_cache)
.venv/bin/lint-imports --no-logo
.venv/bin/mypy
# one pytest-xdist worker per core and one more: the three costly session fixtures each hold a worker, and part of
# their time waits on pip, asv and kernels (README, Tests). tests/conftest.py keeps each costly fixture's tests on
# one worker and puts them first, in the order it gives (no reordering by the count of tests)
workers=${JAXCI_TEST_WORKERS:-$(( $(nproc) + 1 ))}
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup --no-loadscope-reorder "$@"
