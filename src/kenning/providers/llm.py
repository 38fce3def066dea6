"""LLM providers behind one base class, `BaseLLMProvider`: `generate(prompt, opts) -> str`, `available() -> bool`,
`blocked_reason() -> str | None`.

memory-pipeline-v2 "Provider Abstraction" + SPEC S3. Built-ins:

- `OfflineProvider` (providers/offline.py, the default): deterministic rules, no network.
- `OllamaProvider`: POST {url}/api/generate with stream:false; available = GET /api/tags (3 s).
- `OpenAIProvider`: any OpenAI-compatible POST {url}/chat/completions; available = GET /models.
- `ClaudeCliProvider`: `claude -p <prompt> --model <m> --no-session-persistence --output-format text`.
- `NullProvider` (`llm.provider: none`): never available, every call raises ProviderError.

A provider implements one method, `complete(prompt, opts) -> Generation` (text + token counts);
the base class gives the rest (`generate()`, `available()` true, `blocked_reason()` none). The
providers are built by name in providers/registry.py. Every failure (timeout, HTTP status,
unreachable, bad body, non-zero exit) raises `ProviderError` whose message names the provider,
the URL or command and the cause — never swallowed. `clean_output()` strips `<think>` blocks and
Markdown code fences (parsers call it). Budgets wrap providers: see providers/budget.py.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass

import httpx

from kenning.core.errors import ProviderError

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_MODEL = "qwen3:4b"
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_CLAUDE_MODEL = "haiku"
AVAILABLE_TIMEOUT_S = 3.0
ERROR_BODY_CHARS = 200

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"^\s*<think>.*?(?=[\[{])", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


@dataclass
class GenerateOptions:
    """Per-call options; None means the provider's configured default."""

    timeout_s: float | None = None
    max_tokens: int | None = None
    temperature: float = 0.0
    json_mode: bool = False
    task: str = ""  # which pipeline stage is calling (for logs and usage), e.g. "extraction"


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    output_tokens: int
    model: str = ""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens


def estimate_tokens(text: str) -> int:
    """Rough token count (≈ 4 characters per token) when the provider reports none."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


def clean_output(text: str) -> str:
    """Strip <think>…</think> blocks (also an unclosed leading one) and Markdown code fences."""
    text = _THINK_BLOCK.sub("", text)
    if re.match(r"^\s*<think>", text, re.IGNORECASE):
        text = _THINK_OPEN.sub("", text)
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    return text.strip()


class BaseLLMProvider(ABC):
    """Subclasses set `name`/`model` and implement `complete()`; the other methods have defaults."""

    name = "base"
    counts_tokens = True  # spends the daily token budget (the offline provider does not)

    def __init__(self, model: str, timeout_s: float = 60.0, max_tokens: int = 1024) -> None:
        self.model = model
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens

    @abstractmethod
    def complete(self, prompt: str, opts: GenerateOptions) -> Generation:
        """One generation; every failure raises ProviderError."""

    def generate(self, prompt: str, opts: GenerateOptions | None = None) -> str:
        return self.complete(prompt, opts or GenerateOptions()).text

    def available(self) -> bool:
        return True

    def blocked_reason(self) -> str | None:
        """Why a worker using this provider should not lease a job now (a spent token budget);
        None when it may."""
        return None

    def describe(self) -> dict[str, object]:
        return {"provider": self.name, "model": self.model, "timeout_s": self.timeout_s}

    # -- shared HTTP plumbing --------------------------------------------------
    def _timeout(self, opts: GenerateOptions) -> float:
        return opts.timeout_s or self.timeout_s

    def _post_json(self, url: str, body: dict, opts: GenerateOptions, headers: dict | None = None) -> dict:
        timeout = self._timeout(opts)
        try:
            response = httpx.post(url, json=body, headers=headers, timeout=timeout)
        except httpx.TimeoutException as exc:
            raise ProviderError(f"{self.name}: request to {url} timed out after {timeout:g}s "
                                f"(model {self.model})") from exc
        except httpx.HTTPError as exc:
            raise ProviderError(f"{self.name}: cannot reach {url}: {exc}") from exc
        if response.status_code >= 400:
            raise ProviderError(
                f"{self.name}: HTTP {response.status_code} from {url}: {response.text[:ERROR_BODY_CHARS]}"
            )
        try:
            data = response.json()
        except ValueError as exc:
            raise ProviderError(
                f"{self.name}: {url} answered non-JSON: {response.text[:ERROR_BODY_CHARS]!r}"
            ) from exc
        if not isinstance(data, dict):
            raise ProviderError(f"{self.name}: {url} answered {type(data).__name__}, expected an object")
        return data

    def _get_ok(self, url: str, headers: dict | None = None) -> bool:
        try:
            return httpx.get(url, headers=headers, timeout=AVAILABLE_TIMEOUT_S).status_code < 400
        except httpx.HTTPError:
            return False


class OllamaProvider(BaseLLMProvider):
    name = "ollama"

    def __init__(self, url: str = DEFAULT_OLLAMA_URL, model: str = DEFAULT_OLLAMA_MODEL,
                 timeout_s: float = 60.0, max_tokens: int = 1024) -> None:
        super().__init__(model, timeout_s, max_tokens)
        self.url = url.rstrip("/")

    def complete(self, prompt: str, opts: GenerateOptions) -> Generation:
        body: dict = {
            "model": self.model, "prompt": prompt, "stream": False,
            "options": {"temperature": opts.temperature, "num_predict": opts.max_tokens or self.max_tokens},
        }
        if opts.json_mode:
            body["format"] = "json"
        data = self._post_json(f"{self.url}/api/generate", body, opts)
        text = data.get("response")
        if not isinstance(text, str):
            raise ProviderError(f"ollama: {self.url}/api/generate answered without a 'response' string: "
                                f"{str(data)[:ERROR_BODY_CHARS]}")
        return Generation(
            text, int(data.get("prompt_eval_count") or estimate_tokens(prompt)),
            int(data.get("eval_count") or estimate_tokens(text)), self.model,
        )

    def available(self) -> bool:
        return self._get_ok(f"{self.url}/api/tags")

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "url": self.url}


class OpenAIProvider(BaseLLMProvider):
    name = "openai"

    def __init__(self, url: str = DEFAULT_OPENAI_URL, model: str = "gpt-4o-mini",
                 api_key: str | None = None, timeout_s: float = 60.0, max_tokens: int = 1024) -> None:
        super().__init__(model, timeout_s, max_tokens)
        self.url = url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def complete(self, prompt: str, opts: GenerateOptions) -> Generation:
        body: dict = {
            "model": self.model, "messages": [{"role": "user", "content": prompt}],
            "temperature": opts.temperature, "max_tokens": opts.max_tokens or self.max_tokens,
            "stream": False,
        }
        if opts.json_mode:
            body["response_format"] = {"type": "json_object"}
        url = f"{self.url}/chat/completions"
        data = self._post_json(url, body, opts, self._headers)
        try:
            text = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"openai: {url} answered without choices[0].message.content: "
                                f"{str(data)[:ERROR_BODY_CHARS]}") from exc
        if not isinstance(text, str):
            raise ProviderError(f"openai: {url} answered a non-string message content")
        usage = data.get("usage") or {}
        return Generation(
            text, int(usage.get("prompt_tokens") or estimate_tokens(prompt)),
            int(usage.get("completion_tokens") or estimate_tokens(text)), str(data.get("model") or self.model),
        )

    def available(self) -> bool:
        return self._get_ok(f"{self.url}/models", self._headers)

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "url": self.url}


class ClaudeCliProvider(BaseLLMProvider):
    name = "claude-cli"

    def __init__(self, model: str = DEFAULT_CLAUDE_MODEL, binary: str = "claude",
                 timeout_s: float = 60.0, max_tokens: int = 1024) -> None:
        super().__init__(model, timeout_s, max_tokens)
        self.binary = binary

    def command(self, prompt: str) -> list[str]:
        return [self.binary, "-p", prompt, "--model", self.model, "--no-session-persistence",
                "--output-format", "text"]

    def complete(self, prompt: str, opts: GenerateOptions) -> Generation:
        timeout = self._timeout(opts)
        try:
            done = subprocess.run(self.command(prompt), capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except FileNotFoundError as exc:
            raise ProviderError(f"claude-cli: {self.binary!r} not found on PATH") from exc
        except subprocess.TimeoutExpired as exc:
            raise ProviderError(f"claude-cli: `{self.binary} -p` timed out after {timeout:g}s") from exc
        if done.returncode != 0:
            raise ProviderError(f"claude-cli: `{self.binary} -p` exited {done.returncode}: "
                                f"{(done.stderr or done.stdout)[:ERROR_BODY_CHARS]}")
        text = done.stdout
        return Generation(text, estimate_tokens(prompt), estimate_tokens(text), self.model)

    def available(self) -> bool:
        return shutil.which(self.binary) is not None


class NullProvider(BaseLLMProvider):
    """`llm.provider: none` — LLM use switched off; stages that need one report why."""

    name = "none"
    counts_tokens = False

    def __init__(self) -> None:
        super().__init__("none")

    def complete(self, prompt: str, opts: GenerateOptions) -> Generation:
        raise ProviderError("LLM disabled (llm.provider: none); set llm.provider in config.yaml")

    def available(self) -> bool:
        return False

