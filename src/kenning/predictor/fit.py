"""A fit in its own short-lived process: `python -m kenning.predictor.fit`, spawned by the sidecar.

The sidecar reads the store and builds the samples (torch-free, keeping its training reads from one
fit to the next); this process gets them with the serving weights on stdin, trains a twin with
PyTorch (`train.train`: epochs, then the validation gates), answers with the result and the new
weights on stdout, and exits. So torch (~220 MB), `torch.optim` (~70 MB) and a fit's allocations
live only while a fit runs, not in the sidecar between fits (issue 36). A job without weights asks
for an untrained scorer's weights instead (torch's seeded initialisation: same seed, same weights).

Both ends are kenning's own processes on a private pipe, so the job and the answer are pickles.
The process dies with the sidecar thread that waits on it (PR_SET_PDEATHSIG), and one that runs
past its time is killed: the serving weights are never touched until the sidecar swaps.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from typing import IO

from kenning.predictor import constants as C
from kenning.predictor.features import Sample
from kenning.predictor.guard import die_with_parent
from kenning.predictor.weights import ScorerConfig, Weights

TIMEOUT_MARGIN_S = 90.0  # beyond the time cap (torch's import, the canary scoring): as long as trainer.train_now waits


class FitError(Exception):
    """The fit process failed, died or ran past its time; the serving weights are unchanged."""


@dataclass
class FitJob:
    config: ScorerConfig
    weights: Weights | None  # the serving weights; None: answer an untrained scorer's weights for `config`
    recent: list[Sample] = field(default_factory=list)
    replay: list[Sample] = field(default_factory=list)
    canary: list[Sample] = field(default_factory=list)
    previous_trained: bool = False
    epochs: int = C.TRAIN_EPOCHS
    lr: float = C.TRAIN_LR
    time_cap_s: float = C.TRAIN_TIME_CAP_S
    seed: int = 0


@dataclass
class FitOutcome:
    summary: dict[str, object]  # train.TrainResult.summary() (empty for an initialisation)
    weights: Weights | None  # the new weights when every gate passed (or the initial ones)


@dataclass
class RunningFit:
    process: subprocess.Popen[bytes]
    timeout_s: float


def start(job: FitJob, *, threads: int = 1) -> RunningFit:
    """Spawn the fit process and hand it the job (the caller can drop its samples once this returns)."""
    argv = [sys.executable, "-m", "kenning.predictor.fit", "--threads", str(max(1, threads)), "--parent", str(os.getpid())]
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    stdin, process.stdin = process.stdin, None  # written here once; communicate() only reads
    assert stdin is not None  # (PIPE)
    try:
        with stdin:
            pickle.dump(job, stdin, protocol=pickle.HIGHEST_PROTOCOL)
    except BrokenPipeError:  # it died before reading the job: finish() reports its exit
        pass
    return RunningFit(process, job.time_cap_s + TIMEOUT_MARGIN_S)


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


def initial_weights(config: ScorerConfig, *, threads: int = 1) -> Weights:
    """An untrained scorer's weights for `config` (built by torch in a fit process)."""
    outcome = finish(start(FitJob(config=config, weights=None), threads=threads))
    if outcome.weights is None:
        raise FitError("the fit process answered no initial weights")
    return outcome.weights


def _run(job: FitJob, threads: int) -> FitOutcome:
    import torch

    from kenning.predictor.model import CrossAttentionScorer
    from kenning.predictor.train import TrainConfig, train

    torch.set_num_threads(threads)
    if job.weights is None:
        return FitOutcome({}, CrossAttentionScorer(job.config).weights())
    serving = CrossAttentionScorer.from_weights(job.weights)
    result = train(serving, job.recent, replay=job.replay, canary=job.canary, previous_trained=job.previous_trained,
                   config=TrainConfig(epochs=job.epochs, lr=job.lr, time_cap_s=job.time_cap_s, seed=job.seed))
    fitted = result.model.weights() if result.swapped and result.model is not None else None
    return FitOutcome(result.summary(), fitted)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kenning.predictor.fit")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--parent", type=int, help="the sidecar's pid")
    args = parser.parse_args(argv)
    if sys.platform.startswith("linux"):
        die_with_parent()  # the sidecar's thread that waits on this fit
    if args.parent is not None and os.getppid() != args.parent:
        os._exit(1)  # the sidecar was gone before the line above took hold
    answer: IO[bytes] = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # anything else printed goes to the sidecar's log
    job = pickle.load(sys.stdin.buffer)
    pickle.dump(_run(job, max(1, args.threads)), answer, protocol=pickle.HIGHEST_PROTOCOL)
    answer.flush()
    sys.stderr.flush()
    os._exit(0)  # torch's worker threads may still run: no interpreter teardown under them


if __name__ == "__main__":
    # run the importable module's main, so what it pickles is kenning.predictor.fit.FitOutcome, not __main__'s
    from kenning.predictor import fit as importable

    sys.exit(importable.main())
