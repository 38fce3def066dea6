"""Document ingest: chunking, HTML to text, URL guards against a real local server,
the API (inline and through the documents worker of a real daemon) and `kenning ingest`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest

from kenning.core.errors import InvalidInput, ProviderError
from kenning.memory.documents import (
    DocumentError,
    chunk_text,
    fetch_url,
    html_to_text,
    ingest_document,
    submit_document,
)
from kenning.store import documents as doc_store

from .conftest import ARTICLE


def test_chunks_overlap_and_short_texts_are_not_split():
    assert chunk_text("short text", 200, 20) == ["short text"]
    words = " ".join(f"word{i}" for i in range(400))
    chunks = chunk_text(words, 300, 50)
    assert len(chunks) > 1 and all(len(c) <= 300 for c in chunks)
    for before, after in zip(chunks, chunks[1:]):
        assert before[-30:].split()[-1] in after[:80], "each chunk starts inside the previous one's tail"
    assert " ".join(chunks).count("word399") >= 1 and chunks[0].startswith("word0 ")
    assert chunk_text(words, 300, 50) == chunks  # deterministic
    with pytest.raises(InvalidInput):
        chunk_text(words, 100, 100)


def test_html_to_text_drops_scripts_and_styles_and_keeps_the_title():
    text, title = html_to_text(ARTICLE)
    assert title == "Billing Runbook"
    assert "do-not-index" not in text and "color: red" not in text
    assert "billing & invoicing" in text and "Celery worker" in text


def test_fetch_url_guards(web):
    page = fetch_url(f"{web}/article.html", allow_private=True)
    assert page.title == "Billing Runbook" and page.content_type == "text/html" and "PostgreSQL" in page.content
    assert "PostgreSQL" in fetch_url(f"{web}/data.json", allow_private=True).content
    with pytest.raises(DocumentError, match="content type"):
        fetch_url(f"{web}/image.png", allow_private=True)
    with pytest.raises(DocumentError, match="limit"):
        fetch_url(f"{web}/declared-huge", max_bytes=10_000, allow_private=True)
    with pytest.raises(DocumentError, match="limit"):
        fetch_url(f"{web}/undeclared-huge", max_bytes=100_000, allow_private=True)
    with pytest.raises(ProviderError, match="timed out|longer than"):
        fetch_url(f"{web}/slow", timeout_s=0.5, allow_private=True)
    with pytest.raises(DocumentError, match="404"):
        fetch_url(f"{web}/missing", allow_private=True)
    with pytest.raises(DocumentError, match="http"):
        fetch_url("file:///etc/passwd")


def test_ingest_text_document_stores_chunks_as_memories(kenning):
    cfg = kenning.settings.pipeline.documents.model_copy(update={"chunk_size": 400, "chunk_overlap": 40})
    text = "\n\n".join(f"Section {i}: the Kafka consumer group {i} commits offsets every {i} seconds." for i in range(30))
    doc_id = submit_document(kenning.db, text=text, title="Kafka notes", project="docs", enqueue=False)
    stages = []
    result = ingest_document(kenning.writer, doc_id, cfg, progress=lambda s, d, t: stages.append(s))
    doc = doc_store.get_document(kenning.db.reader(), doc_id)
    assert doc["status"] == "done" and doc["chunk_count"] == result["chunks"] > 1
    assert stages[0] == "extracting" and stages[-1] == "done" and "embedding" in stages
    chunks = doc_store.document_chunks(kenning.db.reader(), doc_id)
    assert [c["chunk_index"] for c in chunks] == list(range(result["chunks"]))
    memory = kenning.get(chunks[0]["memory_id"])
    assert memory.type == "document_chunk" and memory.importance == 0.3 and memory.tags == ["Kafka notes"]
    assert memory.project == "docs" and memory.metadata["document_id"] == doc_id
    again = ingest_document(kenning.writer, doc_id, cfg)
    assert again["created"] == 0  # re-running skips every linked chunk
    hits = kenning.recall("kafka consumer group 17 offsets", limit=3, track_access=False)
    assert any("group 17 " in h.memory.content for h in hits)


def test_submit_rejects_bad_input(kenning):
    with pytest.raises(DocumentError):
        submit_document(kenning.db, text="x", url="http://example.invalid")
    with pytest.raises(DocumentError):
        submit_document(kenning.db, text="   ")
    with pytest.raises(DocumentError, match="limit"):
        submit_document(kenning.db, text="y" * 2048, max_bytes=1024)
    with pytest.raises(DocumentError, match="http"):
        submit_document(kenning.db, url="ftp://example.com/file")


def _wait_for(client, doc_id, statuses=("done", "failed"), timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        doc = client.get(f"/api/documents/{doc_id}").json()
        if doc["status"] in statuses:
            return doc
        time.sleep(0.2)
    raise AssertionError(f"document {doc_id} stuck in {doc['status']}")


def test_api_urls_go_through_the_documents_worker(doc_daemon, web):
    with doc_daemon.client() as client:
        queued = client.post("/api/documents", json={"url": f"{web}/article.html", "project": "runbooks"})
        assert queued.status_code == 202 and queued.json()["status"] == "queued"
        doc = _wait_for(client, queued.json()["id"])
        assert doc["status"] == "done" and doc["title"] == "Billing Runbook" and doc["content_type"] == "text/html"
        detail = client.get(f"/api/documents/{doc['id']}", params={"chunks": "true"}).json()
        assert "PostgreSQL" in detail["chunks"][0]["content"] and "do-not-index" not in detail["chunks"][0]["content"]
        bad = client.post("/api/documents", json={"url": f"{web}/image.png"}).json()
        failed = _wait_for(client, bad["id"])
        assert failed["status"] == "failed" and "content type" in failed["error"]
        entity = client.get("/api/graph/entity/PostgreSQL").json()  # chunks are linked into the graph
        assert any(m["type"] == "document_chunk" for m in entity["memories"])


def test_api_inline_ingest_and_errors(doc_daemon, web):
    with doc_daemon.client() as client:
        done = client.post("/api/documents", json={"text": "Deploys go through Helm. " * 10, "title": "deploy",
                                                   "wait": True})
        assert done.status_code == 200 and done.json()["status"] == "done" and done.json()["chunks"] == 1
        both = client.post("/api/documents", json={"text": "x", "url": f"{web}/notes.txt"})
        assert both.status_code == 400 and "exactly one" in both.json()["error"]
        huge = client.post("/api/documents", json={"url": f"{web}/declared-huge", "wait": True})
        assert huge.status_code == 400 and "limit" in huge.json()["error"]
        assert client.get("/api/documents/nope").status_code == 404
        listed = client.get("/api/documents").json()
        assert listed["total"] >= 2


def test_cli_ingest_file_and_url_with_a_progress_bar(doc_daemon, web, tmp_path):
    daemon = doc_daemon
    path = tmp_path / "guide.md"
    path.write_text("# Guide\n\n" + "Rotate the Stripe API keys every quarter. " * 100)
    env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
    out = subprocess.run([sys.executable, "-m", "kenning", "ingest", str(path), "--json", "-p", "cli-docs"],
                         env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout[out.stdout.index("{"):])
    assert doc["status"] == "done" and doc["title"] == "guide.md" and doc["chunk_count"] >= 2
    url = subprocess.run([sys.executable, "-m", "kenning", "ingest", f"{web}/notes.txt"],
                         env=env, capture_output=True, text=True, timeout=180)
    assert url.returncode == 0, url.stderr
    assert "ingested" in url.stdout
    missing = subprocess.run([sys.executable, "-m", "kenning", "ingest", str(tmp_path / "nope.txt")],
                             env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert httpx.get(f"{daemon.base_url}/api/documents/{doc['id']}").json()["project"] == "cli-docs"
