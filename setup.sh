#!/usr/bin/env bash
# Set up guardrail in .venv/ (offline-capable: models come from packages and the repo) and run
# a short demo. Re-running is safe. GUARDRAIL_SKIP_DEMO=1 skips the demo.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
# Debian's headless Chromium and its driver, for the web page's browser tests.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    apt-get update -q && apt-get install -y -q chromium chromium-driver
  else
    echo "setup.sh: chromium/chromium-driver missing (the page tests will skip); as root: apt-get install -y chromium chromium-driver" >&2
  fi
fi
# Debian's PostgreSQL server, for the report store's PostgreSQL tests (.ci/postgres.sh starts one).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    apt-get update -q && apt-get install -y -q postgresql
  else
    echo "setup.sh: PostgreSQL missing (its store tests will skip); as root: apt-get install -y postgresql" >&2
  fi
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# The CPU build of torch that lies on disk; an unpinned torch would pull a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0"
# llama-cpp-python builds from source (about 4 minutes on 2 cores). Build it portably: a native
# build (-march=native) emits every instruction the build CPU advertises, AMX included, and a VM
# that advertises amx_tile without granting the tile state kills the process with SIGILL.
# GGML_NATIVE=OFF targets AVX2/FMA/F16C and leaves AMX and AVX-512 off. No wheel cache: a native
# wheel built earlier would otherwise be reused. The marker records that this venv has the
# portable build, so re-running setup.sh does not rebuild it.
LLAMA_CMAKE_ARGS="${LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_AVX512=OFF}"
if [ ! -f .venv/.llama-portable ] || [ "$(cat .venv/.llama-portable)" != "$LLAMA_CMAKE_ARGS" ]; then
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" FORCE_CMAKE=1 .venv/bin/python -m pip install --quiet \
    --no-cache-dir --force-reinstall --no-deps "llama-cpp-python>=0.3"
  echo "$LLAMA_CMAKE_ARGS" > .venv/.llama-portable
fi
# constraints.txt: the versions of the packages that move the scores, as the benchmarks ran.
.venv/bin/python -m pip install --quiet -c constraints.txt -e ".[all,local-llm,dev,docs]"
if [ "${GUARDRAIL_SKIP_DEMO:-0}" != "1" ]; then
  HF_HUB_OFFLINE=1 .venv/bin/guardrail demo
fi
