"""Deterministic, regex-only entity spotting for the inline linker (no LLM, no I/O).

What counts as an entity mention, in priority order (earlier rules win on overlap):
1. `backticked` code spans and file paths (`src/app.py`, `config.yaml`) → file / concept;
2. known technology names from a small lexicon (case-insensitive, with aliases such as
   postgres → PostgreSQL) → tool;
3. identifiers: CamelCase, camelCase, snake_case, dotted.names → concept;
4. capitalized words and runs of them ("Stripe", "Acme Billing") and ACRONYMS, skipping
   sentence-initial common words and a stop list → unknown.
Output order is the order of appearance, so the same text always yields the same result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kenning.core.text import KIND_LABELS, SPEAKER_LABELS, STOP_WORDS

MAX_ENTITIES_PER_MEMORY = 16

_LEXICON_NAMES = (
    "PostgreSQL MySQL SQLite MariaDB MongoDB Redis Memcached Cassandra DynamoDB Elasticsearch "
    "OpenSearch ClickHouse Snowflake BigQuery Kafka RabbitMQ NATS Celery Docker Kubernetes Helm "
    "Terraform Ansible Nginx Apache Caddy Linux macOS Windows AWS GCP Azure Vercel Netlify Heroku "
    "Cloudflare Python TypeScript JavaScript Rust Golang Java Kotlin Swift Ruby PHP Elixir Haskell "
    "Scala Node.js Deno Bun React Vue Svelte Angular Next.js Django Flask FastAPI Rails Express "
    "Spring pytest unittest Jest Vitest Playwright Cypress Git GitHub GitLab Bitbucket Jenkins CircleCI "
    "npm pnpm Yarn pip Poetry uv Cargo Webpack Vite esbuild GraphQL gRPC REST OAuth JWT Stripe "
    "Sentry Datadog Prometheus Grafana OpenTelemetry Ollama OpenAI Anthropic Claude PyTorch "
    "TensorFlow NumPy pandas SQLAlchemy Prisma Alembic Pydantic Tailwind Bootstrap Supabase "
    "Firebase Auth0 Okta Slack Jira Linear Notion Figma Vim Emacs VSCode Bash Zsh Make CMake "
    "Bazel Gradle Maven HTTP HTTPS WebSocket JSON YAML TOML XML CSV Protobuf S3 EC2 Lambda"
).split()
_ALIASES = {
    "postgres": "PostgreSQL", "psql": "PostgreSQL", "pg": "PostgreSQL", "mongo": "MongoDB",
    "k8s": "Kubernetes", "node": "Node.js", "nodejs": "Node.js", "nextjs": "Next.js",
    "golang": "Golang", "js": "JavaScript", "ts": "TypeScript", "py": "Python",
    "gh": "GitHub", "es": "Elasticsearch", "tf": "Terraform", "vscode": "VSCode",
}
LEXICON: dict[str, str] = {name.lower(): name for name in _LEXICON_NAMES}
LEXICON.update({k: v for k, v in _ALIASES.items() if k not in ("js", "ts", "py", "es", "tf", "gh", "pg")})
_STRICT_ALIASES = {"pg", "js", "ts", "py", "es", "tf", "gh"}  # only as standalone lowercase words

_STOP = STOP_WORDS | SPEAKER_LABELS | KIND_LABELS | frozenset(
    "a an the i we you he she it they me us them my our your his her its their this that these "
    "those there here what which who whom whose when where why how all any both each few more most "
    "other some such no nor not only own same so than too very can will just should now also and "
    "but or if then else for from to of in on at by with about after before during use used using "
    "yes ok okay note todo fixme please thanks hi hello monday tuesday wednesday thursday friday "
    "saturday sunday january february march april may june july august september october november "
    "december today yesterday tomorrow first second next last new old one two three let make "
    "always never don't do does did is are was were be been being have has had switched decided "
    "moved migrated chose picked went sticking committed settled adopted prefers prefer remember "
    "keep added fixed see run done next yes no maybe".split()
)

_VERBS = frozenset(
    "check ensure avoid install update create delete remove start stop open close read write call "
    "set get put send build test deploy merge push pull fetch try find look ask tell say said think "
    "turns looks seems maybe perhaps however also since because although though while until unless "
    "another every many much still even well good great nice sure thank sorry wow yeah oh hey "
    "currently recently usually often sometimes instead otherwise".split()
)
_CODE_SPAN = re.compile(r"`([^`\n]{2,80})`")
_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.(?:py|ts|tsx|js|jsx|rs|go|java|rb|md|json|ya?ml|toml|"
    r"sql|sh|cfg|ini|lock|txt|html|css|c|h|cpp|hpp|kt|swift))(?![\w/])"
)
_IDENT = re.compile(
    r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?)\b"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#.]*[A-Za-z0-9+#]|[A-Za-z]")
_PROPER_RUN = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:[ -](?:[A-Z][A-Za-z0-9]*))*\b")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,7}$")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


@dataclass(frozen=True)
class Mention:
    """One entity mention: display name, type, the text as written and where it starts."""

    name: str
    entity_type: str
    text: str
    start: int
    confidence: float
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", " ".join(self.name.split()).lower())


def split_sentences(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) pairs; sentences end at . ! ? ; or a newline."""
    out: list[tuple[int, str]] = []
    pos = 0
    for match in _SENTENCE.finditer(text):
        piece = text[pos:match.start()]
        if piece.strip():
            out.append((pos, piece))
        pos = match.end()
    if text[pos:].strip():
        out.append((pos, text[pos:]))
    return out


