"""Document ingest (memory-pipeline-v2 "Document Ingest", "URL Fetcher").

A document (pasted text or a URL) becomes overlapping chunks stored as `document_chunk`
memories (importance 0.3, tagged with the title), linked through document_memories.

- `fetch_url`: size guard (Content-Length pre-flight, then a running byte counter while
  streaming), timeout guard (per read and for the whole body), content-type guard
  (text/html, text/*, application/json, application/xml; anything else is rejected).
- `html_to_text`: BeautifulSoup; <script>/<style>/<noscript>/<template> dropped, entities
  decoded, the first <title> kept.
- `chunk_text`: windows of `size` characters sharing `overlap` characters with the previous
  window, cut at a paragraph/line/sentence/word boundary in the window's last fifth when
  there is one. A text no longer than one window is not split.
- `ingest_document`: extracting → chunking → embedding → indexing → done. Each chunk is
  embedded outside any transaction, then written (memory + vector + entity links + chunk
  link) in its own short write transaction. Already-linked chunks are skipped, so a retried
  job resumes where it stopped.
"""

from __future__ import annotations

import codecs
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict
from urllib.parse import urljoin

import httpcore

from kenning.codegraph.chunking import chunk_code
from kenning.core import secrets
from kenning.core.config_pipeline import DocumentSettings
from kenning.core.errors import InvalidInput, ProviderError
from kenning.core.types import MemoryDraft
from kenning.memory import write
from kenning.memory.urlguard import GuardedBackend, UrlRefused, check_url
from kenning.store import documents as doc_store
from kenning.store import jobs as jobstore
from kenning.store.backend import StoreDatabase
from kenning.store.documents import Document

JOB_TYPE = "document_ingest"
ALLOWED_CONTENT_TYPES = ("text/html", "application/json", "application/xml", "application/xhtml+xml")
_BLANKS = re.compile(r"\n\s*\n\s*")
_SPACES = re.compile(r"[ \t\f\v]+")
Progress = Callable[[str, int, int], None]


class DocumentError(InvalidInput):
    """A document that can never be ingested as given (too big, wrong type, empty, bad URL)."""


@dataclass
class FetchedContent:
    content: str
    content_type: str
    byte_length: int
    title: str | None = None


def content_type_allowed(content_type: str) -> bool:
    base = content_type.split(";")[0].strip().lower()
    return base.startswith("text/") or base in ALLOWED_CONTENT_TYPES


def html_to_text(html: str) -> tuple[str, str | None]:
    """(plain text, page title or None) from an HTML document."""
    from bs4 import BeautifulSoup  # imported here: the daemon's start-up and the CLI never need it

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for tag in soup(["script", "style", "noscript", "template", "head"]):
        tag.decompose()
    text = soup.get_text("\n")
    lines = [_SPACES.sub(" ", line).strip() for line in text.splitlines()]
    joined = "\n".join(lines)
    return _BLANKS.sub("\n\n", joined).strip(), (title or None)


def _check_url(url: str) -> None:
    if not re.match(r"^https?://[^\s/]+", url):
        raise DocumentError(f"not an http(s) URL: {url[:200]!r}")


_REDIRECTS = (301, 302, 303, 307, 308)
_FETCH_ERRORS = (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol, httpcore.ProxyError)


def _header(response: httpcore.Response, name: str) -> str | None:
    for key, value in response.headers:
        if key.decode("latin-1").lower() == name:
            return value.decode("latin-1")
    return None


def _charset(content_type: str) -> str:
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.I)
    try:
        return codecs.lookup(match.group(1)).name if match else "utf-8"
    except LookupError:
        return "utf-8"


