"""The predictor sidecar: `python -m kenning.predictor.sidecar --db PATH --checkpoint PATH`.

JSON-RPC 2.0, one JSON object per line on stdin/stdout. Methods:
  score           {candidate_ids, candidate_embeddings | candidate_embeddings_b64 + embedding_dims,
                   candidate_texts?, candidate_features (N x 12), context_embedding(_b64)?,
                   context_text?, project?} → {scores: [{id, score}], model_ready, model_version}
  train           {sessions: [score params + labels (+ temperature)]} → training result
  train_from_db   {limit?, epochs?, canary_keys?, time_cap_s?, trigger?} → training result
  status          → {trained, model_ready, model_version, param_count, training, ...}
  save_checkpoint {path?} → {path, bytes}
  load_checkpoint {path?} → {path, model_version}  (a corrupt file is refused; the old model serves)
Scoring runs the serving weights in numpy (`predictor.weights`): this process never imports torch.
A training run is a short-lived fit process (`predictor.fit`, numpy too), waited on by a worker
thread: it reads the store read-only (and the training reads the previous fit kept, in a file
beside the checkpoint), trains, and answers new weights; scoring keeps answering from the serving
weights meanwhile, and the swap is one reference assignment. Neither process writes the database
(the daemon records training results). The process exits on
stdin EOF or when its parent process goes away, so it can never outlive the daemon.
`--fault hang|crash|garbage` (optionally only while `--fault-file` exists) makes `score`
misbehave, for the supervision tests.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import TextIO, cast

from kenning.predictor.guard import expected_parent, start_guard

if __name__ == "__main__":
    # The guard is forked before numpy and the store are imported: forked after them it starts as a
    # copy-on-write image of the whole interpreter, and the sidecar's own writes (reference counts,
    # collections, a fit's reads) turn that image into the guard's private memory: ~110 MB a minute
    # after start at 200k memories when torch was loaded here (issue 36). Forked here it holds ~10 MB.
    start_guard(expected_parent())

from kenning.core.clock import now_iso  # noqa: E402 (after the guard's fork, above)
from kenning.predictor import checkpoint as ckpt
from kenning.predictor import constants as C
from kenning.predictor import fit
from kenning.predictor.features import request_sample
from kenning.predictor.protocol import (
    CheckpointMeta,
    CheckpointReply,
    CheckpointRequest,
    RpcId,
    ScoreReply,
    ScoreRequest,
    TrainRequest,
)
from kenning.predictor.weights import ScorerConfig, Weights, initial


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Engine:
    """Holds the serving weights; has fits train new ones; swaps atomically; saves checkpoints."""

    def __init__(self, *, db_path: str | Path | None, checkpoint_path: Path | None,
                 base_weights: Path | None = None, native_dim: int = 384, seed: int = 0, threads: int = 1) -> None:
        self.db_path = db_path
        self.threads = max(1, threads)  # the fit process's BLAS threads
        self.checkpoint_path = checkpoint_path
        self.started = time.monotonic()
        self.scores_processed = 0
        self.trainings_completed = 0
        self.training = False
        self.total_steps = 0
        self.training_pairs = 0
        self.last_trained: str | None = None
        self.load_error: str | None = None
        self._train_lock = threading.Lock()
        # the training reads one fit keeps for the next (store.training_reads): beside the checkpoint,
        # else in a folder of this process's own
        self._scratch = None if checkpoint_path else tempfile.TemporaryDirectory(prefix="kenning-sidecar-")
        self.reads_path = (Path(checkpoint_path).with_suffix(".reads.npz") if checkpoint_path
                           else Path(self._scratch.name if self._scratch else ".") / "reads.npz")
        self.flags = 0
        self.model_version = 0
        weights = None
        for path, is_base in ((checkpoint_path, False), (base_weights, True)):
            if path is None or not Path(path).exists():
                continue
            try:
                weights, flags, meta = ckpt.load(path)
            except ckpt.CheckpointError as exc:
                self.load_error = str(exc)
                print(f"predictor: {exc}; ignoring it", file=sys.stderr)
                continue
            self.flags = flags | (ckpt.FLAG_PRETRAINED_BASE if is_base else 0)
            self.model_version = int(meta.get("model_version", 0))
            self.total_steps = int(meta.get("steps", 0))
            self.training_pairs = int(meta.get("training_pairs", 0))
            self.last_trained = meta.get("last_trained")
            break
        # untrained: the seeded initialisation (same seed, same weights)
        self.weights: Weights = weights or initial(ScorerConfig(native_dim=native_dim, seed=seed))

    @property
    def trained(self) -> bool:
        return bool(self.flags & (ckpt.FLAG_FINETUNED | ckpt.FLAG_PRETRAINED_BASE))

    # -- methods ---------------------------------------------------------------
    def score(self, params: ScoreRequest) -> ScoreReply:
        weights = self.weights  # one reference: a concurrent swap cannot tear this request
        try:
            sample = request_sample(params, weights.config.native_dim)
        except (ValueError, TypeError, KeyError) as exc:
            raise RpcError(-32602, f"invalid score params: {exc}") from exc
        scores = weights.score(sample)
        self.scores_processed += 1
        return {"scores": [{"id": i, "score": float(s)} for i, s in zip(sample.ids, scores)],
                "model_ready": self.trained, "model_version": self.model_version}

    def status(self) -> dict[str, object]:
        return {
            "trained": self.trained, "model_ready": self.trained, "model_version": self.model_version,
            "training_pairs": self.training_pairs, "last_trained": self.last_trained,
            "param_count": self.weights.param_count(), "config": self.weights.config.to_dict(),
            "training": self.training, "steps": self.total_steps, "pid": os.getpid(),
            "uptime_s": time.monotonic() - self.started, "scores_processed": self.scores_processed,
            "trainings_completed": self.trainings_completed, "flags": self.flags,
            "checkpoint_error": self.load_error, "fit_threads": self.threads,
        }

    def save_checkpoint(self, params: CheckpointRequest) -> CheckpointReply:
        path = Path(params.get("path") or self.checkpoint_path or "")
        if not str(path):
            raise RpcError(-32602, "no checkpoint path (start with --checkpoint or pass path)")
        size = ckpt.save(self.weights, path, flags=self.flags, meta=self._meta())
        return {"path": str(path), "bytes": size}

    def load_checkpoint(self, params: CheckpointRequest) -> CheckpointReply:
        """Replace the serving weights from a file; a bad file changes nothing (the old ones serve)."""
        path = Path(params.get("path") or self.checkpoint_path or "")
        try:
            weights, flags, meta = ckpt.load(path)
        except ckpt.CheckpointError as exc:
            raise RpcError(-32003, str(exc)) from exc
        self.weights, self.flags = weights, flags
        self.model_version = int(meta.get("model_version", 0))
        self.total_steps = int(meta.get("steps", 0))
        return {"path": str(path), "model_version": self.model_version, "flags": flags}

    def _meta(self) -> CheckpointMeta:
        return {"model_version": self.model_version, "steps": self.total_steps,
                "training_pairs": self.training_pairs, "last_trained": self.last_trained}

    def _job(self, params: TrainRequest) -> fit.FitJob:
        return fit.FitJob(
            config=self.weights.config, weights=self.weights,
            previous_trained=self.trained, train=C.TrainConfig(
                epochs=int(params.get("epochs") or C.TRAIN_EPOCHS), lr=float(params.get("lr") or C.TRAIN_LR),
                time_cap_s=min(C.TRAIN_TIME_CAP_S, float(params.get("time_cap_s") or C.TRAIN_TIME_CAP_S)),
                seed=int(params.get("seed") or 0)))

    def _finish_fit(self, running: fit.RunningFit, known: dict[str, object]) -> dict[str, object]:
        """Wait for the fit process; swap in its weights when every gate passed."""
        try:
            outcome = fit.finish(running)
        except fit.FitError as exc:
            raise RpcError(-32000, f"training failed: {exc}") from exc
        out = dict(outcome.summary)
        out.update(known)
        out.update(outcome.read)
        out.update(previous_version=self.model_version, checkpoint_saved=False)
        if outcome.weights is not None:
            self.weights = outcome.weights  # the atomic swap
            self.flags |= ckpt.FLAG_FINETUNED
            self.model_version += 1
            self.total_steps += int(cast(int, out.get("steps") or 0))
            self.training_pairs = int(cast(int, out.get("recent_sessions") or 0))
            self.last_trained = now_iso()
            self.trainings_completed += 1
            if self.checkpoint_path is not None:
                try:
                    ckpt.save(self.weights, self.checkpoint_path, flags=self.flags, meta=self._meta())
                    out["checkpoint_saved"] = True
                except OSError as exc:
                    out["checkpoint_error"] = str(exc)
        out["model_version"] = self.model_version
        out["steps_total"] = self.total_steps
        return out

    def train(self, params: TrainRequest) -> dict[str, object]:
        sessions = params.get("sessions") or [cast(ScoreRequest, params)]  # no `sessions`: the request is one
        native_dim = self.weights.config.native_dim
        try:
            samples = [request_sample(p, native_dim) for p in sessions]
        except (ValueError, TypeError, KeyError) as exc:
            raise RpcError(-32602, f"invalid train params: {exc}") from exc
        if any(s.labels is None or len(s.labels) != len(s.ids) for s in samples):
            raise RpcError(-32602, "every session needs one label per candidate")
        canary_params = params.get("canary")
        canary = [request_sample(p, native_dim) for p in canary_params] if canary_params else samples
        job = self._job(params)
        job.recent, job.canary = samples, canary[:C.CANARY_SIZE]
        running = fit.start(job, threads=self.threads)
        return self._finish_fit(running, {"recent_sessions": len(samples), "replay_sessions": 0, "samples_skipped": {}})

    def train_from_db(self, params: TrainRequest) -> dict[str, object]:
        """A fit process reads the sessions (from the reads the last fit kept) and trains on them."""
        if self.db_path is None:
            raise RpcError(-32002, "sidecar started without --db")
        job = self._job(params)
        job.store = fit.StoreRead(db=str(self.db_path), params=params, reads_path=str(self.reads_path))
        return self._finish_fit(fit.start(job, threads=self.threads), {})


def serve(engine: Engine, stdin: TextIO, stdout: TextIO, *, fault: str | None = None,
          fault_file: Path | None = None) -> None:
    write_lock = threading.Lock()

    def send(obj: dict[str, object]) -> None:
        line = json.dumps(obj, separators=(",", ":"))
        with write_lock:
            stdout.write(line + "\n")
            stdout.flush()

    def reply(req_id: RpcId, result: object = None, error: tuple[int, str] | None = None) -> None:
        if req_id is None:
            return
        if error:
            send({"jsonrpc": "2.0", "id": req_id, "error": {"code": error[0], "message": error[1]}})
        else:
            send({"jsonrpc": "2.0", "id": req_id, "result": result})

    def run_training(req_id: RpcId, method: str, params: TrainRequest) -> None:
        result: object = None
        error: tuple[int, str] | None = None
        try:
            result = getattr(engine, method)(params)
        except RpcError as exc:
            error = (exc.code, str(exc))
        except Exception as exc:  # process boundary: report, keep serving
            traceback.print_exc(file=sys.stderr)
            error = (-32000, f"{method} failed: {exc}")
        try:
            # the job sent and the answer read are freed now; their pages go back before the reply,
            # so a caller that trains again on the answer never finds this one still running
            return_freed_memory()
            reply(req_id, result, error)
        finally:
            engine.training = False
            engine._train_lock.release()

    for raw in stdin:
        if not raw.strip():
            continue
        try:
            req = json.loads(raw)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if not isinstance(req, dict) or req.get("jsonrpc") != "2.0" or not isinstance(req.get("method"), str):
            send({"jsonrpc": "2.0", "id": req.get("id") if isinstance(req, dict) else None,
                  "error": {"code": -32600, "message": "invalid request"}})
            continue
        req_id, method, params = req.get("id"), req["method"], req.get("params") or {}
        if method == "score" and fault and (fault_file is None or fault_file.exists()):
            if fault == "hang":
                time.sleep(3600)
            elif fault == "crash":
                os._exit(3)
            elif fault == "garbage":
                with write_lock:
                    stdout.write("this is not json {{{\n")
                    stdout.flush()
                continue
        try:
            if method in ("train", "train_from_db"):
                if not engine._train_lock.acquire(blocking=False):
                    raise RpcError(-32001, "training already in progress")
                engine.training = True
                threading.Thread(target=run_training, args=(req_id, method, params), daemon=True).start()
            elif method == "score":
                reply(req_id, engine.score(cast(ScoreRequest, params)))  # the JSON-RPC params, as sent
            elif method == "status":
                reply(req_id, engine.status())
            elif method == "save_checkpoint":
                reply(req_id, engine.save_checkpoint(cast(CheckpointRequest, params)))
            elif method == "load_checkpoint":
                reply(req_id, engine.load_checkpoint(cast(CheckpointRequest, params)))
            else:
                raise RpcError(-32601, f"method not found: {method}")
        except RpcError as exc:
            reply(req_id, error=(exc.code, str(exc)))
        except Exception as exc:  # process boundary
            traceback.print_exc(file=sys.stderr)
            reply(req_id, error=(-32000, f"{method} failed: {exc}"))


def return_freed_memory() -> bool:
    """Hand the heap pages a training run freed back to the system (glibc's malloc_trim, under a
    millisecond; elsewhere nothing): the job's pickle and the fit's answer, and a `train` request's
    samples. When fits ran in this process it kept ~30-40 MB of freed training memory resident at
    200k memories without it (issue 36). No gc.collect here: a full collection holds the GIL ~140 ms, longer
    than a score request may take (score_timeout_ms 120), and freed little more. True when pages
    were returned."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): the allocator keeps its pages
        return False
    return bool(trim(0))


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kenning.predictor.sidecar")
    parser.add_argument("--db", help="the store: a SQLite file or a postgresql:// URL")
    parser.add_argument("--checkpoint", type=Path)
    parser.add_argument("--base-weights", type=Path)
    parser.add_argument("--native-dim", type=int, default=384)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--fault", choices=["hang", "crash", "garbage"])
    parser.add_argument("--fault-file", type=Path)
    args = parser.parse_args(argv)
    parent = expected_parent()
    if __name__ != "__main__":  # (run as a module the guard was started before the imports, above)
        start_guard(parent)  # a stopped sidecar still dies with the daemon (predictor.guard)
    # Keep the protocol channel private: anything else printing to stdout goes to stderr.
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    engine = Engine(db_path=args.db, checkpoint_path=args.checkpoint, base_weights=args.base_weights,
                    native_dim=args.native_dim, seed=args.seed, threads=args.threads)
    serve(engine, sys.stdin, protocol, fault=args.fault, fault_file=args.fault_file)
    # stdin closed: the daemon is gone or asked us to stop. Leave without interpreter teardown: a
    # training thread may still be reading the store or waiting on its fit process (which dies with it).
    protocol.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
