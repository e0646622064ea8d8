"""``mallvi bench`` checks what it depends on before anything is written: the model endpoint (it answers; each
agent that reads images gets a model that sees them) and the Ray cluster (a well-formed address that answers).
Through the real ChatOpenAI client against the local OpenAI-compatible test server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.preflight import check_endpoint, ray_endpoint
from mallvi.cli import main
from tests.fixtures.graph_openai_server import FakeOpenAIServer
from tests.fixtures.local_llm_server import free_port

BENCH = ["bench", "--tier", "planning", "--tasks", "place_burger_fries", "--episodes", "1", "--quiet", "--no-images"]


def test_an_endpoint_that_does_not_answer_exits_3_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    t0 = time.monotonic()
    code = main([*BENCH, "--backend", "llm", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "did not answer" in err and "check --base-url" in err and "Traceback" not in err
    assert not out.exists()  # no run.json, no episodes.jsonl: nothing ran
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize(("agent", "named", "flags"), [
    ("mallvi", "Descriptor and Reflector", "--agent-backend descriptor=rules --agent-backend reflector=rules"),
    ("mallvi-no-reflector", "Descriptor", "--agent-backend descriptor=rules"),
])
def test_a_text_only_vision_model_is_refused_with_the_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, named: str, flags: str) -> None:
    out = tmp_path / "o"
    with FakeOpenAIServer() as srv:
        srv.script.vision = False  # a text-only model: it answers the colour question without seeing the image
        code = main([*BENCH, "--agent", agent, "--backend", "llm", "--base-url", srv.base_url,
                     "--llm-model", "text-model", "--vlm-model", "text-model", "--out", str(out)])
        asked = list(srv.script.requests)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "'text-model'" in err and "ignores images" in err and f"serve the {named}" in err and flags in err
    assert not out.exists() and asked == []  # refused before the first episode: no agent was asked anything


def test_the_graph_with_a_text_only_model_and_rules_for_the_image_readers_is_accepted(tmp_path: Path) -> None:
    with FakeOpenAIServer() as srv:
        srv.script.vision = False
        cfg = BenchConfig(tier="planning", tasks=("place_burger_fries",), episodes=1, backend="llm",
                          agent_backends={"descriptor": "rules", "reflector": "rules"},
                          llm={"base_url": srv.base_url, "model": "text-model", "vlm_model": "text-model"})
        check = check_endpoint(cfg)
        probes = list(srv.script.probes)
    assert check is not None and check.models_listed == ["text-model", "vision-model"]
    assert check.vision == {} and probes == []  # no agent reads images, so no model is shown one
    assert cfg.model_use() == {a: "text-model" for a in ("decomposer", "perceptor", "grounder", "thinker")}


def test_the_single_agent_with_a_text_only_model_is_refused_and_told_what_else_works(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    with FakeOpenAIServer() as srv:
        srv.script.vision = False
        code = main([*BENCH, "--agent", "single", "--base-url", srv.base_url, "--vlm-model", "text-model",
                     "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "serve the single agent" in err and "--vlm-model" in err
    assert "--agent mallvi --backend llm --agent-backend descriptor=rules --agent-backend reflector=rules" in err
    assert not out.exists()


def test_a_vision_model_passes_and_its_verdict_is_kept() -> None:
    with FakeOpenAIServer() as srv:
        cfg = BenchConfig(tier="grounding", tasks=("grounding_sparse",), episodes=1, backend="llm",
                          llm={"base_url": srv.base_url, "vlm_model": "vision-model"})
        check = check_endpoint(cfg)
    assert check is not None and check.vision == {"vision-model": "sees"}
    assert check.endpoint == f"127.0.0.1:{srv.httpd.server_address[1]}"


def test_a_run_without_a_model_asks_no_endpoint() -> None:
    cfg = BenchConfig(tier="planning", tasks=("place_burger_fries",), episodes=1, agent="expert",
                      llm={"base_url": f"http://127.0.0.1:{free_port()}/v1"})
    assert cfg.model_use() == {} and check_endpoint(cfg) is None


@pytest.mark.parametrize("address", ["head node", "ray://", "ray://head:99999", "http://head:10001", "head:port"])
def test_a_malformed_ray_address_is_bad_input_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str) -> None:
    out = tmp_path / "o"
    assert main([*BENCH, "--agent", "expert", "--ray-address", address, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--ray-address must be ray://HOST:PORT" in err and "Traceback" not in err
    assert not out.exists()


def test_ray_addresses_name_their_host_and_port() -> None:
    assert ray_endpoint("ray://head.local") == ("head.local", 10001)
    assert ray_endpoint("ray://10.0.0.2:20001") == ("10.0.0.2", 20001)
    assert ray_endpoint("127.0.0.1:6380") == ("127.0.0.1", 6380)
    assert ray_endpoint("[::1]:6379") == ("::1", 6379)
    assert ray_endpoint("auto") is None


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_unreachable_ray_cluster_exits_3_at_once_and_writes_nothing(tmp_path: Path, scheme: str) -> None:
    pytest.importorskip("ray")
    out = tmp_path / "o"
    address = f"{scheme}127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "mallvi.cli", *BENCH, "--agent", "expert", "--ray-address", address,
                        "--out", str(out)], capture_output=True, text=True, timeout=90, env=env)
    assert r.returncode == 3, r.stderr[-2000:]
    assert f"the Ray cluster at {address} cannot be reached" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
    assert time.monotonic() - t0 < 60
