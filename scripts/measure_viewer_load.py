"""How fast the trace viewer shows big traces and many runs, and how much memory it holds (a figures script).

Big traces, as a user meets them (a ``mallvi viz`` process and headless Chromium):

    .venv/bin/python scripts/measure_viewer_load.py --trace-mb 1 20 50

makes a long retry-heavy run of each size (``scripts/make_trace_fixture.py --long-run``), starts ``mallvi viz`` on
it, and times in the browser: the run list shown (first paint of ``/``), the run's page with its timeline, and
one step opened by clicking the last bar drawn (a Reflector's: the failing-verdict bars come last); then reads
the viewer process's peak resident memory (VmHWM). Give
``--traces DIR ...`` to measure folders made before (e.g. to run an older viewer on the same traces with
``PYTHONPATH=OLD_TREE``); ``--timeout-s`` bounds each wait.

Many runs (the catalog only, no browser):

    .venv/bin/python scripts/measure_viewer_load.py --runs 200 [--trace tests/fixtures/traces/real_stack_blocks_two]

copies one recorded trace N times, then times the first full read of every run (what the run list does on
start), a refresh with nothing new (what every poll does), and the change check.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trace-mb", type=float, nargs="*", help="make and measure long runs of these sizes (MB)")
    parser.add_argument("--traces", type=Path, nargs="*", help="measure these trace folders (made before)")
    parser.add_argument("--timeout-s", type=float, default=600.0, help="the longest wait for one page (seconds)")
    parser.add_argument("--runs", type=int, default=None, help="catalog mode: this many copies of --trace")
    parser.add_argument("--trace", type=Path, default=ROOT / "tests/fixtures/traces/real_stack_blocks_two")
    args = parser.parse_args()
    if args.runs is not None:
        measure_catalog(args.runs, args.trace)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folders = list(args.traces or [])
        for size_mb in args.trace_mb or []:
            folder = Path(tmp) / f"long_{size_mb:g}mb"
            subprocess.run([sys.executable, str(ROOT / "scripts/make_trace_fixture.py"), "--long-run", str(folder),
                            "--size-mb", str(size_mb)], check=True, stdout=subprocess.DEVNULL)
            folders.append(folder)
        print("| events.jsonl | run list shown | run page with timeline | a step opened | viewer peak RSS |")
        print("|---|---|---|---|---|")
        for folder in folders:
            row = measure_browser(folder, args.timeout_s)
            print(f"| {row['mb']:.1f} MB | {row['list']} | {row['run']} | {row['step']} | {row['rss']} |", flush=True)


def measure_browser(folder: Path, timeout_s: float) -> dict[str, Any]:
    """Start ``mallvi viz folder``, load its pages in headless Chromium, and time them; the viewer's peak RSS."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    size_mb = (folder / "events.jsonl").stat().st_size / 1e6
    port = _free_port()
    viewer = subprocess.Popen([sys.executable, "-m", "mallvi.cli", "viz", str(folder), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ})
    out: dict[str, Any] = {"mb": size_mb, "list": "-", "run": "-", "step": "-", "rss": "-"}
    try:
        _wait_port(port, 60.0)
        url = f"http://127.0.0.1:{port}"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            timeout_ms = timeout_s * 1000
            try:
                t0 = time.perf_counter()
                page.goto(url + "/")
                page.wait_for_selector("#run-table a.run-link", timeout=timeout_ms)
                out["list"] = f"{time.perf_counter() - t0:.1f} s"
                t0 = time.perf_counter()
                page.goto(url + "/run?path=.")
                page.wait_for_selector(".js-plotly-plot .barlayer .point", timeout=timeout_ms)
                out["run"] = f"{time.perf_counter() - t0:.1f} s"
                bar = page.locator(".js-plotly-plot .barlayer .point path").last  # a Reflector bar
                bar.scroll_into_view_if_needed(timeout=timeout_ms)
                box = bar.bounding_box()
                t0 = time.perf_counter()
                if box is not None:
                    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                    page.wait_for_selector("#step-title", timeout=timeout_ms)
                    out["step"] = f"{time.perf_counter() - t0:.1f} s"
            except PlaywrightError as e:
                name = next(k for k in ("list", "run", "step") if out[k] == "-")
                out[name] = f"> {timeout_s:.0f} s" if "Timeout" in str(e) else f"error: {str(e)[:60]}"
            browser.close()
        out["rss"] = f"{_peak_rss_mb(viewer.pid):.0f} MB"
    finally:
        viewer.terminate()
        viewer.wait(timeout=30)
    return out


def measure_catalog(n_runs: int, trace: Path) -> None:
    from mallvi.logviz.run_index import RunCatalog

    size_kb = (trace / "events.jsonl").stat().st_size / 1024
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n_runs):
            shutil.copytree(trace, Path(tmp) / f"run{i:05d}")
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"the viewer did not listen on {port} within {timeout_s:.0f} s")


def _peak_rss_mb(pid: int) -> float:
    """VmHWM (peak resident set) of a live process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    main()
