"""What the pipeline adds to the write path (kenning.memory.write.WritePath; the service passes
`DRAFT_RULES` and `IN_TX_HOOKS` to it when it builds it):

- draft rules: decision auto-protection (protection.protect_draft) at remember time, then the scope of a
  rule (scope.scope_draft: 'project' | 'area' | untold, issue 31);
- in-tx hook: enqueue an `extract` job in the SAME transaction as the new memory, so a
  memory never exists without its job and the raw content is committed before any LLM call.
  Pipeline-derived facts and document chunks are not enqueued (no extraction loops), nor a session
  end's key facts (already claims judged in their conversation; extracting them again wrote the
  same sentence, or with an LLM paraphrased copies of it), nor git
  commits: a commit is already one atomic record, and splitting its message stored fragments
  ("Resolves #30 (commit c32ca0f7bd)") as new memories, one extraction job per commit of the history.
"""

from __future__ import annotations

from kenning.core.activity import in_bulk_write
from kenning.core.types import MemoryDraft
from kenning.memory.git_history import RULE_SOURCE as GIT_RULE_SOURCE
from kenning.memory.git_history import SOURCE as GIT_SOURCE
from kenning.pipeline.protection import protect_draft
from kenning.pipeline.scope import scope_draft
from kenning.pipeline.writes import SOURCE_TAG
from kenning.sessions.overlay import SOURCE as SUMMARY_SOURCE
from kenning.store.backend import Connection
from kenning.store.jobs import enqueue_in_tx

EXTRACT_JOB = "extract"
NOT_EXTRACTED_TYPES = frozenset({"document_chunk", "episode"})  # episodes get the session-end overlay
NOT_EXTRACTED_SOURCES = frozenset({SOURCE_TAG, GIT_SOURCE, GIT_RULE_SOURCE, SUMMARY_SOURCE})  # already claims / records


def enqueue_extraction(conn: Connection, memory_id: str, draft: MemoryDraft) -> None:
    if draft.source in NOT_EXTRACTED_SOURCES or draft.type in NOT_EXTRACTED_TYPES:
        return
    # a memory stored in a bulk write (an import): its extraction may skip what is already known (runner)
    enqueue_in_tx(conn, EXTRACT_JOB, memory_id=memory_id, payload={"imported": True} if in_bulk_write() else None)


DRAFT_RULES = (protect_draft, scope_draft)
IN_TX_HOOKS = (enqueue_extraction,)
