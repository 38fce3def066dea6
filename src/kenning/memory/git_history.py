"""Git history as memory: one memory per commit, incremental per repository (issue 10).

- `open_repository`: the work tree's top level (`git rev-parse --show-toplevel`); a path that
  is not a git work tree is an `InvalidInput` with one line saying so.
- `new_commits`: the commits reachable from HEAD, merges skipped (`--no-merges`), that this
  store has not ingested for the repository yet, oldest first, read with one
  `git log --no-walk=unsorted --stdin --name-status` (bytes decoded as UTF-8 with
  replacement, so odd encodings never fail an ingest).
- `commit_draft`: subject and body (the rationale) as content, `source='git'`, type `commit`
  (issue 31: a commit records what was done; it is found by a query, linked to its files, never typed
  as a rule: the caller's type is explicit, so decision auto-protection leaves "switch to monotonic
  time" a commit), the author date as `created_at` (when the change was made; it survives rebases,
  which rewrite the committer date), sha/author/committer date in metadata, changed files in
  `related_files`.
- `body_rules`: a rule stated in a commit's body ("Keep MAX_ATTEMPTS = 7; do not round it up.") goes
  through the one claim test (core.claims.judge) like chat text, and is kept only when it says it holds
  beyond the change (always / never / don't / must / has to: a commit's imperatives otherwise describe
  the change itself, "Use chain.from_iterable in listutils.py"); stored as its own memory
  (`source='git-rule'`) derived from the commit memory, the commit as its evidence.
- rules the code has left behind: a file a commit deletes or renames (and that is not in the work tree
  now) makes the area rules keyed on it stale, that commit as evidence (store.rule_scope.mark_stale).
- `ingest_commits`: drafts go through the one write path (`remember_many`, batched: dedup,
  draft rules, embedding outside the transaction), then the batch's shas are recorded in
  `git_commits` (store/git_history.py). A crash between the two re-ingests the batch next
  time, and exact-duplicate detection maps it onto the memories already stored.
- `GitIngest`: the service component; runs an ingest inline or in a background thread and
  keeps each run's progress for `GET /api/ingest/git/{id}`. One run per repository at a time.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kenning.core import claims
from kenning.core.clock import normalize_iso, now_iso
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.limits import check_path
from kenning.core.telemetry import log_event, record_error
from kenning.core.types import MemoryDraft
from kenning.memory.write import RememberResult
from kenning.store import git_history as store
from kenning.store import rule_scope
from kenning.store.backend import Connection, StoreDatabase
from kenning.store.git_history import Repository

SOURCE = "git"
RULE_SOURCE = "git-rule"  # a rule stated in a commit's body (issue 31)
COMMIT_TYPE = "commit"
TAG = "git"
BATCH = 64
IMPORTANCE_WITH_RATIONALE = 0.5  # a commit whose body says why
IMPORTANCE_SUBJECT_ONLY = 0.3  # "bump version", "typo": noise more often than not
MAX_CONTENT_CHARS = 8000
MAX_FILES = 200
KEPT_RUNS = 100  # finished runs remembered for GET /api/ingest/git/{id}
GIT_TIMEOUT_S = 300
_FIELD, _RECORD = "\x1f", "\x1e"
_FORMAT = "%x1e%H%x1f%aI%x1f%cI%x1f%an%x1f%s%x1f%b%x1f"
_GIT_CONFIG = ("-c", "core.quotepath=off", "-c", "i18n.logOutputEncoding=UTF-8", "-c", "core.fsmonitor=false")

Progress = Callable[[int, int], None]
RememberMany = Callable[..., list[RememberResult]]  # WritePath.remember_many


@dataclass(frozen=True)
class Commit:
    sha: str
    authored_at: str
    committed_at: str
    author: str
    subject: str
    body: str
    files: tuple[str, ...] = ()
    gone: tuple[tuple[str, str], ...] = ()  # (path, 'deleted' | 'renamed to …') from --name-status


def _git(repo: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    if shutil.which("git") is None:
        raise InvalidInput("git is not installed (the `git` command was not found on PATH)")
    try:
        return subprocess.run(["git", *_GIT_CONFIG, "-C", repo, *args], input=stdin, capture_output=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise InvalidInput(f"git {args[0]} in {repo} took longer than {GIT_TIMEOUT_S} s") from exc


def _first_line(raw: bytes) -> str:
    lines = raw.decode("utf-8", errors="replace").strip().splitlines()
    return lines[0] if lines else "git failed"


def open_repository(path: str | Path) -> Path:
    """The top level of the git work tree at `path` (any folder inside it)."""
    where = Path(check_path("path", str(path))).expanduser()  # too long a path: InvalidInput, not OSError
    if not where.is_dir():
        raise InvalidInput(f"{path}: no such directory")
    done = _git(str(where.resolve()), "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise InvalidInput(f"{path}: not a git repository ({_first_line(done.stderr)})")
    return Path(done.stdout.decode("utf-8", errors="replace").strip()).resolve()


def default_project(repo: Path) -> str:
    return repo.name


def _reachable(repo: str) -> list[str]:
    """Non-merge commits reachable from HEAD, newest first; [] for a repository with none."""
    if _git(repo, "rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
        return []
    done = _git(repo, "rev-list", "--no-merges", "HEAD")
    if done.returncode != 0:
        raise InvalidInput(f"{repo}: git rev-list failed ({_first_line(done.stderr)})")
    return done.stdout.decode("ascii", errors="replace").split()


def _changes(block: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The files a commit touched (as they are after it) and those it deleted or renamed away, from
    `--name-status` lines ("M\\tpath", "D\\tpath", "R100\\told\\tnew"); a bare line is a path (--name-only)."""
    files: list[str] = []
    gone: list[tuple[str, str]] = []
    for line in (raw.strip() for raw in block.splitlines()):
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) == 1:
            files.append(parts[0])
        elif parts[0].startswith("R") and len(parts) == 3:
            files.append(parts[2])
            gone.append((parts[1], f"renamed to {parts[2]}"))
        else:
            files.append(parts[-1])
            if parts[0] == "D":
                gone.append((parts[-1], "deleted"))
    return tuple(files), tuple(gone)


