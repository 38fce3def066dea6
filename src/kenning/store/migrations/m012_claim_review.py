"""Re-score the memories older extraction rules wrote (issue 22): those that fail the claim test
(`kenning.core.claims`) move into review (`needs_review = 1`, evidence in `metadata.claim`);
nothing is deleted. See `kenning.store.claim_review`. A fresh database has nothing to judge.
"""

from __future__ import annotations

from kenning.core.clock import now_iso
from kenning.store.backend import Connection
from kenning.store.claim_review import rescore_learned


def up(conn: Connection) -> None:
    rescore_learned(conn, now_iso(), actor="migration m012")
