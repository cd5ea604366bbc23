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
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# The CPU build of torch that lies on disk; an unpinned torch would pull a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0"
# llama-cpp-python builds from source (about 4 minutes on 2 cores).
.venv/bin/python -m pip install --quiet -e ".[all,local-llm,dev]"
if [ "${GUARDRAIL_SKIP_DEMO:-0}" != "1" ]; then
  HF_HUB_OFFLINE=1 .venv/bin/guardrail demo
fi
