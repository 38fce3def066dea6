"""Settings: built once at start-up from config.yaml + environment, then passed down.

Nothing below this module reads os.environ; `load_settings()` is the one place that does.
Sections owned by other capabilities live in their own config_* modules to keep this small.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kenning.core.config_observability import ObservabilitySettings
from kenning.core.config_observer import ObserverSettings
from kenning.core.config_pipeline import REMOVED_KEYS, PipelineSettings
from kenning.core.config_predictor import PredictorSettings
from kenning.core.config_sessions import SessionSettings
from kenning.core.config_store import StoreSettings
from kenning.core.config_team import TeamSettings
from kenning.core.errors import ConfigError

DEFAULT_PORT = 3850


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmbeddingSettings(_Strict):
    provider: Literal["bundled", "ollama", "openai"] = "bundled"
    model: str | None = Field(None, description="Model name for ollama/openai; ignored for bundled.")
    url: str | None = Field(None, description="Base URL for ollama (http://localhost:11434) or openai-compatible.")
    api_key_env: str | None = Field(None, description="Name of the env var holding the API key.")
    batch_size: int = Field(64, ge=1, le=2048)
    timeout_s: float = Field(30.0, gt=0, le=600)
    query_cache_size: int = Field(1024, ge=0, le=1_000_000)
    runtime: Literal["onnx", "torch"] = Field(
        "onnx", description="Bundled model only: 'onnx' runs the int8 ONNX export built by `make setup`"
        " (ONNX Runtime + tokenizers, no PyTorch in the daemon); 'torch' runs sentence-transformers."
        " The two give slightly different vectors, so switching re-embeds the store in the background.",
    )
    onnx_path: str | None = Field(
        None, description="Bundled model, runtime onnx: the exported model file; default"
        " <python prefix>/share/kenning/all-MiniLM-L6-v2-int8.onnx (written by `make setup`).",
    )
    quantize: Literal["none", "int8"] = Field(
        "int8", description="Bundled model, runtime torch: int8 dynamic quantisation (≈ 2.2x faster, equal hybrid"
        " recall); 'none' keeps float32. The onnx runtime is int8 only. Changing it re-embeds the store in the background.",
    )
    torch_threads: int = Field(
        1, ge=0, le=256,
        description="CPU threads for the bundled model (either runtime); 1 keeps query latency flat when the"
        " daemon's threads and workers share the cores (0 = the runtime's default).",
    )
    bulk_threads: int = Field(
        0, ge=0, le=256, description="CPU threads for batches of 64+ texts (imports, re-embedding); 0 = all cores.",
    )


class LLMSettings(_Strict):
    provider: Literal["offline", "ollama", "openai", "claude-cli", "none"] = "offline"
    model: str | None = None
    url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = Field(60.0, gt=0, le=3600)
    daily_token_budget: int = Field(
        200_000, ge=0,
        description="Prompt + output tokens per UTC day for real LLM providers; over it jobs wait. "
        "0 disables LLM calls entirely. The offline provider spends none.",
    )
    max_output_tokens: int = Field(1024, ge=16, le=65_536, description="num_predict / max_tokens per call.")
    claude_binary: str = Field("claude", description="The Claude Code CLI used by provider claude-cli.")


class TopicDiversity(_Strict):
    """Topic-diversity decay (retrieval.diversity): one definition, read by session start and by a recall
    with a character budget (`recall.topic_diversity`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float = Field(0.85, ge=0.0, le=1.0, description="Cosine similarity above which two memories overlap (seed: 0.85).")
    decay: float = Field(0.5, ge=0.0, le=1.0, description="Topic-diversity decay per overlap (0.5).")
    floor: float = Field(0.1, ge=0.0, le=1.0, description="Topic-diversity floor (0.1).")


class RecallSettings(_Strict):
    default_limit: int = Field(
        10, ge=1, le=200, description="Memories a recall returns when the request names no limit (API, CLI, MCP).",
    )
    candidate_pool: int = Field(100, ge=10, le=2000, description="Candidates each recall leg fetches before fusion.")
    rrf_k: int = Field(5, ge=1, le=1000, description="RRF constant; small k trusts each leg's top ranks (LoCoMo R@10 flat for k 3-10, falls from 20).")
    max_content_chars: int = Field(100_000, ge=100, le=5_000_000)
    session_context: bool = Field(
        True, description="Memories recorded next to a strong hit in the same session share its score.",
    )
    topic_diversity: TopicDiversity = Field(
        default_factory=TopicDiversity,
        description="How session start (and a recall with a character budget) spreads what it picks across"
        " topics (was sessions.diversity_threshold / _decay / _floor, still read there).",
    )


class Settings(_Strict):
    home: Path
    host: str = "127.0.0.1"
    port: int = Field(DEFAULT_PORT, ge=1, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    auth_token: str | None = Field(None, description="Bearer token; required when host is not loopback.")
    secrets: Literal["redact", "reject", "allow"] = Field(
        "redact", description="Secrets (API keys, tokens, private keys, URL passwords) in anything stored:"
        " redact → [REDACTED:kind]; reject → the write fails naming the kind; allow → stored as given."
        " See kenning.core.secrets.",
    )
    store: StoreSettings = StoreSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    llm: LLMSettings = LLMSettings()
    recall: RecallSettings = RecallSettings()
    pipeline: PipelineSettings = PipelineSettings()
    sessions: SessionSettings = SessionSettings()
    predictor: PredictorSettings = PredictorSettings()
    observability: ObservabilitySettings = ObservabilitySettings()
    observer: ObserverSettings = ObserverSettings()
    team: TeamSettings = TeamSettings()

    @property
    def db_path(self) -> Path:
        return self.home / "memories.db"

    @property
    def config_path(self) -> Path:
        return self.home / "config.yaml"

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def pid_path(self) -> Path:
        return self.home / "daemon.pid"

    @property
    def predictor_dir(self) -> Path:
        return self.home / "predictor"

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"


def _snake(key: object) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", str(key)).lower()  # camelCase aliases too


def refuse_removed_keys(data: Mapping[str, object], config_path: Path) -> None:
    """A key removed because it did nothing is an error naming it, never silently accepted."""
    for dotted, why in REMOVED_KEYS.items():
        node: Any = data
        for part in dotted.split("."):
            found = [k for k in node if _snake(k) == part] if isinstance(node, dict) else []
            if not found:
                break
            node = node[found[0]]
        else:
            raise ConfigError(f"{config_path}: unknown key {dotted}: removed in kenning 0.1.0 (issue 13): {why};"
                              " delete it")


# A setting that moved keeps working at its old place; a value at the new place wins.
MOVED_KEYS: dict[str, str] = {
    "sessions.diversity_threshold": "recall.topic_diversity.threshold",
    "sessions.diversity_decay": "recall.topic_diversity.decay",
    "sessions.diversity_floor": "recall.topic_diversity.floor",
}


def read_moved_keys(data: dict[str, object]) -> None:
    """Move each MOVED_KEYS value found in `data` (snake or camelCase) to its new place."""
    for old, new in MOVED_KEYS.items():
        node: Any = data
        *parents, leaf = old.split(".")
        for part in parents:
            found = [k for k in node if _snake(k) == part] if isinstance(node, dict) else []
            node = node[found[0]] if found else None
        found = [k for k in node if _snake(k) == leaf] if isinstance(node, dict) else []
        if not found:
            continue
        value = node.pop(found[0])
        target: object = data
        *parents, leaf = new.split(".")
        for part in parents:
            target = target.setdefault(part, {}) if isinstance(target, dict) else None
        if isinstance(target, dict):
            target.setdefault(leaf, value)


# A setting that is no longer read is dropped with a one-line notice, so a config that still sets it loads.
RETIRED_KEYS: dict[str, str] = {
    "sessions.ranking.prompt_relative_floor": "the prompt bar (sessions.ranking.prompt_min_probability) decides",
    "sessions.ranking.prompt_similarity_margin": "the prompt bar (sessions.ranking.prompt_min_probability) decides",
    "sessions.prompt_min_similarity": "the prompt bar (sessions.ranking.prompt_min_probability) decides",
}


def drop_retired_keys(data: dict[str, object], config_path: Path) -> list[str]:
    """Remove each RETIRED_KEYS entry found in `data` (snake or camelCase); one notice line per key dropped."""
    notices: list[str] = []
    for dotted, why in RETIRED_KEYS.items():
        node: Any = data
        *parents, leaf = dotted.split(".")
        for part in parents:
            found = [k for k in node if _snake(k) == part] if isinstance(node, dict) else []
            node = node[found[0]] if found else None
        for key in [k for k in node if _snake(k) == leaf] if isinstance(node, dict) else []:
            node.pop(key)
            notices.append(f"{config_path}: {dotted} is no longer read (issue 32: {why}); ignored, delete the line")
    return notices


def default_home(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("KENNING_HOME") or Path.home() / ".kenning").expanduser()


def load_settings(environ: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Read `$KENNING_HOME/config.yaml`, apply env vars and overrides, validate.

    Raises ConfigError whose message says which key is wrong and where.
    """
    env = dict(os.environ if environ is None else environ)
    given = overrides.pop("home", None)  # a str or a Path
    home = Path(str(given)) if given else default_home(env)
    data: dict[str, Any] = {}
    config_path = home / "config.yaml"
    if config_path.exists():
        try:
            loaded = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{config_path}: not valid YAML ({exc}); fix or delete the file") from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{config_path}: top level must be a mapping of settings")
        data = loaded or {}
    if env.get("KENNING_PORT"):
        try:
            data["port"] = int(env["KENNING_PORT"])
        except ValueError as exc:
            raise ConfigError(f"KENNING_PORT={env['KENNING_PORT']!r} is not a port number") from exc
    if env.get("KENNING_HOST"):
        data["host"] = env["KENNING_HOST"]
    if env.get("KENNING_TOKEN"):
        data["auth_token"] = env["KENNING_TOKEN"]
    if env.get("KENNING_TEAM_TOKEN"):
        given = data.get("team")
        team = given if isinstance(given, dict) else {}
        data["team"] = {**team, "token": env["KENNING_TEAM_TOKEN"]}
    data.update(overrides)
    refuse_removed_keys(data, config_path)
    read_moved_keys(data)
    for notice in drop_retired_keys(data, config_path):
        logging.getLogger("kenning.config").warning(notice)
    data["home"] = home
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid settings in {config_path}: {problems}") from exc
    if settings.host not in ("127.0.0.1", "localhost", "::1") and not settings.auth_token:
        raise ConfigError(
            f"host {settings.host!r} is not loopback: set auth_token in {config_path} or KENNING_TOKEN"
        )
    return settings
