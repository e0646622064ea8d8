"""`mallvi viz`: bad input exits 2 with a clear message; a good folder is served locally, without debug mode."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from mallvi.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_missing_folder_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["viz", str(tmp_path / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_a_bad_port_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["viz", str(FIXTURES), "--port", "70000"]) == 2
    assert "port must be 1..65535" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["viz", str(FIXTURES), "--port", "eighty"])
    assert exc.value.code == 2


def test_a_busy_port_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["viz", str(FIXTURES), "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_viz_serves_the_fixture_on_loopback_without_debug_or_external_assets() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mallvi.cli", "viz", str(FIXTURES), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while not any("Running on" in line for line in lines):
            assert proc.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "".join(lines)
            time.sleep(0.1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as resp:
            html = resp.read().decode()
        assert "<title>mallvi traces</title>" in html
        sources = re.findall(r'(?:src|href)="([^"]+)"', html)
        assert sources and all(s.startswith("/") for s in sources), sources
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_dash-layout", timeout=30) as resp:
            assert b'"tick"' in resp.read()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        reader.join(timeout=5)
    out = "".join(lines)
    assert "7 run(s), 2 benchmark folder(s)" in out
    assert "Debug mode: off" in out
    assert f"Running on http://127.0.0.1:{port}" in out
