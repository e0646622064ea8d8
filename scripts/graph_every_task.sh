#!/usr/bin/env bash
# The agent graph on every Tier 2 and Tier 3 task beside the expert, on the same seeds (docs/benchmark.md,
# "The graph on every task"). Each command writes DIR/results.json and DIR/table.md and resumes when rerun.
# Usage: scripts/graph_every_task.sh [OUT_ROOT] (default figures/graph-every-task-SEED); SEED (default 2500000, the
# report range of docs/benchmark.md; development used 1300000-1300003 and 1400000-1400019), EPISODES
# (default 20), WORKERS (1).
# Then: .venv/bin/python scripts/graph_every_task.py OUT_ROOT  (the side-by-side table)
set -euo pipefail
cd "$(dirname "$0")/.."
SEED=${SEED:-2500000}
OUT=${1:-figures/graph-every-task-$SEED}
MALLVI=".venv/bin/python -m mallvi.cli"
EP=${EPISODES:-20}
W=${WORKERS:-1}
COMMON=(--tasks all --episodes "$EP" --seed-start "$SEED" --no-images --workers "$W" --quiet)

for tier in planning fine; do
  # the privileged ceiling, and the graph (rules backend) with simulator perception (privileged: perception is
  # not the limit), both fault-free, on the same seeds
  $MALLVI bench --tier "$tier" --agent expert "${COMMON[@]}" --out "$OUT/expert-$tier"
  $MALLVI bench --tier "$tier" --agent mallvi --perception sim "${COMMON[@]}" --out "$OUT/graph-sim-$tier"
  # the graph with colour and depth perception (what a rig would see), same seeds
  $MALLVI bench --tier "$tier" --agent mallvi --perception color "${COMMON[@]}" --out "$OUT/graph-color-$tier"
  # the graph under medium faults (slips, misses, drops; simulator perception), same seeds
  $MALLVI bench --tier "$tier" --agent mallvi --perception sim --contingency medium "${COMMON[@]}" \
    --out "$OUT/graph-sim-medium-$tier"
done
