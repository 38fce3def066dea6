"""A fit in its own short-lived process: `python -m kenning.predictor.fit`, spawned by the sidecar.

The process gets a job with the serving weights on stdin. A `train_from_db` job (`StoreRead`) reads
the store read-only and builds the samples here, starting from the training reads the previous fit
kept in a file (store.training_reads: only sessions scored since are read; the file is rewritten);
a `train` job brings its samples. Then it trains a copy of the weights in numpy (`train.train`:
epochs, then the validation gates), answers with the result and the new weights on stdout, and
exits. So the reads, the samples and a fit's allocations live only while a fit runs: the sidecar
stays at what scoring needs (issue 36). Neither imports torch (it trained here until issue 36 and
was ~220 MB of this process's memory); the BLAS under numpy runs on `threads` threads (its
environment variables, set for the child: they are read when numpy loads).

Both ends are kenning's own processes on a private pipe, so the job and the answer are pickles.
The process runs at background priority (nice BACKGROUND_NICE, like the daemon's workers: the
agent's hooks go first on a busy machine), dies with the sidecar thread that waits on it
(PR_SET_PDEATHSIG), and one that runs past its time is killed: the serving weights are never
touched until the sidecar swaps.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from kenning.core.activity import lower_priority
from kenning.predictor import constants as C
from kenning.predictor.features import Sample, load_samples, trust_of
from kenning.predictor.guard import die_with_parent
from kenning.predictor.history import load_all
from kenning.predictor.protocol import TrainRequest
from kenning.predictor.train import train
from kenning.predictor.weights import ScorerConfig, Weights
from kenning.store import predictor as store
from kenning.store.factory import open_location
from kenning.store.training_reads import CandidateRows, reading_through

TIMEOUT_MARGIN_S = 90.0  # beyond the time cap (the store's reads, the canary scoring): as long as trainer.train_now waits
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")  # numpy's BLAS, whichever it is


class FitError(Exception):
    """The fit process failed, died or ran past its time; the serving weights are unchanged."""


@dataclass
class StoreRead:
    """A `train_from_db` run: its sessions are read from the store in the fit process."""

    db: str  # the store: a SQLite file or a postgresql:// URL (opened read-only)
    params: TrainRequest
    reads_path: str | None  # the training reads the previous fit kept; rewritten by this one


@dataclass
class FitJob:
    config: ScorerConfig
    weights: Weights  # the serving weights (weights.initial's for an untrained scorer)
    store: StoreRead | None = None  # read the samples from the store (else they come with the job)
    recent: list[Sample] = field(default_factory=list)
    replay: list[Sample] = field(default_factory=list)
    canary: list[Sample] = field(default_factory=list)
    previous_trained: bool = False
    train: C.TrainConfig = field(default_factory=C.TrainConfig)


@dataclass
class FitOutcome:
    summary: dict[str, object]  # train.TrainResult.summary()
    weights: Weights | None  # the new weights when every gate passed
    read: dict[str, object] = field(default_factory=dict)  # what a StoreRead job read (train_from_db's answer)


@dataclass
class RunningFit:
    process: subprocess.Popen[bytes]
    timeout_s: float


def start(job: FitJob, *, threads: int = 1) -> RunningFit:
    """Spawn the fit process and hand it the job (the caller can drop its samples once this returns);
    its numpy computes on `threads` BLAS threads."""
    argv = [sys.executable, "-m", "kenning.predictor.fit", "--parent", str(os.getpid())]
    env = {**os.environ, **{name: str(max(1, threads)) for name in BLAS_THREADS}}
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    stdin, process.stdin = process.stdin, None  # written here once; communicate() only reads
    assert stdin is not None  # (PIPE)
    try:
        with stdin:
            pickle.dump(job, stdin, protocol=pickle.HIGHEST_PROTOCOL)
    except BrokenPipeError:  # it died before reading the job: finish() reports its exit
        pass
    return RunningFit(process, job.train.time_cap_s + TIMEOUT_MARGIN_S)


def finish(running: RunningFit) -> FitOutcome:
    """Wait for the fit's answer; FitError when the process failed or ran past its time (then killed)."""
    process = running.process
    try:
        answer, _ = process.communicate(timeout=running.timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise FitError(f"the fit process ran past {running.timeout_s:.0f} s and was stopped") from None
    if process.returncode != 0:
        raise FitError(f"the fit process exited with status {process.returncode} (its error is in the sidecar's log)")
    try:
        outcome = pickle.loads(answer)
    except (pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise FitError(f"the fit process answered something unreadable ({exc})") from exc
    if not isinstance(outcome, FitOutcome):
        raise FitError("the fit process answered something other than a fit outcome")
    return outcome


def read_store(read: StoreRead, native_dim: int) -> tuple[list[Sample], list[Sample], list[Sample], dict[str, object]]:
    """The recent, replay and canary samples of a `train_from_db` run, and what was read."""
    params = read.params
    reads = CandidateRows.load(Path(read.reads_path)) if read.reads_path else CandidateRows()
    db = open_location(read.db, read_only=True)
    try:
        conn = db.reader()
        min_conf = float(params.get("min_confidence") or C.MIN_SCORER_CONFIDENCE)
        model_name = params.get("embedding_model") or store.embedding_model_in_use(conn)
        sessions = store.eligible_sessions(conn, min_conf, int(params.get("limit") or C.TRAIN_LIMIT_SESSIONS))
        replay_rows = store.replay_sessions(conn, min_conf, int(params.get("replay_size") or C.REPLAY_BUFFER_SIZE))
        canary_keys = params.get("canary_keys") or []
        canary_rows = store.sessions_by_keys(conn, canary_keys) if canary_keys else []
        history, trust = load_all(conn), trust_of(conn)
        # the candidate rows of every session this fit loads, read only where earlier fits did not
        # (store.training_reads: new sessions in batches, the memories' current state for all)
        counts = reads.prepare(conn, [*sessions, *replay_rows, *canary_rows], model_name)
        decoded: dict[bytes | memoryview, np.ndarray] = {}  # one array per distinct vector across the three loads
        with reading_through(reads):
            recent, skipped = load_samples(conn, sessions, model_name, history, trust,
                                           half_life=C.RECENCY_HALF_LIFE_SESSIONS, native_dim=native_dim,
                                           decoded=decoded)
            replay, _ = load_samples(conn, replay_rows, model_name, history, trust, native_dim=native_dim,
                                     decoded=decoded)
            if canary_keys:
                canary, _ = load_samples(conn, canary_rows, model_name, history, trust, native_dim=native_dim,
                                         decoded=decoded)
            else:
                canary = sorted(recent, key=lambda s: -(s.meta.get("confidence") or 0))[:C.CANARY_SIZE]
    finally:
        db.close()
    reads.release()  # kept for the next fit: the session rows and vectors (no memory content)
    if read.reads_path:
        try:
            reads.save(Path(read.reads_path))
        except OSError as exc:  # the next fit reads everything again
            print(f"predictor fit: cannot keep the training reads ({exc})", file=sys.stderr)
    return recent, replay, canary, {
        "training_reads": counts.to_dict(), "embedding_model": model_name,
        "canary_keys": [s.session_key for s in canary], "samples_skipped": skipped,
        "recent_sessions": len(recent), "replay_sessions": len(replay),
        # the newest session start the model learned from: memories created after it are
        # unknown to the model (scoring treats them as unseen)
        "trained_through": max((started for s in sessions if (started := s.get("started_at"))), default=None)}


def _run(job: FitJob) -> FitOutcome:
    read: dict[str, object] = {}
    if job.store is not None:
        job.recent, job.replay, job.canary, read = read_store(job.store, job.config.native_dim)
    result = train(job.weights, job.recent, replay=job.replay, canary=job.canary,
                   previous_trained=job.previous_trained, config=job.train)
    return FitOutcome(result.summary(), result.model if result.swapped else None, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kenning.predictor.fit")
    parser.add_argument("--parent", type=int, help="the sidecar's pid")
    args = parser.parse_args(argv)
    if sys.platform.startswith("linux"):
        die_with_parent()  # the sidecar's thread that waits on this fit
    lower_priority()  # this process and the threads it starts from now on
    if args.parent is not None and os.getppid() != args.parent:
        os._exit(1)  # the sidecar was gone before the line above took hold
    answer: IO[bytes] = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # anything else printed goes to the sidecar's log
    job = pickle.load(sys.stdin.buffer)
    pickle.dump(_run(job), answer, protocol=pickle.HIGHEST_PROTOCOL)
    answer.flush()
    sys.stderr.flush()
    os._exit(0)  # the BLAS's worker threads may still run: no interpreter teardown under them


if __name__ == "__main__":
    # run the importable module's main, so what it pickles is kenning.predictor.fit.FitOutcome, not __main__'s
    from kenning.predictor import fit as importable

    sys.exit(importable.main())
