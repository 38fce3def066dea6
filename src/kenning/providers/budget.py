"""The daily LLM token budget: prompt + output tokens per UTC day, persisted in llm_usage.

`BudgetedProvider` wraps any LLM provider. Before a call it refuses with `BudgetExhausted`
(a ProviderError) when today's spend plus the prompt estimate would pass the limit; after a
call it records the tokens the provider reported (or an estimate). Workers check
`TokenBudget.exhausted_reason()` before leasing, so over budget ⇒ jobs wait in the queue,
the daemon stays healthy and /api/pipeline/status says why and when the budget resets.
The offline provider spends nothing (its `counts_tokens` is False).
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import TypedDict

from kenning.core import telemetry
from kenning.core.clock import to_iso, utcnow
from kenning.core.config import Settings
from kenning.core.errors import ProviderError
from kenning.providers.llm import BaseLLMProvider, GenerateOptions, Generation, estimate_tokens
from kenning.providers.registry import build_llm_provider
from kenning.store import llm_usage
from kenning.store.backend import StoreDatabase


class BudgetStatus(TypedDict):
    """The LLM token budget today (`kenning status`, /api/diagnostics)."""

    daily_limit: int
    used_today: int
    remaining: int
    exhausted: bool
    reason: str | None
    resets_at: str
    by_provider: list[llm_usage.ModelUsage]


class BudgetExhausted(ProviderError):
    """Today's LLM token budget is spent; retry after `retry_after_s` (next UTC midnight)."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def _next_midnight(now: datetime) -> datetime:
    return datetime(now.year, now.month, now.day, tzinfo=timezone.utc) + timedelta(days=1)


class TokenBudget:
    """Tokens allowed per UTC day across all real LLM providers."""

    def __init__(self, db: StoreDatabase, daily_limit: int) -> None:
        self.db = db
        self.daily_limit = int(daily_limit)
        self._lock = threading.Lock()

    @staticmethod
    def today() -> str:
        return utcnow().strftime("%Y-%m-%d")

    def used(self) -> int:
        return llm_usage.tokens_used(self.db, self.today())

    def seconds_until_reset(self) -> float:
        now = utcnow()
        return max(1.0, (_next_midnight(now) - now).total_seconds())

    def exhausted_reason(self, estimate: int = 0) -> str | None:
        """Why no LLM call may run now (None when one may)."""
        if self.daily_limit <= 0:
            return "LLM calls disabled: llm.daily_token_budget is 0"
        used = self.used()
        if used + estimate > self.daily_limit or used >= self.daily_limit:
            resets = to_iso(_next_midnight(utcnow()))
            return (f"daily LLM token budget exhausted: {used} of {self.daily_limit} tokens used today "
                    f"(UTC); jobs wait until {resets}")
        return None

    def check(self, estimate: int, provider: str = "", model: str = "") -> None:
        reason = self.exhausted_reason(estimate)
        if reason is not None:
            llm_usage.add_usage(self.db, self.today(), provider, model, 0, 0, refused=True)
            telemetry.log_event("llm", reason, level="warning", provider=provider)
            raise BudgetExhausted(reason, self.seconds_until_reset())

    def record(self, provider: str, model: str, prompt_tokens: int, output_tokens: int) -> None:
        llm_usage.add_usage(self.db, self.today(), provider, model, prompt_tokens, output_tokens)

    def status(self) -> BudgetStatus:
        used = self.used()
        return {
            "daily_limit": self.daily_limit,
            "used_today": used,
            "remaining": max(0, self.daily_limit - used),
            "exhausted": self.exhausted_reason() is not None,
            "reason": self.exhausted_reason(),
            "resets_at": to_iso(_next_midnight(utcnow())),
            "by_provider": llm_usage.usage_for_day(self.db, self.today()),
        }


class BudgetedProvider(BaseLLMProvider):
    """Any provider, with every real LLM call checked against and charged to a TokenBudget."""

    def __init__(self, inner: BaseLLMProvider, budget: TokenBudget) -> None:
        self.inner = inner
        self.budget = budget
        self.name = inner.name
        self.model = inner.model
        self.timeout_s = inner.timeout_s
        self.max_tokens = inner.max_tokens
        self.counts_tokens = inner.counts_tokens

    def complete(self, prompt: str, opts: GenerateOptions) -> Generation:
        if not self.inner.counts_tokens:
            return self.inner.complete(prompt, opts)
        self.budget.check(estimate_tokens(prompt), self.name, self.model)
        try:
            generation = self.inner.complete(prompt, opts)
        except ProviderError:
            # a failed call may still have consumed the prompt on the server side
            self.budget.record(self.name, self.model, estimate_tokens(prompt), 0)
            raise
        self.budget.record(self.name, generation.model or self.model,
                           generation.prompt_tokens, generation.output_tokens)
        return generation

    def available(self) -> bool:
        return self.inner.available()

    def blocked_reason(self) -> str | None:
        """The budget's refusal, when the inner provider spends tokens and today's are gone."""
        if not self.inner.counts_tokens:
            return None
        return self.budget.exhausted_reason()

    def describe(self) -> dict[str, object]:
        return {**self.inner.describe(), "budgeted": self.inner.counts_tokens}


def build_budgeted_provider(settings: Settings, db: StoreDatabase, *,
                            environ: dict[str, str] | None = None) -> BudgetedProvider:
    """The pipeline's LLM: `pipeline.extraction.provider` (or `llm.provider`) behind the daily budget."""
    extraction = settings.pipeline.extraction
    inner = build_llm_provider(settings.llm, provider=extraction.provider, model=extraction.model,
                               environ=environ)
    return BudgetedProvider(inner, TokenBudget(db, settings.llm.daily_token_budget))