def parse_log(raw: bytes) -> list[Commit]:
    """Parse `git log --format=_FORMAT --name-status` output (records split by \\x1e)."""
    commits = []
    for record in raw.decode("utf-8", errors="replace").split(_RECORD):
        if not record.strip():
            continue
        head, _, files = record.rpartition(_FIELD)
        parts = head.split(_FIELD, 5)
        if len(parts) != 6:
            continue
        sha, authored, committed, author, subject, body = parts
        touched, gone = _changes(files)
        commits.append(Commit(
            sha=sha.strip(), authored_at=normalize_iso(authored.strip()), committed_at=normalize_iso(committed.strip()),
            author=author.strip(), subject=subject.strip(), body=body.strip(),
            files=touched, gone=gone,
        ))
    return commits


def read_commits(repo: str, shas: Sequence[str]) -> list[Commit]:
    """The given commits with their messages and changed files, oldest first."""
    if not shas:
        return []
    done = _git(repo, "log", "--no-walk=unsorted", "--stdin", f"--format={_FORMAT}", "--name-status",
                stdin=("\n".join(shas) + "\n").encode("ascii"))
    if done.returncode != 0:
        raise InvalidInput(f"{repo}: git log failed ({_first_line(done.stderr)})")
    return sorted(parse_log(done.stdout), key=lambda c: (c.authored_at, c.committed_at))


def commit_content(commit: Commit) -> str:
    """Subject, body (the rationale) and the short sha, which also keeps two commits with the
    same message from being merged as exact duplicates."""
    subject = commit.subject or "(no commit message)"
    text = f"{subject}\n\n{commit.body}" if commit.body else subject
    if len(text) > MAX_CONTENT_CHARS:
        text = text[:MAX_CONTENT_CHARS].rstrip() + " …"
    return f"{text}\n\n(commit {commit.sha[:10]})"


def commit_draft(commit: Commit, *, project: str | None, repo: str) -> MemoryDraft:
    return MemoryDraft(
        content=commit_content(commit), type=COMMIT_TYPE, type_explicit=True,
        importance=IMPORTANCE_WITH_RATIONALE if commit.body else IMPORTANCE_SUBJECT_ONLY,
        tags=[TAG], project=project, source=SOURCE, related_files=list(commit.files[:MAX_FILES]),
        created_at=commit.authored_at,
        metadata={"sha": commit.sha, "repo": repo, "author": commit.author, "committed_at": commit.committed_at,
                  "files_changed": len(commit.files)},
    )


