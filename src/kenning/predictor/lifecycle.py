"""The predictor sidecar's lifecycle on the daemon's side: spawn it only once training is possible,
stop it, and say whether it serves.

A fresh install holds no second PyTorch process: the sidecar is spawned once
`min_training_sessions` usable sessions exist or a trained checkpoint is on disk, or when a manual
training asks for it (`force`). Supervising the running process (score timeouts, crash restarts,
the crash-disable threshold) is `client.SidecarClient`'s job; the process itself is `sidecar.py`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from kenning.core import telemetry
from kenning.core.config_predictor import PredictorSettings
from kenning.predictor import constants as C
from kenning.predictor.client import SidecarClient, sidecar_argv
from kenning.predictor.weights import ScorerConfig, param_count
from kenning.store import predictor as store
from kenning.store.backend import StoreDatabase

DEFAULT_DIM = 384


class Sidecar:
    """One sidecar process for one store. `client` is None until it is spawned."""

    def __init__(self, cfg: PredictorSettings, db: StoreDatabase, predictor_dir: Path, *,
                 extra_args: list[str] | None = None, base_weights: str | None = None) -> None:
        self.cfg = cfg
        self.db = db
        self.predictor_dir = predictor_dir
        self.checkpoint_path = predictor_dir / "model.bin"
        self.extra_args = list(extra_args or [])
        self.base_weights = base_weights  # an SGPT base model to start from when none is trained yet
        self.client: SidecarClient | None = None
        self.native_dim = DEFAULT_DIM
        # called with a trigger name when the sidecar refused the checkpoint on disk (retrain);
        # wired by the Predictor facade to its training part
        self.on_checkpoint_refused: Callable[[str], object] | None = None
        self._lock = threading.Lock()

    @property
    def serving_disabled(self) -> bool:
        """Off in config, not spawned yet, or disabled by the crash threshold: α is pinned to 1."""
        client = self.client
        return not self.cfg.enabled or client is None or client.disabled

    def training_possible(self) -> bool:
        """Enough usable sessions to train on (or a trained model on disk): the sidecar may run."""
        if self.checkpoint_path.exists():
            return True
        return store.count_usable_sessions(self.db.reader()) >= self.cfg.min_training_sessions

    def start(self, wait_ready: bool = False, *, force: bool = False) -> bool:
        """Spawn the sidecar — only once training is possible, unless `force` (a manual train).
        True when it is running."""
        if not self.cfg.enabled:
            return False
        with self._lock:
            if self.client is not None:
                return True
            if not force and not self.training_possible():
                return False
            client = self._spawn()
        if wait_ready:
            client.wait_ready(client.ready_timeout_s)
        return True

    def _spawn(self) -> SidecarClient:
        """The one place the sidecar process is created (argv, supervision, log file)."""
        self.predictor_dir.mkdir(parents=True, exist_ok=True)
        self.native_dim = store.embedding_dims_in_use(self.db.reader()) or DEFAULT_DIM
        argv = sidecar_argv(self.db.path, self.checkpoint_path, native_dim=self.native_dim,
                            base_weights=Path(self.base_weights) if self.base_weights else None, extra=self.extra_args)
        client = self.client = SidecarClient(
            argv, score_timeout_ms=self.cfg.score_timeout_ms,
            crash_disable_threshold=self.cfg.crash_disable_threshold,
            stderr_path=self.predictor_dir / "sidecar.log",
        )
        client.start()
        threading.Thread(target=self._check_checkpoint, args=(client,), daemon=True,
                         name="predictor-checkpoint-check").start()
        return client

    def _check_checkpoint(self, client: SidecarClient) -> None:
        """An old or corrupt checkpoint is refused by the sidecar (it serves untrained): retrain."""
        if not client.wait_ready(client.ready_timeout_s):
            return
        error = client.last_status.get("checkpoint_error")
        if error:
            telemetry.log_event("predictor", "predictor.checkpoint_refused", level="warning", error=error)
            if self.on_checkpoint_refused is not None:
                self.on_checkpoint_refused("checkpoint_refused")

    def stop(self) -> None:
        if self.client is not None:
            self.client.stop()

    def param_count(self) -> int:
        """The scorer's parameter count at this store's embedding width."""
        return scorer_param_count(self.native_dim)


def scorer_param_count(native_dim: int) -> int:
    """The scorer's parameter count at `native_dim`, from the parameters' shapes (`weights.param_count`):
    nothing is built or allocated for a status call (building the torch model to count it once loaded
    torch into the daemon: +186 MB RSS, 2 s). tests/predictor/test_predictor_model.py pins it to the
    initial weights' own count."""
    return param_count(ScorerConfig(native_dim=native_dim))
