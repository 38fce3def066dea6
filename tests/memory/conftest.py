"""A real local HTTP server that serves the pages the document tests fetch."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from bench.harnesses.daemon import start_daemon

PRIVATE_URLS_CONFIG = "pipeline:\n  documents:\n    worker_interval_ms: 1000\n    allow_private_urls: true\n"
REQUESTS: list[str] = []  # every path the local server was asked for (SSRF tests check it stays empty)

ARTICLE = """<!doctype html><html><head><title>Billing Runbook</title>
<style>body { color: red }</style><script>var secret = "do-not-index";</script></head>
<body><h1>Billing</h1><p>We switched from MySQL to PostgreSQL for billing &amp; invoicing.</p>
<p>Invoices are generated nightly by the Celery worker.</p></body></html>"""


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def _send(self, status: int, ctype: str, body: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 (http.server API)
        path = self.path
        REQUESTS.append(path)
        if path.startswith("/redirect"):  # /redirect?to=URL[&hops=N]: N redirects to self, then to URL
            query = parse_qs(urlsplit(path).query)
            hops = int(query.get("hops", ["0"])[0])
            target = query["to"][0] if hops <= 0 else f"/redirect?hops={hops - 1}&to={query['to'][0]}"
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if path == "/article.html":
            return self._send(200, "text/html; charset=utf-8", ARTICLE.encode())
        if path == "/notes.txt":
            return self._send(200, "text/plain", ("Kafka topic retention is 7 days. " * 200).encode())
        if path == "/data.json":
            return self._send(200, "application/json", b'{"service": "billing", "db": "PostgreSQL"}')
        if path == "/image.png":
            return self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
        if path == "/declared-huge":
            return self._send(200, "text/plain", b"tiny", length=50_000_000)
        if path == "/undeclared-huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()  # no Content-Length: only the running byte counter can stop it
            try:
                for _ in range(64):
                    self.wfile.write(b"x" * 8192)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return None
        if path == "/slow":
            time.sleep(3)
            return self._send(200, "text/plain", b"finally")
        if path == "/missing":
            return self._send(404, "text/plain", b"nope")
        return self._send(404, "text/plain", b"unknown path")


@pytest.fixture(scope="session")
def web():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def doc_daemon(tmp_path_factory):
    """A real daemon that may fetch loopback URLs (the local test server) and runs its worker every second."""
    proc = start_daemon(tmp_path_factory.mktemp("doc-daemon-home"), PRIVATE_URLS_CONFIG)
    yield proc
    proc.stop()