# says it holds beyond the change: a modal anywhere, emphasis in capitals, or always / never / don't as a command
# (at the start of a clause, or after we / you / to / should / must). "cStringIO instances … don't work with the zip
# library" and "these get cached and never get `enter` called" describe the code; "do not round it up" and
# "Tombstones never appear in the output" (a short subject, then never) are rules.
_HOLDS = re.compile(
    r"\b(?:must(?:n't| not)?|has to|have to|shall)\b|\b(?:ONLY|NEVER|MUST|NOT)\b|\bstrictly\b"
    r"|(?:^|[,;:(—–]\s*|\s-\s+|\b(?:we|you|to|should|must)\s+|^(?:the\s+)?[A-Za-z]\w*(?:\s+[A-Za-z]\w*)?\s+)"
    r"(?i:always|never|don'?t|do not|no longer)\b")
_WRAPPED = re.compile(r"(?<!\n)\n(?!\n|\s*[-*•] )")  # a hard-wrapped line (not a paragraph or bullet break)


def body_rules(commit: Commit, memory_id: str, *, project: str | None, repo: str) -> list[MemoryDraft]:
    """The rules a commit's body states in its own words, each through the claim test with the commit as
    evidence (derived from the commit's memory)."""
    out: list[MemoryDraft] = []
    previous = None
    for sentence in claims.sentences(_WRAPPED.sub(" ", commit.body or "")):
        sentence = sentence.lstrip("-*• ").strip()
        verdict = claims.judge(sentence, claims.Context(speaker="unknown", previous=previous))
        previous = sentence
        if not verdict.kept or verdict.type not in claims.RULE_TYPES or not _HOLDS.search(claims.own_words(sentence)):
            continue
        evidence: dict[str, object] = {**(verdict.evidence.to_dict() if verdict.evidence else {}), "rule": "commit-body",
                    "commit": commit.sha, "repo": repo}
        out.append(MemoryDraft(
            content=verdict.text, type=verdict.type, type_explicit=True, importance=IMPORTANCE_WITH_RATIONALE,
            confidence=verdict.confidence, needs_review=verdict.confidence < claims.REVIEW_BELOW,
            tags=[TAG], project=project, source=RULE_SOURCE, related_files=list(commit.files[:MAX_FILES]),
            created_at=commit.authored_at, derived_from=[memory_id],
            metadata={claims.EVIDENCE_KEY: evidence, "commit": commit.sha},
        ))
    return out


@dataclass
class IngestRun:
    id: str
    repo: str
    project: str | None
    status: str = "running"  # running | done | failed
    total: int = 0
    done: int = 0
    created: int = 0
    deduped: int = 0
    refused: int = 0  # refused by the write path (secrets policy 'reject'); retried next time
    skipped_known: int = 0
    error: str | None = None
    started_at: str = field(default_factory=now_iso)
    finished_at: str | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _store_batch(remember_many: RememberMany, drafts: list[MemoryDraft]) -> list[RememberResult | None]:
    """One remember_many call; if the write path refuses the batch (e.g. `secrets: reject` on
    one commit), the commits one by one, None for each refused one."""
    try:
        return [*remember_many(drafts, actor="git-ingest")]
    except InvalidInput:
        if len(drafts) == 1:
            return [None]
    results: list[Any] = []
    for draft in drafts:
        try:
            results += remember_many([draft], actor="git-ingest")
        except InvalidInput as exc:
            record_error("ingest", f"commit {draft.metadata.get('sha', '?')[:10]} not stored: {exc}")
            results.append(None)
    return results


def ingest_commits(db: StoreDatabase, remember_many: RememberMany, repo: str, project: str | None, commits: Sequence[Commit],
                   *, progress: Progress | None = None, batch: int = BATCH) -> dict[str, int]:
    """Store commits as memories in batches and record them: {created, deduped, refused}.
    A refused commit is not recorded, so a later ingest (under another policy) tries it again."""
    counts = {"created": 0, "deduped": 0, "refused": 0}
    note = progress or (lambda done, total: None)
    note(0, len(commits))
    for start in range(0, len(commits), batch):
        chunk = commits[start:start + batch]
        results = _store_batch(remember_many, [commit_draft(c, project=project, repo=repo) for c in chunk])
        stored = [(c, r) for c, r in zip(chunk, results) if r is not None]
        rules = [d for c, r in stored if not r.deduped for d in body_rules(c, r.id, project=project, repo=repo)]
        if rules:
            _store_batch(remember_many, rules)
        with db.with_write_tx() as conn:
            store.record_commits(conn, repo, project, [(c.sha, r.id, c.authored_at) for c, r in stored])
            _leave_behind(conn, repo, project, [c for c, _ in stored if c.gone])
        counts["created"] += sum(not r.deduped for _, r in stored)
        counts["deduped"] += sum(r.deduped for _, r in stored)
        counts["refused"] += len(chunk) - len(stored)
        note(start + len(chunk), len(commits))
    return counts


