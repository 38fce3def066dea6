"""`kenning pipeline …`: what the background pipeline is doing (workers, queue, budget)."""

from __future__ import annotations

import typer
from rich.table import Table

from kenning.cli.context import console, print_json
from kenning.cli.memory import backend

pipeline_app = typer.Typer(no_args_is_help=True, help="Extraction pipeline: workers, job queue, LLM budget.")


def _print(data: dict) -> None:
    console.print(f"mode [bold]{data['mode']}[/bold]  provider "
                  f"{(data.get('provider') or {}).get('provider')}:{(data.get('provider') or {}).get('model')}")
    workers = Table("worker", "running", "processed", "failed", "dead", "deferred", "waiting / last error",
                    title="workers")
    for name, w in data["workers"].items():
        note = w.get("waiting") or w.get("last_error") or w.get("build_error") or ("disabled" if w.get("disabled") else "")
        workers.add_row(name, "yes" if w.get("running") else "no", str(w.get("processed", 0)),
                        str(w.get("failed", 0)), str(w.get("dead", 0)), str(w.get("deferred", 0)), str(note)[:80])
    console.print(workers)
    queue = Table("job type", "pending", "leased", "completed", "dead", title="queue")
    for job_type, d in sorted(data["queue"]["by_type"].items()):
        queue.add_row(job_type, *(str(d[s]) for s in ("pending", "leased", "completed", "dead")))
    console.print(queue)
    budget = data.get("token_budget")
    if budget:
        console.print(f"LLM tokens today: {budget['used_today']} / {budget['daily_limit']} "
                      f"(resets {budget['resets_at']})")
    for job in data["dead_jobs"]["recent"][:5]:
        console.print(f"[red]dead[/red] job {job['id']} {job['job_type']} after {job['attempts']} attempts: "
                      f"{(job['last_error'] or '')[:100]}", highlight=False)
    for reason in data["waiting"]:
        console.print(f"[yellow]waiting:[/yellow] {reason}", highlight=False)


@pipeline_app.command("status")
def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Workers, queue depths, dead jobs and the daily LLM token budget."""
    with backend() as b:
        data = b.pipeline_status()  # offline: from the local store, the workers shown as not running
    if as_json:
        print_json(data)
    else:
        _print(data)


def register(app: typer.Typer) -> None:
    app.add_typer(pipeline_app, name="pipeline")
