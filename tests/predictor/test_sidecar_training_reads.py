"""The real sidecar keeps its training reads from one fit to the next (issue 36) — in a file beside its
checkpoint, since each fit runs in a process of its own: a second `train_from_db` reads the candidate
rows of the sessions scored since the first only, and trains on the same samples a fresh sidecar
reading everything does."""

from __future__ import annotations

from kenning.predictor.client import SidecarClient, sidecar_argv
from kenning.predictor.sidecar import Engine
from kenning.store.training_reads import CandidateRows


def _sidecar(settings, name: str) -> SidecarClient:
    client = SidecarClient(sidecar_argv(settings.db_path, settings.home / f"{name}.bin"), score_timeout_ms=5000,
                           stderr_path=settings.home / f"{name}.log")
    client.start(wait_ready=True)
    return client


def test_a_second_fit_reads_only_the_new_sessions(pred_settings, pdb, user):
    for i in range(12):
        user.record_session(pdb, i)
    client = _sidecar(pred_settings, "kept")
    try:
        first = client.call("train_from_db", {"epochs": 1}, timeout_s=120)
        assert first["training_reads"]["sessions_read"] == 12 and first["training_reads"]["sessions_cached"] == 0
        for i in range(12, 15):
            user.record_session(pdb, i)
        second = client.call("train_from_db", {"epochs": 1}, timeout_s=120)
    finally:
        client.stop()
    reads = second["training_reads"]
    assert (reads["sessions_read"], reads["sessions_cached"]) == (3, 12)
    fresh = _sidecar(pred_settings, "fresh")
    try:
        whole = fresh.call("train_from_db", {"epochs": 1}, timeout_s=120)
    finally:
        fresh.stop()
    assert whole["training_reads"]["sessions_read"] == 15
    assert (second["samples_used"], second["samples_skipped"]) == (whole["samples_used"], whole["samples_skipped"])
    assert second["samples_used"] >= 15


def test_between_fits_the_sidecar_keeps_no_memory_content(pred_settings, pdb, user):
    for i in range(6):
        user.record_session(pdb, i)
    engine = Engine(db_path=pred_settings.db_path, checkpoint_path=pred_settings.home / "model.bin")
    first = engine.train_from_db({"epochs": 1})
    assert engine.reads_path == pred_settings.home / "model.reads.npz"  # kept beside the checkpoint
    held = CandidateRows.load(engine.reads_path).held()
    assert held["memories"] == 0  # the memories' columns (content, times) went with the fit
    assert held["sessions"] == 6 and held["rows"] > 0 and held["vectors"] > 0  # the reads the next fit saves
    second = engine.train_from_db({"epochs": 1})
    assert (second["training_reads"]["sessions_read"], second["training_reads"]["vectors_read"]) == (0, 0)
    assert second["training_reads"]["memories_read"] == first["training_reads"]["memories_read"]
    assert (second["samples_used"], second["samples_skipped"]) == (first["samples_used"], first["samples_skipped"])
