#!/usr/bin/env bash
# Print the path of a Python >= 3.12 (what today's JAX needs), or say what to install and exit 1.
# $PYTHON if set (and only it); else python3.12 (what CI and the lent GPU machine run), python3, python3.13,
# then pyenv's 3.12+ installs, oldest first.
set -uo pipefail
ok() { "$1" -c 'import sys; raise SystemExit(sys.version_info < (3, 12))' >/dev/null 2>&1; }
if [ -n "${PYTHON:-}" ]; then
  if p=$(command -v "$PYTHON") && ok "$p"; then echo "$p"; exit 0; fi
  echo "find-python: PYTHON=$PYTHON is not a Python >= 3.12 (JAX >= 0.11 needs one); unset it or point it at one" >&2
  exit 1
fi
candidates=(python3.12 python3 python3.13)
if command -v pyenv >/dev/null 2>&1; then
  for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.1[2-9]' | sort -V); do
    candidates+=("$(pyenv prefix "$v" 2>/dev/null)/bin/python3")
  done
fi
for c in "${candidates[@]}"; do
  p=$(command -v "$c" 2>/dev/null) || continue
  if ok "$p"; then echo "$p"; exit 0; fi
done
echo "find-python: no Python >= 3.12 found (tried: ${candidates[*]})." >&2
echo "  JAX >= 0.11 needs Python 3.12+. Install one (e.g. 'pyenv install 3.12', 'apt-get install python3.12-venv'," >&2
echo "  or actions/setup-python with python-version 3.12) and rerun, or point PYTHON at it." >&2
exit 1
