#!/usr/bin/env bash
# ST-BiBench figures for docs/benchmark.md. Each command writes DIR/results.json and DIR/table.md;
# rerunning a command resumes where it stopped. Usage: scripts/bench_figures.sh [OUT_ROOT] (default bench_figures).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-bench_figures}
MALLVI=".venv/bin/python -m mallvi.cli"
EP=${EPISODES:-20}
W=${WORKERS:-2}

# 1. The expert (scripted, privileged, same skill API) on every Tier 2 and Tier 3 task: solvable? env-error rate.
$MALLVI bench --tier planning --tasks all --episodes "$EP" --agent expert --no-images --workers "$W" --quiet --out "$OUT/expert_planning"
$MALLVI bench --tier fine --tasks all --episodes "$EP" --agent expert --no-images --workers "$W" --quiet --out "$OUT/expert_fine"

# 2. mallvi (the graph, rules backend, colour perception) on Tier 1 and on the Tier 2 tasks it covers (1-seed
#    survey of all 14: the others are refused (objects colour perception cannot name) or fail; docs/benchmark.md).
$MALLVI bench --tier grounding --tasks all --episodes "$EP" --agent mallvi --backend rules --no-images --workers "$W" --quiet --out "$OUT/mallvi_grounding"
$MALLVI bench --tier planning --tasks stack_blocks_three,blocks_ranking_rgb,blocks_ranking_size,handover_block --episodes "$EP" --agent mallvi --backend rules --no-images --workers "$W" --quiet --out "$OUT/mallvi_planning"

# 3. Throughput: episodes per minute with 1 and 2 workers (results.json: run.episodes_per_minute).
$MALLVI bench --tier planning --tasks place_burger_fries --episodes 10 --agent expert --no-images --workers 1 --quiet --out "$OUT/throughput_w1"
$MALLVI bench --tier planning --tasks place_burger_fries --episodes 10 --agent expert --no-images --workers 2 --quiet --out "$OUT/throughput_w2"
$MALLVI bench --tier grounding --tasks grounding_sparse --episodes 20 --agent mallvi --no-images --workers 1 --quiet --out "$OUT/throughput_g1"
$MALLVI bench --tier grounding --tasks grounding_sparse --episodes 20 --agent mallvi --no-images --workers 2 --quiet --out "$OUT/throughput_g2"

for d in "$OUT"/*/; do
  .venv/bin/python - "$d" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "results.json"))
rates = {t: (v.get("score") if v.get("score") is not None else 100 * v["success_rate"]) for t, v in r["tasks"].items()}
print(sys.argv[1], "avg", None if r["tier_average"] is None else round(r["tier_average"], 1),
      "ep/min", r["run"]["episodes_per_minute"] and round(r["run"]["episodes_per_minute"], 1))
for t, v in rates.items():
    print(f"  {t}: {v:.1f}")
PY
done
