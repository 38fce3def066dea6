"""LLM providers against a real local HTTP server (Ollama and OpenAI protocols) and the offline rules."""

from __future__ import annotations

import json
import sys

import pytest
from pipeline_helpers import Reply

from bench.harnesses.daemon import free_port

from kenning.core.config import LLMSettings
from kenning.core.errors import ConfigError, ProviderError
from kenning.providers.llm import (
    ClaudeCliProvider, GenerateOptions, NullProvider, OllamaProvider, OpenAIProvider, clean_output,
)
from kenning.providers.offline import OfflineProvider, render_task_block
from kenning.providers.registry import build_llm_provider


def test_ollama_generate_strips_think_and_fences(fake_llm):
    fake_llm.script = lambda task, prompt: Reply('<think>pondering {"no": 1}</think>\n```json\n{"ok": true}\n```',
                                                 prompt_tokens=11, output_tokens=7)
    provider = OllamaProvider(fake_llm.url, "fake:1b", timeout_s=5)
    generation = provider.complete("hello", GenerateOptions())
    assert (generation.prompt_tokens, generation.output_tokens) == (11, 7)
    assert json.loads(clean_output(generation.text)) == {"ok": True}
    assert provider.available() is True


def test_openai_generate_reads_choices_and_usage(fake_llm):
    fake_llm.script = lambda task, prompt: Reply('{"answer": 42}', prompt_tokens=5, output_tokens=3)
    provider = OpenAIProvider(f"{fake_llm.url}/v1", "fake-chat", api_key="k", timeout_s=5)
    generation = provider.complete("question", GenerateOptions())
    assert generation.text == '{"answer": 42}' and generation.total_tokens == 8
    assert provider.available() is True
    assert provider.generate("again") == '{"answer": 42}'


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_http_error_names_status_and_body(fake_llm, kind):
    fake_llm.script = lambda task, prompt: Reply(status=500)
    provider = (OllamaProvider(fake_llm.url, "m", timeout_s=5) if kind == "ollama"
                else OpenAIProvider(f"{fake_llm.url}/v1", "m", timeout_s=5))
    with pytest.raises(ProviderError, match="HTTP 500.*canned failure"):
        provider.generate("x")


def test_timeout_is_a_clear_provider_error(fake_llm):
    fake_llm.script = lambda task, prompt: Reply("{}", delay_s=1.5)
    provider = OllamaProvider(fake_llm.url, "fake:1b", timeout_s=0.3)
    with pytest.raises(ProviderError, match="timed out after 0.3s"):
        provider.generate("slow")


def test_unreachable_server_is_unavailable_and_errors():
    url = f"http://127.0.0.1:{free_port()}"
    provider = OllamaProvider(url, "m", timeout_s=2)
    assert provider.available() is False
    with pytest.raises(ProviderError, match="cannot reach"):
        provider.generate("x")


def test_claude_cli_runs_the_binary_and_reports_failures(tmp_path):
    script = tmp_path / "claude"
    script.write_text(f"#!{sys.executable}\nimport sys\nargs = sys.argv[1:]\n"
                      "assert args[0] == '-p' and '--no-session-persistence' in args\n"
                      "if 'fail' in args[1]:\n    sys.stderr.write('boom'); sys.exit(3)\n"
                      "print('{\"echo\": \"' + args[args.index('--model') + 1] + '\"}')\n")
    script.chmod(0o755)
    provider = ClaudeCliProvider("haiku", binary=str(script), timeout_s=20)
    assert provider.available() is True
    assert json.loads(provider.generate("hello")) == {"echo": "haiku"}
    with pytest.raises(ProviderError, match="exited 3: boom"):
        provider.generate("please fail")
    assert ClaudeCliProvider(binary=str(tmp_path / "missing")).available() is False
    with pytest.raises(ProviderError, match="not found"):
        ClaudeCliProvider(binary=str(tmp_path / "missing")).generate("x")


def test_build_provider_from_settings():
    assert isinstance(build_llm_provider(LLMSettings()), OfflineProvider)
    assert isinstance(build_llm_provider(LLMSettings(provider="none")), NullProvider)
    assert build_llm_provider(LLMSettings(provider="ollama")).model == "qwen3:4b"
    with pytest.raises(ConfigError, match="llm.model is required"):
        build_llm_provider(LLMSettings(provider="openai"))
    with pytest.raises(ProviderError, match="LLM disabled"):
        NullProvider().generate("x")


def test_offline_provider_is_deterministic_and_splits_sentences():
    provider = OfflineProvider()
    prompt = "Extract.\n" + render_task_block("extraction", {"content": (
        "We switched from MySQL to PostgreSQL for billing. The API is written in Python. Thanks!")})
    first, second = provider.generate(prompt), provider.generate(prompt)
    assert first == second
    data = json.loads(first)
    facts = [f["content"] for f in data["facts"]]
    assert facts == ["We switched from MySQL to PostgreSQL for billing.", "The API is written in Python."]
    assert data["facts"][0]["type"] == "decision"
    triples = {(e["source"], e["relationship"], e["target"]) for e in data["entities"]}
    assert ("PostgreSQL", "replaced", "MySQL") in triples
    assert ("billing", "uses", "PostgreSQL") in triples
    assert ("API", "written_in", "Python") in triples
    with pytest.raises(ProviderError, match="no rule handler"):
        provider.generate(render_task_block("unknown-task", {}))
