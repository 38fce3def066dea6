"""Documents worker: leases `document_ingest` jobs and runs kenning.memory.documents.ingest_document.

A document that can never be ingested (wrong content type, too large, empty) is marked
failed at once and its job completes with the reason; other errors retry with backoff and
mark the document failed when the job's attempts are exhausted.
"""

from __future__ import annotations

from typing import Unpack

from kenning.core.config_pipeline import DocumentSettings
from kenning.memory.documents import JOB_TYPE, DocumentError, ingest_document, mark_failed
from kenning.memory.write import WritePath
from kenning.store import documents as doc_store
from kenning.store.jobs import Job
from kenning.workers.base import LeaseOptions, LeaseWorker, backoff_from_settings
from kenning.workers.deps import WorkerDeps

class DocumentsWorker(LeaseWorker):
    job_types = (JOB_TYPE,)

    def __init__(self, writer: WritePath, cfg: DocumentSettings, **kw: Unpack[LeaseOptions]) -> None:
        super().__init__("documents", writer.db, **kw)
        self.writer = writer
        self.cfg = cfg

    def handle(self, job: Job) -> dict[str, object]:
        doc_id = job.document_id or job.payload.get("document_id")
        if not doc_id:
            return {"skipped": "job has no document_id"}
        doc = doc_store.get_document(self.db.reader(), doc_id)
        if doc["status"] == "done":
            return {"skipped": "already ingested", "document_id": doc_id}
        try:
            return ingest_document(self.writer, doc_id, self.cfg)
        except DocumentError as exc:
            mark_failed(self.db, doc_id, str(exc))
            return {"failed": str(exc), "document_id": doc_id}
        except Exception as exc:
            if job.attempts >= job.max_attempts:
                mark_failed(self.db, doc_id, f"{type(exc).__name__}: {exc}")
            raise


def build(deps: WorkerDeps) -> DocumentsWorker:
    pipeline = deps.settings.pipeline
    return DocumentsWorker(
        deps.writer, pipeline.documents,
        poll_s=pipeline.documents.worker_interval_ms / 1000.0, **backoff_from_settings(pipeline.worker),
    )
