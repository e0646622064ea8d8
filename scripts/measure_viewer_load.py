"""How long the trace viewer takes to list N runs, and how much memory it holds (a figures script).

    .venv/bin/python scripts/measure_viewer_load.py [--runs 200] [--trace tests/fixtures/traces/real_stack_blocks_two]

Copies one recorded trace N times into a temporary folder, then times the first full read of every run
(what the run list does on start), a refresh with nothing new (what every poll does), and the change check.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

from mallvi.logviz.run_index import RunCatalog


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--trace", type=Path, default=Path("tests/fixtures/traces/real_stack_blocks_two"))
    args = parser.parse_args()
    size_kb = (args.trace / "events.jsonl").stat().st_size / 1024
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            shutil.copytree(args.trace, Path(tmp) / f"run{i:05d}")
        t = time.perf_counter()
        catalog = RunCatalog(tmp)
        runs = catalog.runs()
        first_s = time.perf_counter() - t
        t = time.perf_counter()
        catalog.runs()
        refresh_s = time.perf_counter() - t
        t = time.perf_counter()
        catalog.signature()
        signature_s = time.perf_counter() - t
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(runs)} runs of {size_kb:.0f} KB events.jsonl each")
    print(
        f"first read of all runs: {first_s:.2f} s; refresh with no new events: {1000 * refresh_s:.1f} ms; "
        f"change check: {1000 * signature_s:.1f} ms; peak RSS {rss_mb:.0f} MB"
    )


if __name__ == "__main__":
    main()