def _read_body(response: httpcore.Response, url: str, max_bytes: int, deadline: float, timeout_s: float) -> bytes:
    if response.status >= 400:
        raise DocumentError(f"GET {url} returned HTTP {response.status}")
    ctype = _header(response, "content-type") or "application/octet-stream"
    if not content_type_allowed(ctype):
        raise DocumentError(f"unsupported content type {ctype.split(';')[0]!r} from {url}")
    declared = _header(response, "content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise DocumentError(f"{url} is {declared} bytes; the limit is {max_bytes}")
    body = bytearray()
    for piece in response.iter_stream():
        body.extend(piece)
        if len(body) > max_bytes:
            raise DocumentError(f"{url} exceeded the {max_bytes}-byte limit while downloading")
        if time.monotonic() > deadline:
            raise ProviderError(f"fetching {url} took longer than {timeout_s:g} s")
    return bytes(body)


def fetch_url(url: str, *, timeout_s: float = 30.0, max_bytes: int = 10 * 1024 * 1024,
              allow_private: bool = False, max_redirects: int = 5) -> FetchedContent:
    """GET `url` with SSRF, size, timeout and content-type guards; HTML is converted to text.

    Redirects are followed here, at most `max_redirects`, each hop checked again by the
    guarded connection (see memory.urlguard): a public URL redirecting to loopback is refused.
    """
    deadline = time.monotonic() + timeout_s
    timeouts = {"connect": timeout_s, "read": timeout_s, "write": timeout_s, "pool": timeout_s}
    headers = [(b"User-Agent", b"kenning-documents"), (b"Accept", b"text/html, text/*, application/json;q=0.9")]
    current = url
    try:
        with httpcore.ConnectionPool(network_backend=GuardedBackend(allow_private)) as pool:
            for _hop in range(max_redirects + 1):
                _check_url(current)
                with pool.stream("GET", current, headers=headers, extensions={"timeout": timeouts}) as response:
                    location = _header(response, "location") if response.status in _REDIRECTS else None
                    if location is None:
                        body = _read_body(response, current, max_bytes, deadline, timeout_s)
                        ctype = _header(response, "content-type") or ""
                        break
                current = urljoin(current, location)
            else:
                raise DocumentError(f"{url} redirected more than {max_redirects} times")
    except UrlRefused as exc:
        raise DocumentError(str(exc)) from exc
    except httpcore.TimeoutException as exc:
        raise ProviderError(f"fetching {current} timed out after {timeout_s:g} s") from exc
    except _FETCH_ERRORS as exc:
        raise ProviderError(f"fetching {current} failed: {exc}") from exc
    text = body.decode(_charset(ctype), errors="replace")
    title = None
    if "html" in ctype.lower():
        text, title = html_to_text(text)
    return FetchedContent(text, ctype.split(";")[0].strip().lower(), len(body), title)


def chunk_text(text: str, size: int = 2000, overlap: int = 200) -> list[str]:
    """Overlapping windows of at most `size` characters (see module docstring)."""
    if overlap >= size:
        raise InvalidInput(f"chunk overlap ({overlap}) must be smaller than chunk size ({size})")
    text = text.strip()
    if len(text) <= size:
        return [text] if text else []
    chunks: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            floor = start + max(int(size * 0.8), overlap + 1)
            for sep in ("\n\n", "\n", ". ", " "):
                pos = text.rfind(sep, floor, end)
                if pos != -1:
                    end = pos + len(sep)
                    break
        piece = text[start:end].strip()
        if piece:
            chunks.append(piece)
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return chunks


def _protect(text: str, policy: str, what: str) -> str:
    try:
        return secrets.protect(text, policy, what=what)
    except secrets.SecretRejected as exc:
        raise DocumentError(str(exc)) from exc


class SourceFields(TypedDict, total=False):
    """What extracting a document's text learns about it (stored with its status)."""

    title: str | None
    raw_content: str | None
    content_type: str | None
    byte_length: int | None


def _source_content(db: StoreDatabase, doc: Document, cfg: DocumentSettings, secret_policy: str) -> tuple[str, SourceFields]:
    """The document's text and the fields learned while extracting it (secrets policy applied)."""
    if doc["source_type"] == "url":
        url = doc.get("source_url")
        if not url:
            raise DocumentError(f"document {doc.get('id')} has no URL to fetch")
        fetched = fetch_url(url, timeout_s=cfg.fetch_timeout_ms / 1000.0,
                            max_bytes=cfg.max_content_bytes, allow_private=cfg.allow_private_urls,
                            max_redirects=cfg.max_redirects)
        fetched.content = _protect(fetched.content, secret_policy, "the fetched document")
        fields: SourceFields = {"content_type": fetched.content_type, "byte_length": fetched.byte_length,
                            "raw_content": fetched.content}
        if fetched.title and not doc.get("title"):
            fields["title"] = fetched.title
        return fetched.content, fields
    text = doc.get("raw_content") or ""
    if (doc.get("content_type") or "").startswith("text/html") or re.match(r"\s*<(!doctype|html)", text, re.I):
        text, title = html_to_text(text)
        return text, ({"title": title} if title and not doc.get("title") else {})
    return text, {}


def _store_chunk(writer: write.WritePath, doc: Document, index: int, chunk: str, cfg: DocumentSettings) -> tuple[str, bool]:
    title = doc.get("title")
    tags = [title[:100]] if title else []
    item = writer.prepare([MemoryDraft(  # validated and embedded outside the write tx
        content=chunk, type="document_chunk", importance=cfg.chunk_importance, tags=tags,
        project=doc.get("project"), source=f"document:{doc['id']}",
        metadata={"document_id": doc["id"], "chunk_index": index},
    )])[0]
    with writer.db.with_write_tx() as conn:
        result = writer.store(conn, item, actor="documents")
        doc_store.link_chunk(conn, doc["id"], result.id, index)
        doc_store.set_status(conn, doc["id"], "embedding", memory_count=index + 1)
    return result.id, result.deduped


def ingest_document(writer: write.WritePath, doc_id: str, cfg: DocumentSettings, progress: Progress | None = None) -> dict:
    """Run one document through extracting → chunking → embedding → indexing → done; its chunks
    are stored through the write path (`writer`, whose secrets policy applies to the fetched text)."""
    db, secret_policy = writer.db, writer.secret_policy
    note = progress or (lambda stage, done, total: None)
    doc = doc_store.get_document(db.reader(), doc_id)
    with db.with_write_tx() as conn:
        doc_store.set_status(conn, doc_id, "extracting")
    note("extracting", 0, 0)
    text, fields = _source_content(db, doc, cfg, secret_policy)
    if not text.strip():
        raise DocumentError(f"document {doc_id} has no text to ingest")
    doc.update(fields)
    code = chunk_code(doc.get("title") or "", text, cfg.chunk_size)  # source files: one definition per chunk
    chunks = [c.text for c in code] if code else chunk_text(text, cfg.chunk_size, cfg.chunk_overlap)
    with db.with_write_tx() as conn:
        doc_store.set_status(conn, doc_id, "chunking", chunk_count=len(chunks), **fields)
    note("chunking", 0, len(chunks))
    created = deduped = 0
    for index, chunk in enumerate(chunks):
        if doc_store.chunk_memory(db.reader(), doc_id, index) is None:
            _, was_dup = _store_chunk(writer, doc, index, chunk, cfg)
            created += not was_dup
            deduped += was_dup
        note("embedding", index + 1, len(chunks))
    with db.with_write_tx() as conn:
        doc_store.set_status(conn, doc_id, "indexing", memory_count=len(chunks))
        doc_store.set_status(conn, doc_id, "done", memory_count=len(chunks))
    note("done", len(chunks), len(chunks))
    return {"document_id": doc_id, "chunks": len(chunks), "created": created, "deduped": deduped,
            "title": doc.get("title")}


def mark_failed(db: StoreDatabase, doc_id: str, error: str) -> None:
    with db.with_write_tx() as conn:
        doc_store.set_status(conn, doc_id, "failed", error=error[:2000])


def submit_document(db: StoreDatabase, *, text: str | None = None, url: str | None = None, title: str | None = None,
                    project: str | None = None, tags: list[str] | None = None,
                    content_type: str | None = None, max_bytes: int = 10 * 1024 * 1024,
                    enqueue: bool = True, max_attempts: int = 3, secret_policy: str = "redact",
                    allow_private: bool = False) -> str:
    """Validate and store a document row (status 'queued'); returns its id.

    Exactly one of `text` or `url` is required; text larger than `max_bytes` is refused, and a
    URL whose host is not public (memory.urlguard) unless `allow_private`. Secrets in the text,
    title and tags follow `secret_policy`; a URL carrying a password is refused unless 'allow'.
    With `enqueue`, a `document_ingest` job is added in the same transaction.
    """
    if (text is None) == (url is None):
        raise DocumentError("send exactly one of 'text' or 'url'")
    if text is not None:
        if not text.strip():
            raise DocumentError("document text is empty")
        size = len(text.encode("utf-8"))
        if size > max_bytes:
            raise DocumentError(f"document is {size} bytes; the limit is {max_bytes}")
        text = _protect(text, secret_policy, "document text")
    else:
        _check_url(url or "")
        _protect(url or "", "allow" if secret_policy == "allow" else "reject", "the URL")
        try:
            check_url(url or "", allow_private)
        except UrlRefused as exc:
            raise DocumentError(str(exc)) from exc
    title = _protect(title, secret_policy, "title") if title else title
    tags = [_protect(t, secret_policy, "tag") for t in tags or []]
    with db.with_write_tx():
        with db.with_write_tx() as conn:
            doc_id = doc_store.create_document(
                conn, source_type="url" if url else "text", raw_content=text, source_url=url, title=title,
                project=project, tags=tags, content_type=content_type,
            )
        if enqueue:
            jobstore.enqueue(db, JOB_TYPE, document_id=doc_id, max_attempts=max_attempts)
    return doc_id
