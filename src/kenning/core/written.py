"""What a session wrote, by kind (issue 35): one account for `kenning review -s learned`, the session
views and the dashboard, so none of them says "taught nothing" while the session's episodes are shown
to the next one.

- `episode`: an exchange of the session, kept to be recalled later (sessions.episodes);
- `commit`: a git commit made during the session (memory.git_history);
- `claim`: a rule, decision or fact kenning extracted from what was said (the claim test's evidence,
  or a learning writer: session summary, pipeline extraction, observer);
- `note`: what the agent stored itself (MCP remember) during the session.
"""

from __future__ import annotations

KINDS = ("episode", "claim", "commit", "note")
PLURAL = {"episode": "episodes", "claim": "claims", "commit": "commits", "note": "notes"}
EPISODE_SOURCE = "session-episode"
COMMIT_SOURCE = "git"
CLAIM_SOURCES = ("session-summary", "pipeline-v2:extracted-fact", "observer")


def kind_of(source: str | None, has_claim: bool = False) -> str:
    """The kind of a memory a session wrote, from its source (and whether it carries claim evidence)."""
    if source == EPISODE_SOURCE:
        return "episode"
    if source == COMMIT_SOURCE:
        return "commit"
    if has_claim or source in CLAIM_SOURCES:
        return "claim"
    return "note"


def account(counts: dict[str, int]) -> str:
    """'wrote 3 episodes, 1 claim' / 'wrote nothing' from {kind: n}."""
    parts = [f"{counts[k]} {PLURAL[k] if counts[k] != 1 else k}" for k in KINDS if counts.get(k)]
    return "wrote " + ", ".join(parts) if parts else "wrote nothing"
