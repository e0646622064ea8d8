"""One deadline per question: an endpoint that answers 200 and then trickles its response a byte a second (or
trickles even its status line) cannot keep a question past 3 x --llm-timeout, and Ctrl-C ends a run promptly with
exit code 130 while a model request is in flight. The endpoint is a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mallvi.cli import main
from mallvi.cli.common import INTERRUPT_GRACE_S
from mallvi.config import LlmConfig
from mallvi.graph.agent_errors import AgentError
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.llm.agents import FocusAnswer
from mallvi.graph.backends.llm.client import LlmClient, make_chat_model
from mallvi.graph.backends.llm.decoding import forget_probes

REPO = Path(__file__).resolve().parents[2]
#: scheduling slack on a shared 2-core machine, on top of the bound itself
SLACK_S = 1.5


class TricklingServer:
    """Accepts HTTP requests and answers one byte a second, for ever: after a 200 with chunked headers
    (``mode="body"``) or from the first byte of the status line on (``mode="headers"``)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                self.requests += 1
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                if self.mode == "body":
                    conn.sendall(head)
                    drip = [b"1\r\n \r\n"] * 100_000
                else:
                    drip = [bytes([b]) for b in head]
                for piece in drip:
                    if self._stop.is_set():
                        return
                    conn.sendall(piece)
                    time.sleep(1.0)
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        self._sock.close()


@pytest.fixture(params=["body", "headers"])
def trickling(request: pytest.FixtureRequest) -> Iterator[TricklingServer]:
    srv = TricklingServer(request.param)
    yield srv
    srv.close()


def test_a_question_to_a_trickling_endpoint_ends_at_its_deadline(trickling: TricklingServer) -> None:
    forget_probes()
    cfg = LlmConfig(base_url=trickling.base_url, llm_model="m", vlm_model="m", timeout_s=1.0, backoff_s=0.2)
    client = LlmClient(make_chat_model(cfg, "m"), "m", cfg)
    log = CallLog()
    t0 = time.monotonic()
    with pytest.raises(AgentError, match=r"within the 3 s allowed per question"):
        client.ask("perceptor", "You are the Perceptor.", "Which objects?", FocusAnswer, log)
    elapsed = time.monotonic() - t0
    assert elapsed < cfg.question_bound_s + SLACK_S, elapsed
    assert trickling.requests >= 2  # the probe and the question's own tries were all cut off
    assert log.records and all(r.latency_s < cfg.timeout_s + SLACK_S for r in log.records)
    assert all(not r.ok and "Timeout" in (r.error or "") for r in log.records)


def test_a_run_against_a_trickling_endpoint_ends_within_the_bound_with_exit_3(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forget_probes()
    srv = TricklingServer("body")
    try:
        code = main(["run", "stack the green block on the red block", "--task", "stack_blocks_two", "--seed", "0",
                     "--backend", "llm", "--base-url", srv.base_url, "--llm-model", "m", "--vlm-model", "v",
                     "--llm-timeout", "1", "--trace-dir", str(tmp_path / "t"), "--json", "--quiet"])
    finally:
        srv.close()
    out, err = capsys.readouterr()
    assert code == 3, err
    assert "the model endpoint failed" in err and "within the 3 s allowed per question" in err
    result = json.loads(out)
    assert result["status"] == "refused" and result["refusal_cause"] == "model"
    assert result["graph_s"] < 3 * 1.0 + SLACK_S  # the graph's questions ran side by side, each within 3 s
    calls = [json.loads(line) for line in (tmp_path / "t" / "events.jsonl").read_text().splitlines()]
    latencies = [e["latency_s"] for e in calls if e["kind"] == "llm_call"]
    assert latencies and max(latencies) < 1.0 + SLACK_S


def _as_from_a_terminal() -> None:
    """The child starts with Ctrl-C as a terminal delivers it: an ignored or blocked SIGINT is inherited across
    exec, and a test runner (or something it ran earlier in the same process) may leave one behind."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_ctrl_c_ends_a_run_promptly_with_exit_130_while_a_request_is_in_flight(tmp_path: Path) -> None:
    srv = TricklingServer("body")
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "sk-test-0000-Zq8xW3vN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mallvi.cli", "run", "stack the green block on the red block", "--task",
         "stack_blocks_two", "--backend", "llm", "--base-url", srv.base_url, "--llm-model", "m", "--vlm-model", "v",
         "--llm-timeout", "60", "--trace-dir", str(tmp_path / "t"), "--quiet"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_as_from_a_terminal)
    try:
        deadline = time.monotonic() + 180
        while srv.requests < 1 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert srv.requests >= 1 and proc.poll() is None, "the run never reached the model"
        time.sleep(1.0)  # well inside a request that would last a minute
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        _out, err = proc.communicate(timeout=INTERRUPT_GRACE_S + 10)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        srv.close()
    assert proc.returncode == 130, err[-2000:]
    assert elapsed < INTERRUPT_GRACE_S, elapsed  # the request was stopped: no need of the last-resort exit
    assert "mallvi: interrupted" in err and "Traceback" not in err
    for line in (tmp_path / "t" / "events.jsonl").read_text().splitlines():
        json.loads(line)  # the trace stays readable
