"""SSRF guard (issue 12 item 5): URL documents never reach loopback/private/link-local/multicast/
unspecified targets, in any spelling and after any redirect, unless allow_private_urls is on.

Refusals are decided from the resolved address before any connection, so the private and
link-local literals below never send a packet. The redirect case needs a *public* address that
is still local: it runs in a fresh network namespace (`unshare -n`) that has no route off the
machine, with the public-looking address on that namespace's own loopback link.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kenning.memory.documents import DocumentError, fetch_url
from kenning.memory.urlguard import check_url

from .conftest import REQUESTS

LOOPBACK_HOSTS = ["127.0.0.1", "127.1", "0x7f000001", "2130706433", "localhost", "[::1]", "[::ffff:127.0.0.1]",
                  "017700000001", "127.0.0.2"]
OTHER_REFUSED = {  # host → the reason the refusal names
    "10.1.2.3": "private", "192.168.0.10": "private", "172.16.5.4": "private", "169.254.169.254": "link-local",
    "[fe80::1]": "link-local", "224.0.0.1": "multicast", "0.0.0.0": "unspecified", "[::]": "unspecified",
    "[fd00::1]": "private", "100.64.0.1": "non-public",
}


def _port(web: str) -> int:
    return int(web.rsplit(":", 1)[1])


@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
def test_every_loopback_spelling_is_refused(host, web):
    url = f"http://{host}:{_port(web)}/article.html"
    before = len(REQUESTS)
    with pytest.raises(DocumentError, match="loopback|resolve"):
        fetch_url(url)
    assert len(REQUESTS) == before, "the local server must not have been reached"


@pytest.mark.parametrize("host,reason", sorted(OTHER_REFUSED.items()))
def test_private_link_local_multicast_unspecified_are_refused(host, reason):
    with pytest.raises(DocumentError, match=reason):
        fetch_url(f"http://{host}/latest/meta-data/")
    with pytest.raises(Exception, match=reason):
        check_url(f"http://{host}/", allow_private=False)


def test_allowed_with_the_flag_and_redirects_are_followed_and_bounded(web):
    page = fetch_url(f"{web}/redirect?hops=2&to=/article.html", allow_private=True)
    assert page.title == "Billing Runbook"
    with pytest.raises(DocumentError, match="redirected more than 2"):
        fetch_url(f"{web}/redirect?hops=5&to=/article.html", allow_private=True, max_redirects=2)


def test_daemon_refuses_loopback_urls_by_default(daemon, web):
    """POST /api/documents {url} answers 400 naming the reason; nothing is fetched or stored."""
    before = len(REQUESTS)
    with daemon.client() as client:
        total = client.get("/api/documents").json()["total"]
        for host in LOOPBACK_HOSTS[:7]:
            response = client.post("/api/documents", json={"url": f"http://{host}:{_port(web)}/article.html"})
            assert response.status_code == 400, (host, response.text)
            assert "allow_private_urls" in response.json()["error"]
        own = client.post("/api/documents", json={"url": f"{daemon.base_url}/api/memory", "wait": True})
        assert own.status_code == 400 and "loopback" in own.json()["error"]
        metadata = client.post("/api/documents", json={"url": "http://169.254.169.254/latest/meta-data/"})
        assert metadata.status_code == 400 and "link-local" in metadata.json()["error"]
        assert client.get("/api/documents").json()["total"] == total
    assert len(REQUESTS) == before


def test_daemon_with_the_flag_fetches_a_local_server_through_redirects(doc_daemon, web):
    with doc_daemon.client() as client:
        done = client.post("/api/documents", json={"url": f"{web}/redirect?hops=1&to=/notes.txt", "wait": True})
        assert done.status_code == 200, done.text
        assert done.json()["status"] == "done" and done.json()["chunks"] >= 1


NETNS_SCRIPT = textwrap.dedent("""
    import json, sys, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from kenning.memory.documents import DocumentError, fetch_url

    hits = []

    class Secret(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            hits.append(self.path)
            body = b"internal admin page"
            self.send_response(200); self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)

    inner = ThreadingHTTPServer(("127.0.0.1", 0), Secret)
    target = f"http://127.0.0.1:{inner.server_address[1]}/admin"

    class Public(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            self.send_response(302); self.send_header("Location", target)
            self.send_header("Content-Length", "0"); self.end_headers()

    outer = ThreadingHTTPServer((sys.argv[1], 0), Public)
    for server in (inner, outer):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://{sys.argv[1]}:{outer.server_address[1]}/docs"
    result = {}
    try:
        fetch_url(url, timeout_s=10)
        result["default"] = "fetched"
    except DocumentError as exc:
        result["default"] = str(exc)
    result["hits_after_default"] = list(hits)
    result["allowed"] = fetch_url(url, timeout_s=10, allow_private=True).content
    print(json.dumps(result))
""")


def test_public_url_redirecting_to_loopback_is_refused_at_the_second_hop(tmp_path: Path):
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip (iproute2) to build an isolated network namespace")
    public = "11.11.11.11"  # global-looking; exists only on the namespace's own lo, which has no route out
    setup = (f"ip link set lo up && ip addr add {public}/32 dev lo "
             f"&& exec {sys.executable} {tmp_path / 'ssrf.py'} {public}")
    (tmp_path / "ssrf.py").write_text(NETNS_SCRIPT)
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace here: {probe.stderr.strip()}")
    out = subprocess.run(["unshare", "-n", "sh", "-c", setup], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    assert "loopback" in result["default"] and "127.0.0.1" in result["default"], result
    assert result["hits_after_default"] == [], "the loopback target must never be requested"
    assert result["allowed"] == "internal admin page"  # the same chain works when the user allows it