class _Collector:
    """Accumulates mentions, refusing overlaps with earlier (higher-priority) spans."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []
        self.mentions: list[Mention] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in self.spans)

    def add(self, start: int, end: int, mention: Mention) -> None:
        if self.free(start, end):
            self.spans.append((start, end))
            self.mentions.append(mention)


def _code_and_paths(text: str, out: _Collector) -> None:
    for m in _CODE_SPAN.finditer(text):
        inner = m.group(1).strip()
        etype = "file" if _PATH.fullmatch(inner) else "concept"
        out.add(m.start(), m.end(), Mention(inner, etype, inner, m.start(), 0.9))
    for m in _PATH.finditer(text):
        value = m.group(1).rstrip(".")
        if value.count(".") == 1 and value.split(".")[0].lower() in LEXICON:
            continue  # "Node.js", "Next.js" are tools, not files
        if "/" not in value and not re.search(r"\.[a-z]{1,5}$", value):
            continue
        out.add(m.start(1), m.start(1) + len(value), Mention(value, "file", value, m.start(1), 0.9))


def _lexicon(text: str, out: _Collector) -> None:
    for m in _WORD.finditer(text):
        word = m.group(0)
        low = word.lower()
        if low in _STRICT_ALIASES:
            continue
        name = LEXICON.get(low)
        if name is None:
            continue
        if low in ("go", "make", "rest", "express", "spring", "linear", "bun", "swift", "lambda") and word == low:
            continue  # common English words only count when capitalized
        out.add(m.start(), m.end(), Mention(name, "tool", word, m.start(), 0.9))


def _identifiers(text: str, out: _Collector) -> None:
    for m in _IDENT.finditer(text):
        value = m.group(1)
        if value.lower() in _STOP or value.lower().rstrip("()") in LEXICON:
            continue
        if "." in value and re.fullmatch(r"[A-Za-z]+\.[A-Za-z]+", value) and value[0].isupper():
            continue  # "Done.Next" is two sentences glued together, not an identifier
        out.add(m.start(), m.end(), Mention(value, "concept", value, m.start(), 0.8))


def _is_sentence_start(text: str, index: int) -> bool:
    before = text[:index].rstrip()
    return not before or before[-1] in ".!?;:\n\"'(-*#>"


def _looks_like_plain_word(word: str) -> bool:
    """A capitalized sentence opener that is probably an ordinary word, not a name."""
    low = word.lower()
    return low in _STOP or low.endswith(("ed", "ing", "ly", "ion", "ment", "ness")) or low in _VERBS


def _proper_nouns(text: str, out: _Collector) -> None:
    for m in _PROPER_RUN.finditer(text):
        words = m.group(0).replace("-", " ").split()
        start = m.start()
        while words and (words[0].lower() in _STOP or (
                _is_sentence_start(text, start) and _looks_like_plain_word(words[0]))):
            start = text.index(words[0], start) + len(words[0])
            words = words[1:]
        while words and words[-1].lower() in _STOP:
            words = words[:-1]
        if not words:
            continue
        if len(words) == 1 and len(words[0]) < 2:
            continue
        begin = text.index(words[0], start)
        end = text.index(words[-1], begin) + len(words[-1])
        value = text[begin:end]
        conf = 0.7 if len(words) > 1 or _ACRONYM.match(words[0]) else 0.6
        out.add(begin, end, Mention(value, "unknown", value, begin, conf))


def extract_mentions(text: str, limit: int = MAX_ENTITIES_PER_MEMORY) -> list[Mention]:
    """Entity mentions in `text`, one per canonical name, in order of appearance."""
    collector = _Collector()
    _code_and_paths(text, collector)
    _lexicon(text, collector)
    _identifiers(text, collector)
    _proper_nouns(text, collector)
    seen: set[str] = set()
    unique: list[Mention] = []
    for mention in sorted(collector.mentions, key=lambda m: (m.start, m.name)):
        if mention.key in seen or mention.key in _STOP:
            continue
        seen.add(mention.key)
        unique.append(mention)
    return unique[:limit]
