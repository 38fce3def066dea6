"""The predictor sidecar's training reads, kept from one fit to the next (issue 36).

Each fit loads up to ~550 scored sessions (`train_from_db`: the recent ones, the replay buffer, the
canary), and each one's candidate rows came from `store.predictor.session_candidate_rows`: session
memories joined with their memories and their stored vectors, one statement per session, every fit
— at a million memories 16.7 ms each, ~9 s of database time per fit, competing with the agents'
recalls and session starts on the same server. Most of it is read again unchanged: a scored
session's candidate rows (its ranks, scores, relevance, ratings) and a vector (by content hash) do
not change. What does change is its memories' state — superseded, deleted, edited, accessed —
which the labels and the features read.

So `CandidateRows.prepare` reads, per fit:
- the candidate rows of the sessions it has not read yet (or that were scored again since), in
  batches of sessions, without the memory or the vector;
- every candidate memory's current columns (one batched read by id, no vectors): what the labels
  see is as fresh as a full read's;
- the vectors of content hashes it does not hold yet.
Sessions the fit no longer loads are dropped, with the memories and vectors only they used, so
the cache holds one fit's candidates at most. `reading_through(rows)` makes
`session_candidate_rows` answer from it (a context variable: only the fit's own thread sees it);
a session it was not prepared for still goes to the database.

Between fits (`release`, once the fit's samples are built) only what saves the next fit a read is
kept: the session rows and the vectors. The memories' columns (content, timestamps) are read again
by every `prepare`, so holding them between fits only cost memory. Each fit runs in a process of its
own (predictor.fit), so what is kept goes to a file between fits (`save` / `load`): a numpy .npz
without pickles — a JSON header, each session's rows as JSON one after another, the vectors as one
float32 array. A session's rows are held as its JSON text and parsed when the fit reads them, and
the vectors as read-only views of the loaded array: at a million memories (542 sessions, 108k rows,
28k vectors) a tuple per row and a bytes copy per vector raised a fit's memory by 125 MB at load.
`save` writes the arrays a session and a vector at a time. A file that cannot be read is ignored:
the fit reads everything.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar, cast

import numpy as np

from kenning.store.backend import Connection
from kenning.store.predictor import CANDIDATE_ROWS, CandidateRow, ScoredSession

T = TypeVar("T")

FILE_FORMAT = 2  # the .npz `save` writes (1: rows in the JSON header, vectors copied to bytes)

SESSION_BATCH = 200  # sessions per candidate-row read
ID_BATCH = 500  # memory ids (content hashes) per IN (...) lookup, well under SQLite's variable limit

# the session_memories columns of a candidate row, in CandidateRow's order
_SM_COLUMNS = ("memory_id", "source", "effective_score", "predictor_score", "baseline_rank", "predictor_rank",
               "final_score", "rank", "was_injected", "relevance_score", "fts_hit_count", "agent_relevance_score",
               "agent_feedback_count", "created_at", "team")
# the memories columns, as CandidateRow names them
_MEMORY_COLUMNS = {"content": "content", "importance": "importance", "access_count": "access_count",
                   "memory_created_at": "created_at", "memory_updated_at": "updated_at",
                   "last_accessed_at": "last_accessed_at", "superseded_by": "superseded_by",
                   "is_deleted": "is_deleted", "deleted_at": "deleted_at", "memory_project": "project"}
_NO_MEMORY: dict[str, object] = {name: None for name in _MEMORY_COLUMNS}


def _chunks(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _shared(value: object) -> object:
    """A str value as the one interned copy (the same text, held once); anything else as it is."""
    return sys.intern(value) if type(value) is str else value


def _write_array(npz: zipfile.ZipFile, name: str, dtype: str, length: int, chunks: Iterable[bytes | memoryview]) -> None:
    """One 1-d array member of an .npz, written a chunk at a time (no copy of the whole array)."""
    with npz.open(f"{name}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array_header_1_0(member, {"descr": dtype, "fortran_order": False, "shape": (length,)})
        for chunk in chunks:
            member.write(chunk)


def _read_array(npz: zipfile.ZipFile, name: str, dtype: str) -> bytes:
    """A 1-d array member `_write_array` wrote, as its bytes; ValueError when it is not one."""
    with npz.open(f"{name}.npy") as member:
        major, _ = np.lib.format.read_magic(member)
        read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        shape, fortran_order, found = read_header(member)
        data = member.read()
    if found != np.dtype(dtype) or len(shape) != 1 or len(data) != shape[0] * found.itemsize:
        raise ValueError(f"{name}: not the array this file should hold")
    return data


def _marks(n: int) -> str:
    return ",".join("?" * n)


@dataclass
class ReadCounts:
    """What the last `prepare` read from the database (the sidecar reports it with the fit)."""

    sessions_cached: int = 0  # sessions answered from earlier fits' reads
    sessions_read: int = 0  # sessions whose candidate rows were read now
    memories_read: int = 0  # memories whose current columns were read
    vectors_read: int = 0  # vectors read now (content hashes not held yet)
    statements: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"sessions_cached": self.sessions_cached, "sessions_read": self.sessions_read,
                "memories_read": self.memories_read, "vectors_read": self.vectors_read,
                "statements": self.statements}


@dataclass
class CandidateRows:
    """Candidate rows of scored sessions for one embedding model, prepared once per fit."""

    model: str | None = None
    last: ReadCounts = field(default_factory=ReadCounts)
    _rows: dict[str, tuple[int, bytes | memoryview]] = field(default_factory=dict)  # session key → (rows, JSON)
    _scored: dict[str, str | None] = field(default_factory=dict)  # session key → its scored_at when read
    _memories: dict[str, dict[str, object]] = field(default_factory=dict)  # memory id → columns, as of this fit
    _hashes: dict[str, str | None] = field(default_factory=dict)  # memory id → content hash, as of this fit
    _vectors: dict[str, tuple[bytes | memoryview | None, int | None]] = field(default_factory=dict)  # hash → vector
    _prepared: bool = False  # `rows` answers only between a `prepare` and the `release` after it

    def prepare(self, conn: Connection, sessions: Iterable[ScoredSession], model: str | None) -> ReadCounts:
        """Read what this fit's `sessions` need that is not held (see the module's docstring)."""
        if model != self.model:
            self.model = model
            self._rows.clear()
            self._scored.clear()
            self._vectors.clear()
        wanted = {s["session_key"]: s.get("scored_at") for s in sessions}
        counts = ReadCounts()
        for key in [k for k in self._rows if wanted.get(k, "") != self._scored[k]]:  # gone, or scored again
            del self._rows[key], self._scored[key]
        missing = [k for k in wanted if k not in self._rows]
        counts.sessions_cached = len(wanted) - len(missing)
        for keys in _chunks(missing, SESSION_BATCH):
            read: dict[str, list[list[object]]] = {key: [] for key in keys}
            cur = conn.execute(f"SELECT session_key, {', '.join(_SM_COLUMNS)} FROM session_memories"
                               f" WHERE session_key IN ({_marks(len(keys))}) ORDER BY session_key, rank, memory_id",
                               list(keys))
            counts.statements += 1
            for r in cur.fetchall():
                read[r[0]].append([r[c] for c in _SM_COLUMNS])
            for key, rows in read.items():
                self._rows[key] = (len(rows), json.dumps(rows, separators=(",", ":")).encode("utf-8"))
                self._scored[key] = wanted[key]
        counts.sessions_read = len(missing)
        ids = sorted({str(row[0]) for key in wanted for row in self._parsed(key) if row[0] is not None})
        self._memories, self._hashes = {}, {}
        for chunk in _chunks(ids, ID_BATCH):
            cur = conn.execute(f"SELECT id, content_hash, {', '.join(_MEMORY_COLUMNS.values())} FROM memories"
                               f" WHERE id IN ({_marks(len(chunk))})", list(chunk))
            counts.statements += 1
            for r in cur.fetchall():
                self._hashes[r[0]] = r[1]
                self._memories[r[0]] = {name: r[column] for name, column in _MEMORY_COLUMNS.items()}
        counts.memories_read = len(ids)
        hashes = {h for h in self._hashes.values() if h is not None}
        self._vectors = {h: v for h, v in self._vectors.items() if h in hashes}
        todo = sorted(hashes - self._vectors.keys())
        for chunk in _chunks(todo, ID_BATCH):
            cur = conn.execute(f"SELECT content_hash, vector, dims FROM embeddings WHERE model = ?"
                               f" AND content_hash IN ({_marks(len(chunk))})", [model, *chunk])
            counts.statements += 1
            for r in cur.fetchall():
                self._vectors[r[0]] = (r[1], r[2])
        for h in todo:
            self._vectors.setdefault(h, (None, None))  # no vector of this model: the LEFT JOIN's NULLs
        counts.vectors_read = len(todo)
        self.last = counts
        self._prepared = True
        return counts

    def release(self) -> None:
        """The fit has its samples: drop what only it needed (the memories' columns and content
        hashes, which the next `prepare` reads again); keep the session rows and the vectors."""
        self._memories, self._hashes = {}, {}
        self._prepared = False

    def save(self, path: Path) -> None:
        """Write what is kept between fits (call after `release`) to `path`, atomically."""
        present = [(h, v, d) for h, (v, d) in self._vectors.items() if v is not None]
        sessions, offset = {}, 0
        for key, (count, text) in self._rows.items():
            sessions[key] = [self._scored[key], count, offset, offset + len(text)]
            offset += len(text)
        header = {"format": FILE_FORMAT, "model": self.model, "sessions": sessions,
                  "vectors": [[h, d, len(v) // 4] for h, v, d in present],
                  "absent": [h for h, (v, _) in self._vectors.items() if v is None]}
        text = json.dumps(header).encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".reads-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle, zipfile.ZipFile(handle, "w") as npz:  # np.load reads it
                _write_array(npz, "header", "|u1", len(text), [text])
                _write_array(npz, "rows", "|u1", offset, (t for _, t in self._rows.values()))
                _write_array(npz, "vectors", "<f4", sum(len(v) for _, v, _ in present) // 4, (v for _, v, _ in present))
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: Path) -> CandidateRows:
        """What an earlier fit kept (`save`); empty when there is no file or it cannot be read."""
        try:
            with zipfile.ZipFile(path) as npz:
                header = json.loads(_read_array(npz, "header", "|u1").decode("utf-8"))
                if header.get("format") != FILE_FORMAT:
                    return cls()
                # one bytes value each, and views of it: a vector is hashable like the bytes a read gives
                text, floats = memoryview(_read_array(npz, "rows", "|u1")), memoryview(_read_array(npz, "vectors", "<f4"))
            kept = cls(model=header["model"])
            for key, (scored, count, start, stop) in header["sessions"].items():
                if not 0 <= start <= stop <= len(text):
                    return cls()
                kept._scored[key] = scored
                kept._rows[key] = (int(count), text[start:stop])
            offset = 0
            for content_hash, dims, length in header["vectors"]:
                kept._vectors[content_hash] = (floats[offset * 4:(offset + length) * 4], dims)
                offset += length
            if offset * 4 != len(floats):
                return cls()
            for content_hash in header["absent"]:
                kept._vectors[content_hash] = (None, None)
        except Exception:  # a cache: whatever a damaged file raises (numpy's header parser raises
            return cls()   # SyntaxError and tokenize errors too), the fit reads everything instead
        return kept

    def held(self) -> dict[str, int]:
        """What is held now: sessions, their candidate rows, memories' columns, vectors."""
        return {"sessions": len(self._rows), "rows": sum(count for count, _ in self._rows.values()),
                "memories": len(self._memories), "vectors": len(self._vectors)}

    def _parsed(self, session_key: str) -> list[tuple[object, ...]]:
        """A held session's rows (a memory id, source, team or time that repeats: one str each)."""
        _, text = self._rows[session_key]
        return [tuple(_shared(v) for v in row) for row in json.loads(bytes(text))]

    def rows(self, session_key: str, model: str | None) -> list[CandidateRow] | None:
        """The session's candidate rows as `session_candidate_rows` reads them; None when this
        session (or model) was not prepared."""
        if session_key not in self._rows or model != self.model or not self._prepared:
            return None
        out: list[CandidateRow] = []
        for values in self._parsed(session_key):
            memory_id = values[0]
            row: dict[str, object] = dict(zip(_SM_COLUMNS, values))
            row.update(self._memories.get(str(memory_id), _NO_MEMORY))
            content_hash = self._hashes.get(str(memory_id))
            vector, dims = self._vectors.get(content_hash, (None, None)) if content_hash else (None, None)
            row["vector"], row["dims"] = vector, dims
            out.append(cast(CandidateRow, row))
        return out


@contextmanager
def reading_through(rows: CandidateRows) -> Iterator[CandidateRows]:
    """Within the block (this thread and context only) `session_candidate_rows` answers from `rows`."""
    token = CANDIDATE_ROWS.set(rows.rows)
    try:
        yield rows
    finally:
        CANDIDATE_ROWS.reset(token)
