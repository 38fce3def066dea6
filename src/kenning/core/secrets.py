"""The one secret scanner: nothing kenning persists keeps a credential in clear.

Every write path calls `protect(text, policy)` (or `redact(text)` where a write must never
fail, e.g. hooks): remember/import/MCP/edit (memory.write), documents, session prompts,
summaries, checkpoints and transcripts, and the graph's entity names.

Detection. Token shapes come from the maintained detector library `detect-secrets`: the
`denylist` regexes of its plugins (AWS, GitHub, GitLab, OpenAI, Slack, Stripe, JWT, basic-auth
URLs, npm, PyPI, SendGrid, Twilio, Discord, Mailchimp, Telegram, Azure storage, Square), with
each plugin's own validity filter where it has one (JWT). Our rules add what its plugins miss
or match only in part (each tested in tests/core/test_secrets.py):
- `private-key`: a whole PEM / OpenSSH / PGP private-key block, BEGIN to END (or to the end);
- `openai-key` / `anthropic-key`: today's `sk-proj-…`, `sk-…` and `sk-ant-…` keys;
- `google-api-key` (`AIza…`), `github-token` (`github_pat_…`, and `gh?_` of any length ≥ 30);
- `aws-secret-key`: `aws_secret_access_key = <40 chars>` unquoted, and a bare 40-character
  base64 key (mixed case and a digit) within 200 characters after an access key id (`AKIA…`,
  `ASIA…`; 100 before) or right after a `secret` label ("with secret wJalr…");
- `<credential>:<secret>` pairs: whatever follows a detected credential after a colon
  (`AKIA…:wJalr…`) goes with it, so no half is kept;
- `secret` (high entropy): a token of 24+ characters mixing upper case, lower case and digits
  with at least 4 bits of entropy a character, in assignment position (`NAME = tok`,
  `name: tok`) whatever the name; hex digests, file paths and slashed paths are left alone;
- `jwt`: a JSON Web Token whole, its three segments (`eyJ…`.`…`.`…`) whatever precedes it
  (the plugin's match left the signature); a signature left after a `[REDACTED:jwt]` marker by an
  older scanner (a stored row) goes too;
- `url-password`: the password of `scheme://user:password@host`, also with an empty user
  (`redis://:password@host`);
- `password` (command lines): `curl -u user:password` / `--user user:password`, `--password pw` /
  `--password=pw` / `--passwd` / `--pass`, and `-p pw` / `-ppw` where `-p` means a password: after
  `-u <user>` in the same command (`docker login -u bob -p …`) or in mysql / mariadb / sshpass;
- `bearer-token`: `Authorization: …` headers and `Bearer …` / `token …` credentials;
- `password` / `secret`: `NAME=value` or `NAME: value` where NAME ends in a secret word
  (PASSWORD, DB_PASSWD, GITHUB_TOKEN, api_key, client_secret, …). With `:` the value must
  look like a credential (quoted, or containing a digit or symbol) so prose such as
  "token: expires hourly" is left alone.

Policy (`secrets:` in config.yaml): `redact` (default) replaces each secret with
`[REDACTED:<kind>]`; `reject` refuses the write with `SecretRejected` (HTTP 400, CLI exit 2)
naming the kinds, never the value; `allow` stores the text as given.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar, cast

from kenning.core.errors import InvalidInput

SecretPolicy = Literal["redact", "reject", "allow"]
_V = TypeVar("_V")  # protect_value's value: the answer has its shape
POLICIES: tuple[str, ...] = ("redact", "reject", "allow")
MARKER_PREFIX = "[REDACTED"
MARKER = re.compile(r"\[REDACTED(?::[a-z0-9-]+)?\]")


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class SecretRejected(InvalidInput):
    """The text holds a secret and the policy is `reject` (the message names kinds, never values)."""


# -- detect-secrets plugins: (module, class, our kind), imported at the first scan ----------
_PLUGIN_NAMES: tuple[tuple[str, str, str], ...] = (
    ("aws", "AWSKeyDetector", "aws-key"),
    ("github_token", "GitHubTokenDetector", "github-token"),
    ("gitlab_token", "GitLabTokenDetector", "gitlab-token"),
    ("openai", "OpenAIDetector", "openai-key"),
    ("slack", "SlackDetector", "slack-token"),
    ("stripe", "StripeDetector", "stripe-key"),
    ("jwt", "JwtTokenDetector", "jwt"),
    ("basic_auth", "BasicAuthDetector", "url-password"),
    ("private_key", "PrivateKeyDetector", "private-key"),
    ("npm", "NpmDetector", "npm-token"),
    ("pypi_token", "PypiTokenDetector", "pypi-token"),
    ("sendgrid", "SendGridDetector", "sendgrid-key"),
    ("twilio", "TwilioKeyDetector", "twilio-key"),
    ("discord", "DiscordBotTokenDetector", "discord-token"),
    ("mailchimp", "MailchimpDetector", "mailchimp-key"),
    ("telegram_token", "TelegramBotTokenDetector", "telegram-token"),
    ("azure_storage_key", "AzureStorageKeyDetector", "azure-storage-key"),
    ("square_oauth", "SquareOAuthDetector", "square-secret"),
)
_FILTERS = {"jwt": "is_formally_valid"}  # kind -> the plugin's validity check


@functools.cache
class _Detector(Protocol):
    """A detect-secrets detector class (the package ships no types): the regexes it scans with."""

    denylist: Iterable[re.Pattern[str]]


def _plugins() -> tuple[tuple[_Detector, str], ...]:
    """detect-secrets' detectors, imported at the first scan: the package pulls in `requests`
    (~80 ms of imports on a quiet machine), which a CLI listing memories or a starting daemon
    never needs."""
    from importlib import import_module

    return tuple((getattr(import_module(f"detect_secrets.plugins.{module}"), name), kind)
                 for module, name, kind in _PLUGIN_NAMES)

# -- our rules: (kind, regex, group whose span is the secret; 0 = whole match) -----------
_SECRET_NAME = (  # the name must END in the secret word: GITHUB_TOKEN yes, tokens / authors no
    r"[A-Za-z0-9_.\-]*?(?:secret|passw(?:or)?d|passwd|pwd|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key|secret[_\-]?key|credentials?|auth[_\-]?token)"
)
_RULES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL), 0),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{12,}"), 0),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), 0),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), 0),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), 0),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{30,}"), 0),
    ("aws-secret-key", re.compile(
        r"(?i)\baws_?secret(?:_?access)?_?key\b[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"), 1),
    ("jwt", re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"), 0),
    ("jwt", re.compile(r"\[REDACTED:jwt\]\.?([A-Za-z0-9_\-]{8,})"), 1),
    ("url-password", re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:([^\s@/]+)@"), 1),
    ("password", re.compile(
        r"(?:^|[\s;|&(`])(?:-u|--user)(?:\s+|=)?[\"']?(?![\d]+:\d+\b)[^\s:\"'@/=-][^\s:\"'@/]*:([^\s\"'@]+)"), 1),
    ("password", re.compile(r"(?i)(?:^|[\s;|&(`])--(?:password|passwd|pass)(?:\s+|=)[\"']?([^\s\"'-][^\s\"']*)"), 1),
    ("password", re.compile(
        r"(?:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|sshpass)\b|\s-u\s*(?!\d)[^\s-]\S*)[^\n;|&]*?"
        r"\s-p(?:\s+)?[\"']?(?![\d:.]+(?:/\w+)?(?:\s|$))([^\s\"'-][^\s\"']*)"), 1),  # not a port (8080:80)
    ("bearer-token", re.compile(
        r"(?i)\bauthorization\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|bot)\s+)?([^\s\"',;]{8,})"), 1),
    ("bearer-token", re.compile(r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9\-._~+/]{16,}=*)"), 1),
)
# a bare AWS secret access key: 40 base64 characters (upper, lower and a digit or / +), found
# near an access key id or right after a `secret` label ("with secret wJalr…", "secret key: …")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")
_BASE64_40 = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_SECRET_LABEL = re.compile(
    r"(?i)\bsecret(?:[ _\-]?access)?(?:[ _\-]?key)?\b[\"']?\s*(?:[:=]|\bis\b|\bwas\b)?\s*[\"'`]?\Z")
AWS_ID_WINDOW = 200  # characters after (or half of it before) an access key id searched for its secret
# `<credential>:<secret>` (AKIA…:wJalr…, user-token:password): the part after the colon goes too
_PAIR_TAIL = re.compile(r":([^\s\"'`,;:@/]{8,})")
# a high-entropy token in assignment position (`NAME = tok`, `name: tok`, `"name": "tok"`),
# whatever the name: 24+ characters mixing upper case, lower case and digits, >= 4 bits a character
_ASSIGN_ANY = re.compile(
    r"\b([A-Za-z_][A-Za-z0-9_.\-]*)[\"']?\s*(?::|=|:=)\s*[\"']?([A-Za-z0-9+/_\-]{24,}={0,2})(?![A-Za-z0-9+/_\-=])")
# names whose values are identifiers, not credentials (message / tool-call / request ids, digests)
_ID_NAME = re.compile(r"(?i)(?:id|ids|uuid|hash|sha\d*|digest|etag|checksum|signature|commit|revision|version)$")
# `msg_01…`, `toolu_01…`, `req_01…`, `chatcmpl-…`: prefixed ids (prefixed keys have their own rules)
_PREFIXED_ID = re.compile(r"^[a-z]{2,10}[_\-][A-Za-z0-9]+$")
_HEX = re.compile(r"^[0-9a-fA-F\-]+$")
MIN_ENTROPY_BITS = 4.0
_ASSIGN_EQ = re.compile(r"(?i)\b(" + _SECRET_NAME + r")[\"']?\s*=\s*(\"[^\"\n]*\"|'[^'\n]*'|[^\s,;}\]\"']+)")
_ASSIGN_COLON = re.compile(r"(?i)\b(" + _SECRET_NAME + r")[\"']?\s*:\s*(\"[^\"\n]*\"|'[^'\n]*'|[^\s,;}\]\"']+)")
_PASSWORD_NAME = re.compile(r"(?i)passw(?:or)?d|passwd|pwd$")
_PLACEHOLDER = re.compile(r"^(?:\$|<|\{|%|\*+$|x+$|\.\.\.|none$|null$|true$|false$|\[REDACTED)", re.I)


@dataclass(frozen=True)
class Finding:
    """One secret: its kind and where it is in the scanned text (never logged as text)."""

    kind: str
    start: int
    end: int


def _plugin_findings(text: str) -> Iterable[Finding]:
    for plugin, kind in _plugins():
        valid = getattr(plugin, _FILTERS[kind]) if kind in _FILTERS else None
        for regex in plugin.denylist:
            for match in regex.finditer(text):
                group = next((i for i in range(1, (match.lastindex or 0) + 1) if match.group(i)), 0)
                start, end = match.span(group)
                value = text[start:end].strip(" \t\"'=:")
                if not value or (valid is not None and not valid(value)):
                    continue
                offset = text.find(value, start, end)
                yield Finding(kind, offset, offset + len(value))


_FILE_PATH = re.compile(r"[\w.\-]+(?:/[\w.\-]+)+\.[A-Za-z]{1,5}")


def _assignment_findings(text: str) -> Iterable[Finding]:
    for regex, strict in ((_ASSIGN_EQ, False), (_ASSIGN_COLON, True)):
        for match in regex.finditer(text):
            value = match.group(2)
            quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"
            inner = value[1:-1] if quoted else value
            if not inner.strip() or _PLACEHOLDER.match(inner):
                continue
            if strict and not quoted and not re.search(r"[^A-Za-z]", inner):
                continue  # "token: expires" is prose; "password: hunter2" is not
            if strict and not quoted and _FILE_PATH.fullmatch(inner):
                continue  # "legacy token: src/auth/legacy.py" names a file, it is not the token
            kind = "password" if _PASSWORD_NAME.search(match.group(1)) else "secret"
            start = match.start(2) + (1 if quoted else 0)
            yield Finding(kind, start, start + len(inner))


def _mixed(token: str) -> bool:
    """Upper case, lower case and a digit (or / +): a key, not a word, a hex digest or a constant."""
    return (any(c.isupper() for c in token) and any(c.islower() for c in token)
            and any(c.isdigit() or c in "/+" for c in token))


def entropy(token: str) -> float:
    """Shannon entropy of `token` in bits per character."""
    if not token:
        return 0.0
    counts: dict[str, int] = {}
    for c in token:
        counts[c] = counts.get(c, 0) + 1
    n = len(token)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


_AWS_ID_MARKER = re.compile(r"\[REDACTED:aws-key\]")  # an access key id redacted before (a stored row)


def _aws_secret_findings(text: str) -> Iterable[Finding]:
    ids = [m.span() for m in _AWS_KEY_ID.finditer(text)] + [m.span() for m in _AWS_ID_MARKER.finditer(text)]
    for match in _BASE64_40.finditer(text):
        token = match.group(0)
        if not _mixed(token) or _FILE_PATH.fullmatch(token):
            continue
        start, end = match.span()
        near_id = any(id_end <= start <= id_end + AWS_ID_WINDOW or end <= id_start <= end + AWS_ID_WINDOW // 2
                      for id_start, id_end in ids)
        if near_id or _SECRET_LABEL.search(text[max(0, start - 40):start]):
            yield Finding("aws-secret-key", start, end)


def _in_url(text: str, pos: int) -> bool:
    """Whether `pos` is inside a URL (a query string is no assignment; URL passwords have their rule)."""
    before = text[max(0, pos - 2000):pos].split()
    return bool(before) and "://" in before[-1] and not text[pos - 1:pos].isspace()


def _high_entropy_findings(text: str) -> Iterable[Finding]:
    for match in _ASSIGN_ANY.finditer(text):
        token = match.group(2).rstrip("=")
        if (not _mixed(token) or _HEX.match(token) or entropy(token) < MIN_ENTROPY_BITS or _ID_NAME.search(match.group(1))
                or _PREFIXED_ID.match(token) or _FILE_PATH.fullmatch(token) or token.count("/") >= 2
                or _in_url(text, match.start())):
            continue
        yield Finding("secret", match.start(2), match.end(2))


def _pair_tails(text: str, findings: list[Finding]) -> Iterable[Finding]:
    """What follows a credential after a colon (`AKIA…:secret`), also where the credential was
    redacted before (`[REDACTED:aws-key]:secret`, a row stored by an older scanner)."""
    ends = [(f.kind, f.end) for f in findings] + [(m.group(1) or "secret", m.end()) for m in _MARKER_KIND.finditer(text)]
    for kind, end in ends:
        if text.startswith(":", end):
            tail = _PAIR_TAIL.match(text, end)
            if tail and not tail.group(1).startswith(MARKER_PREFIX):
                yield Finding(kind, tail.start(1), tail.end(1))


_MARKER_KIND = re.compile(r"\[REDACTED(?::([a-z0-9-]+))?\]")


def scan(text: str) -> list[Finding]:
    """Every secret in `text`, in order, overlapping matches merged (the specific kind wins)."""
    if not text or not isinstance(text, str):
        return []
    found: list[tuple[int, Finding]] = []  # (priority, finding): lower priority number wins a tie
    for f in _plugin_findings(text):
        found.append((0, f))
    for kind, regex, group in _RULES:
        for match in regex.finditer(text):
            start, end = match.span(group)
            if end > start and not text.startswith(MARKER_PREFIX, start) \
                    and not (kind == "password" and _PLACEHOLDER.match(text[start:end])):  # `-u $USER:$PASS`
                found.append((1, Finding(kind, start, end)))
    for f in _assignment_findings(text):
        found.append((2, f))
    for f in _aws_secret_findings(text):
        found.append((1, f))
    for f in _high_entropy_findings(text):
        found.append((3, f))
    for f in list(_pair_tails(text, [f for _, f in found])):
        found.append((2, f))
    merged: list[tuple[int, Finding]] = []
    for prio, f in sorted(found, key=lambda pf: (pf[1].start, pf[0], -pf[1].end)):
        if merged and f.start < merged[-1][1].end:
            last_prio, last = merged[-1]
            kind = last.kind if last_prio <= prio else f.kind
            merged[-1] = (min(prio, last_prio), Finding(kind, last.start, max(last.end, f.end)))
        else:
            merged.append((prio, f))
    return [f for _, f in merged]


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`; everything else unchanged."""
    findings = scan(text)
    if not findings:
        return text
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos:f.start])
        parts.append(marker(f.kind))
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def kinds(text: str) -> list[str]:
    """The distinct kinds of secret in `text`, in order of appearance."""
    return list(dict.fromkeys(f.kind for f in scan(text)))


def protect(text: str, policy: str = "redact", *, what: str = "content") -> str:
    """Apply the configured policy to one text about to be stored."""
    if policy == "allow" or not text or not isinstance(text, str):
        return text
    if policy == "reject":
        found = kinds(text)
        if found:
            raise SecretRejected(
                f"{what} contains a secret ({', '.join(found)}); remove it, or set `secrets: redact` "
                "in config.yaml to store it redacted"
            )
        return text
    return redact(text)


def protect_value(value: _V, policy: str = "redact", *, what: str = "metadata") -> _V:
    """`protect` applied to every string inside a JSON-like value (dicts, lists, strings); the
    answer has the shape of `value`."""
    if isinstance(value, str):
        return cast(_V, protect(value, policy, what=what))
    if isinstance(value, dict):
        return cast(_V, {k: protect_value(v, policy, what=f"{what}.{k}") for k, v in value.items()})
    if isinstance(value, list):
        return cast(_V, [protect_value(v, policy, what=what) for v in value])
    return value
