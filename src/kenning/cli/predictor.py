"""`kenning predictor …`: status, train, history, compare SESSION, labels SESSION.

Talks to the running daemon when there is one; otherwise opens the store directly (and, for
`train`, starts a sidecar for the duration of the command).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from kenning.cli.backend import Backend
from kenning.cli.context import console, fail, print_json
from kenning.cli.memory import backend
from kenning.cli.tables import Col, fmt, print_table
from kenning.core.errors import KenningError

predictor_app = typer.Typer(help="The learned memory scorer: state, training, audits.")


@predictor_app.callback(invoke_without_command=True)
def _predictor(ctx: typer.Context) -> None:
    """The learned memory scorer: state, training, audits. Alone: its status (`kenning predictor status`)."""
    if ctx.invoked_subcommand is None:
        status(as_json=False)


@predictor_app.command("status")
def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Mode, α, success rate, model version, parameter count, sidecar health."""
    with backend() as b:
        data = b.predictor_status()
    if as_json:
        print_json(data)
        return
    console.print(data["status_line"], highlight=False, markup=False)  # "[predictor: …]" is text, not markup
    side = data.get("sidecar") or {}
    rows = [
        ("mode", data["mode"]), ("alpha", f"{data['alpha']:.2f}"), ("success rate", f"{data['success_rate']:.3f}"),
        ("model version", data["model_version"]), ("parameters", f"{data['param_count']:,}"),
        ("training sessions", f"{data['training_sessions']} (min {data['min_training_sessions']})"),
        ("sessions completed", data["sessions_completed"]), ("comparisons", data["comparisons"]),
        ("last trained", data["last_trained_at"] or "never"), ("drift resets", data["drift_resets"]),
        ("sidecar", f"{'running pid ' + str(side.get('pid')) if side.get('running') else 'not running'}"
                    f"{' (disabled after crashes)' if side.get('disabled') else ''}"),
        ("health", f"{data['health']['score']} {data['health']['status']}"),
    ]
    for project, rate in (data.get("project_success_rates") or {}).items():
        rows.append((f"project {project}", f"{rate:.3f}"))
    table = Table(show_header=False, box=None)
    for key, value in rows:
        table.add_row(key, str(value))
    console.print(table)