def _leave_behind(conn: Connection, repo: str, project: str | None, commits: Sequence[Commit]) -> None:
    """Area rules keyed on a file these commits deleted or renamed away, not in the work tree now: stale."""
    for commit in commits:
        for path, reason in commit.gone:
            if (Path(repo) / path).exists():  # deleted then, back now: the rule's code is there
                continue
            for memory_id in rule_scope.area_rules_on_file(conn, project, path):
                rule_scope.mark_stale(conn, memory_id, at=now_iso(), actor="git-ingest",
                                      stale={"commit": commit.sha, "path": path, "symbol": None, "reason": reason})


class GitIngest:
    """`kenning ingest git` behind the service: plan, run inline or in the background, report."""

    def __init__(self, db: StoreDatabase, remember_many: RememberMany) -> None:
        self.db = db
        self.remember_many = remember_many
        self._runs: dict[str, IngestRun] = {}
        self._active: dict[str, str] = {}  # repo -> run id
        self._lock = threading.Lock()

    def plan(self, path: str | Path, project: str | None = None) -> tuple[IngestRun, list[str]]:
        """Validate the repository and list the commits still to ingest (newest first)."""
        repo = open_repository(path)
        known = store.ingested_shas(self.db.reader(), str(repo))
        reachable = _reachable(str(repo))
        pending = [sha for sha in reachable if sha not in known]
        run = IngestRun(id=uuid.uuid4().hex[:12], repo=str(repo), project=project or default_project(repo),
                        total=len(pending), skipped_known=len(reachable) - len(pending))
        return run, pending

    def _claim(self, run: IngestRun) -> None:
        with self._lock:
            if run.repo in self._active:
                raise Conflict(f"{run.repo} is already being ingested (run {self._active[run.repo]})")
            self._active[run.repo] = run.id
            self._runs[run.id] = run
            for old in [r for r in self._runs.values() if r.status != "running"][:-KEPT_RUNS]:
                self._runs.pop(old.id, None)

    def _execute(self, run: IngestRun, pending: list[str], progress: Progress | None) -> IngestRun:
        def note(done: int, total: int) -> None:
            run.done, run.total = done, total
            if progress is not None:
                progress(done, total)

        try:
            commits = read_commits(run.repo, pending)
            counts = ingest_commits(self.db, self.remember_many, run.repo, run.project, commits, progress=note)
            run.created, run.deduped, run.refused = counts["created"], counts["deduped"], counts["refused"]
            run.status = "done"
            log_event("ingest", "git history ingested", repo=run.repo, created=run.created, deduped=run.deduped,
                      refused=run.refused)
        except Exception as exc:
            run.status, run.error = "failed", str(exc)
            record_error("ingest", f"git ingest of {run.repo} failed: {exc}")
            raise
        finally:
            run.finished_at = now_iso()
            with self._lock:
                self._active.pop(run.repo, None)
        return run

    def ingest(self, path: str | Path, project: str | None = None, *, progress: Progress | None = None) -> IngestRun:
        """Ingest the repository's new commits in this thread."""
        run, pending = self.plan(path, project)
        self._claim(run)
        return self._execute(run, pending, progress)

    def start(self, path: str | Path, project: str | None = None) -> IngestRun:
        """Validate now, ingest in a background thread; poll `get(run.id)` for progress."""
        run, pending = self.plan(path, project)
        self._claim(run)

        def work() -> None:
            try:
                self._execute(run, pending, None)
            except Exception:  # background boundary: the run records the error
                pass

        threading.Thread(target=work, name=f"git-ingest-{run.id}", daemon=True).start()
        return run

    def get(self, run_id: str) -> IngestRun:
        run = self._runs.get(run_id)
        if run is None:
            raise NotFound(f"no git ingest run {run_id!r}")
        return run

    def repositories(self) -> list[Repository]:
        return store.list_repositories(self.db.reader())
