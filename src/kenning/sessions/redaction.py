"""Secret redaction for anything we persist beyond the lossless transcript (checkpoints, prompts).

Patterns cover what leaks in coding sessions: bearer tokens, well-known API key shapes
(OpenAI/Anthropic, GitHub, AWS, Slack, Google, Stripe, JWTs), PEM private keys, URLs with
credentials, and `KEY=value` / `key: value` assignments whose name says secret.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
_BEARER = re.compile(r"(?i)\b(bearer|token|basic)(\s+)([A-Za-z0-9\-._~+/]{16,}=*)")
_AUTH_HEADER = re.compile(r"(?i)(authorization\s*[:=]\s*)(\"?)([^\s\"',;]+(?:\s+[^\s\"',;]+)?)")
_KEY_SHAPES = re.compile(
    r"\b(?:"
    r"sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{16,}"  # OpenAI / Anthropic / Stripe-like
    r"|rk_(?:live|test)_[A-Za-z0-9]{16,}|pk_live_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{30,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|npm_[A-Za-z0-9]{30,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r")"
)
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)")
_SECRET_NAME = (  # the name must END in the secret word: GITHUB_TOKEN yes, tokens / authors no
    r"[A-Za-z0-9_.\-]*?(?:secret|passw(?:or)?d|passwd|pwd|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key|secret[_\-]?key|credentials?|auth[_\-]?token)"
)
_ASSIGNMENT = re.compile(
    r"(?i)(\b" + _SECRET_NAME + r"[\"']?\s*(?:=|:)\s*)(\"[^\"\n]*\"|'[^'\n]*'|[^\s,;}\]]+)"
)


def _keep_quotes(match: re.Match) -> str:
    value = match.group(2)
    if value.startswith(REDACTED[:-1]):
        return match.group(0)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return f"{match.group(1)}{value[0]}{REDACTED}{value[0]}"
    return f"{match.group(1)}{REDACTED}"


def redact(text: str) -> str:
    """Return `text` with secrets replaced by [REDACTED]; everything else is unchanged."""
    if not text:
        return text
    out = _PRIVATE_KEY.sub(REDACTED, text)
    out = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(3)}", out)
    out = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    out = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    out = _KEY_SHAPES.sub(REDACTED, out)
    out = _ASSIGNMENT.sub(_keep_quotes, out)
    return out