@predictor_app.command("train")
def train(
    base_weights: Optional[Path] = typer.Option(None, "--base-weights", exists=True, dir_okay=False,
                                                help="Start from this SGPT base model when none is trained yet."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Train now from this user's sessions; the new model serves only if every gate passes."""
    with backend() as b:
        data = b.predictor_train(base_weights=base_weights)  # offline: a sidecar for the command's duration
    if as_json:
        print_json(data)
        return
    if data.get("error") and not data.get("gates"):
        fail(f"training failed: {data['error']}")
    verdict = "[green]swapped in[/green]" if data.get("swapped") else "[yellow]discarded[/yellow]"
    console.print(f"model_v{data.get('model_version')} {verdict}: loss {data.get('loss')}, "
                  f"{data.get('steps')} steps, {data.get('recent_sessions')} sessions + {data.get('replay_sessions')} replay, "
                  f"{data.get('duration_ms', 0):.0f} ms", highlight=False)
    console.print(f"gates: {data.get('gates')}", highlight=False)
    if data.get("canary"):
        c = data["canary"]
        console.print(f"canary: ndcg {c['canary_ndcg']:.3f} (Δ {c['canary_ndcg_delta']:+.3f}), "
                      f"top-5 overlap {c['canary_topk_overlap']:.2f}, variance {c['canary_score_variance']:.4f}",
                      highlight=False)


@predictor_app.command("history")
def history(limit: int = typer.Option(20, min=1, max=500), as_json: bool = typer.Option(False, "--json")) -> None:
    """Training runs: loss, canary metrics, gates, whether the model was swapped."""
    with backend() as b:
        data = b.predictor_training(limit=limit, offset=0)
    if as_json:
        print_json(data)
        return
    if not data["items"]:
        console.print("no training runs yet: the predictor trains once enough sessions are scored "
                      "(`kenning predictor status`)")
        return
    print_table(console, [
        Col("id", "id", "id"), Col("at", lambda r: r["created_at"][:16].replace("T", " "), max_width=16),
        Col("trigger", "trigger", max_width=10), Col("ver", "model_version", "num"),
        Col("swap", lambda r: "yes" if r["swapped"] else "no", max_width=4),
        Col("loss", lambda r: fmt(r["loss"], 4), "num"), Col("steps", "step", "num"),
        Col("sess", "sample_count", "num"), Col("ndcg", lambda r: fmt(r["canary_ndcg"], 3), "num"),
        Col("Δ", lambda r: fmt(r["canary_ndcg_delta"], 3, signed=True), "num"),
        Col("ms", lambda r: f"{r['duration_ms']:.0f}", "num"),
    ], data["items"])


@predictor_app.command("compare")
def compare(session_key: str = typer.Argument(..., help="Session key."),
            as_json: bool = typer.Option(False, "--json")) -> None:
    """Predictor vs baseline for one session: both top-10s, NDCG, winner, the relevance they were scored on."""
    with backend() as b:
        data = b.predictor_audit(session_key)
        cmp = data.get("comparison")
        texts = _memory_texts(b, [*cmp["baseline_top_ids"], *cmp["predictor_top_ids"]]) if cmp and not as_json else {}
    if as_json:
        print_json(data)
        return
    if not cmp:
        console.print(f"no comparison recorded for {session_key} (no predictor ranking or no score yet)")
    else:
        console.print(f"winner: [bold]{cmp['winner']}[/bold]  predictor NDCG@10 {cmp['predictor_ndcg']:.3f}"
                      f"  baseline {cmp['baseline_ndcg']:.3f}  margin {cmp['margin']:+.3f}  α {cmp['alpha']:.2f}"
                      f"  confidence {cmp['scorer_confidence']:.2f}  EMA updated: {cmp['ema_updated']}",
                      highlight=False)
        rel = cmp["relevance_scores"]
        for side, top_ids in (("baseline", cmp["baseline_top_ids"]), ("predictor", cmp["predictor_top_ids"])):
            rows = [{"rank": i + 1, "id": mid, "rel": rel.get(mid, 0.0), "content": texts.get(mid, "")}
                    for i, mid in enumerate(top_ids)]
            print_table(console, [Col("#", "rank", "num"), Col("memory", "id", "id"),
                                  Col("rel", lambda r: fmt(r["rel"]), "num")],
                        rows, detail=Col("content", "content"), title=f"{side} top {len(rows)}")


def _memory_texts(b: Backend, ids: list[str]) -> dict[str, str]:
    """Each memory's content ('(purged)' when it no longer exists), for showing rankings as text."""
    texts: dict[str, str] = {}
    for mid in dict.fromkeys(ids):
        try:
            texts[mid] = b.get(mid)["content"]
        except KenningError:
            texts[mid] = "(purged)"
    return texts


@predictor_app.command("labels")
def labels(session_key: str = typer.Argument(..., help="Session key."),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """The training label of every candidate in a session, and how it was built."""
    with backend() as b:
        data = b.predictor_audit(session_key).get("labels")
    if not data:
        fail(f"session {session_key} has no continuity score yet, so no labels")
    if as_json:
        print_json(data)
        return
    state = "used for training" if data["usable"] else f"not used ({data['skip_reason']})"
    console.print(f"confidence {data['confidence']:.2f}, continuity {data['continuity']:.2f}, "
                  f"temperature {data['temperature']}, spread {data['spread']:.2f}: {state}", highlight=False)
    if data.get("confidence_explained"):
        console.print(f"confidence = {data['confidence_explained']}", highlight=False)
    print_table(console, [
        Col("memory", "memory_id", "id"), Col("inj", lambda c: "y" if c["was_injected"] else "", max_width=3),
        Col("agent", _agent_cell, "num"), Col("judge", lambda c: fmt(c["relevance_score"]), "num"),
        Col("fts", "fts_hit_count", "num"), Col("touch", lambda c: "y" if c.get("touched") else "", max_width=5),
        Col("label", lambda c: fmt(c["label"], signed=True), "num"), Col("path", "path", max_width=16),
    ], sorted(data["labels"], key=lambda c: -c["label"]), detail=Col("why", lambda c: "; ".join(c["reasons"])))


def _agent_cell(c: Mapping[str, object]) -> str:
    """The agent's mean rating and how many ratings; 0.00 is a rating, "-" means none."""
    if c.get("agent_relevance_score") is None:
        return "-"
    count = c.get("agent_feedback_count")
    return f"{c['agent_relevance_score']:.2f}" + (f" ({count})" if count else "")


def register(app: typer.Typer) -> None:
    app.add_typer(predictor_app, name="predictor")
