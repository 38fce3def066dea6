"""Documents worker: leases `document_ingest` jobs and runs kenning.memory.documents.ingest_document.

A document that can never be ingested (wrong content type, too large, empty) is marked
failed at once and its job completes with the reason; other errors retry with backoff and
mark the document failed when the job's attempts are exhausted.
"""

from __future__ import annotations

from typing import Any

from kenning.memory.documents import JOB_TYPE, DocumentError, ingest_document, mark_failed
from kenning.store import documents as doc_store
from kenning.store.jobs import Job
from kenning.workers.base import LeaseWorker, backoff_from_settings
from kenning.workers.manager import register_worker

class DocumentsWorker(LeaseWorker):
    job_types = (JOB_TYPE,)

    def __init__(self, db, embedder, cfg, secret_policy: str = "redact", **kw: Any) -> None:
        super().__init__("documents", db, **kw)
        self.embedder = embedder
        self.cfg = cfg
        self.secret_policy = secret_policy

    def handle(self, job: Job) -> dict[str, Any]:
        doc_id = job.document_id or job.payload.get("document_id")
        if not doc_id:
            return {"skipped": "job has no document_id"}
        doc = doc_store.get_document(self.db.reader(), doc_id)
        if doc["status"] == "done":
            return {"skipped": "already ingested", "document_id": doc_id}
        try:
            return ingest_document(self.db, self.embedder, doc_id, self.cfg, secret_policy=self.secret_policy)
        except DocumentError as exc:
            mark_failed(self.db, doc_id, str(exc))
            return {"failed": str(exc), "document_id": doc_id}
        except Exception as exc:
            if job.attempts >= job.max_attempts:
                mark_failed(self.db, doc_id, f"{type(exc).__name__}: {exc}")
            raise


@register_worker("documents")
def build(kenning) -> DocumentsWorker:
    pipeline = kenning.settings.pipeline
    return DocumentsWorker(
        kenning.db, kenning.embedder, pipeline.documents, kenning.settings.secrets,
        poll_s=pipeline.documents.worker_interval_ms / 1000.0, **backoff_from_settings(pipeline.worker),
    )
