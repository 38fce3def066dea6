"""A real local HTTP server speaking the OpenAI (`/v1/embeddings`) and Ollama (`/api/embed`)
embeddings protocols (the one kind of remote fake we allow).

Vectors are deterministic bag-of-words hashes, so recall still works; `fail = True` makes
every request answer 503, which is how tests break the embedding provider on purpose.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

DIMS = 32


def embed_text(text: str) -> list[float]:
    vec = np.zeros(DIMS, dtype=np.float32)
    for word in re.findall(r"\w+", text.lower()):
        vec[int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIMS] += 1.0
    norm = float(np.linalg.norm(vec)) or 1.0
    return (vec / norm).tolist()


class FakeEmbeddings:
    def __init__(self) -> None:
        self.fail = False
        self.requests = 0
        self.batch_sizes: list[int] = []
        self.authorization: str | None = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                owner.requests += 1
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.authorization = self.headers.get("authorization")
                ollama = self.path.endswith("/api/embed")
                if owner.fail or not (ollama or self.path.endswith("/embeddings")):
                    self.send_response(503 if owner.fail else 404)
                    self.end_headers()
                    self.wfile.write(b'{"error": "embedding backend down"}')
                    return
                texts = body.get("input") or []
                owner.batch_sizes.append(len(texts))
                if ollama:
                    reply = {"model": body.get("model"), "embeddings": [embed_text(t) for t in texts]}
                else:  # answer out of order: clients must sort by index
                    data = [{"index": i, "embedding": embed_text(t)} for i, t in enumerate(texts)]
                    reply = {"data": data[::-1], "model": body.get("model")}
                payload = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    def config_yaml(self, extra: str = "") -> str:
        return f"embedding:\n  provider: openai\n  url: {self.url}\n  model: fake-bow\n{extra}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
