"""`kenning doctor` (diagnostics with a fix for every problem) and `kenning dashboard`.

Both prefer the running daemon (it knows the live workers, providers and predictor); the
doctor falls back to reading the store directly when no daemon answers.
"""

from __future__ import annotations

import json
import webbrowser
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

import typer
from rich.markup import escape
from rich.table import Table

from kenning.cli.context import console, fail, print_json, settings
from kenning.client import KenningClient
from kenning.core.errors import KenningError

STATUS_STYLE = {"healthy": "green", "degraded": "yellow", "unhealthy": "red", "cold_start": "cyan",
                "disabled": "bright_black"}
EXIT_UNHEALTHY = 2

if TYPE_CHECKING:
    from kenning.diagnostics.health import DomainReport
    from kenning.diagnostics.repair import Repaired
    from kenning.diagnostics.report import Composite
    from kenning.hooks.connectors.check import HarnessCheck


class ReportProblem(TypedDict):
    """One problem of the report: diagnostics.health's ProblemReport and its domain (here without
    importing the diagnostics: `kenning dashboard` does not need them)."""

    domain: str
    severity: str
    message: str
    fix: str


class DoctorReport(TypedDict):
    """What doctor reads of the diagnostics report (diagnostics.report.build_report: the daemon's
    /api/diagnostics, or built here), and the harness checks it adds."""

    composite: Composite
    domains: dict[str, DomainReport]
    problems: list[ReportProblem]
    harnesses: NotRequired[list[HarnessCheck]]


def _local_report(fix: bool) -> tuple[DoctorReport, list[Repaired], str]:
    from kenning.diagnostics import repair
    from kenning.localstore import LocalStore

    cfg = settings()
    store = LocalStore(cfg)
    try:
        results = store.repair(list(repair.ACTIONS)) if fix else []
        report = store.diagnostics()
    finally:
        store.close()
    return cast("DoctorReport", report), results, f"local store {cfg.db_path} (daemon not running: live checks skipped)"


def _fetch(fix: bool) -> tuple[DoctorReport, list[Repaired], str]:
    """The report (and the repairs' outcomes) from the daemon, else from the store; the daemon's
    JSON is the same report (build_report's), taken as it comes."""
    cfg = settings()
    client = KenningClient(cfg.base_url, token=cfg.auth_token, timeout=120)
    try:
        if client.is_up():
            if fix:
                out = client.request("POST", "/api/diagnostics/repair", json={})
                return (cast("DoctorReport", out["report"]), cast("list[Repaired]", out["results"]),
                        f"daemon {cfg.base_url}")
            return cast("DoctorReport", client.request("GET", "/api/diagnostics")), [], f"daemon {cfg.base_url}"
    finally:
        client.close()
    return _local_report(fix)


def add_spool_check(report: DoctorReport) -> None:
    """Hook events of this machine's spool set aside after a daemon answered 5xx (core.spool.HELD_DIR):
    a laptop's spool is its own, whichever daemon the report came from (issue 33)."""
    from kenning.core import spool

    home = settings().home.expanduser()
    held = spool.stats(str(home))["held"]
    if held:
        report["problems"].append({
            "domain": "hook spool", "severity": "warning",
            "message": f"{held} hook event(s) set aside in {home / spool.DIRNAME / spool.HELD_DIR} after the daemon "
                       f"answered 5xx {spool.FAILED_TRIES} times (later events went on)",
            "fix": "see the daemon's log for why it failed them; the events are kept in that folder"})


def add_harness_checks(report: DoctorReport) -> None:
    """Each harness kenning is installed in (user config, this project's): hooks present, reaching
    this daemon, trusted (Codex). Kept in `report["harnesses"]`; each problem joins the report's."""
    from pathlib import Path

    from kenning.hooks.connectors.check import check_harnesses, daemon_url

    cfg = settings()
    checks: list[HarnessCheck]
    try:
        checks = check_harnesses(daemon_url(cfg.home.expanduser(), cfg.host, cfg.port), Path.cwd())
    except Exception as exc:  # a check is a process boundary: the rest of the report stands
        checks = [{"harness": "?", "scope": "?", "path": "", "problems": [f"harness checks failed: {exc}"],
                   "fix": "see `kenning connect --help`"}]
    report["harnesses"] = checks
    for check in checks:
        for problem in check["problems"]:
            report["problems"].append({"domain": f"harness {check['harness']} ({check['scope']})",
                                       "severity": "warning", "message": f"{problem} — {check['path']}",
                                       "fix": check["fix"]})


def daemon_down(report: DoctorReport) -> None:
    """No daemon answered: with agents connected, they get no memories and their sessions wait in the
    spool, so kenning is unhealthy (doctor exits non-zero); with none, the daemon is merely not started."""
    from kenning.diagnostics.report import composite

    connected = sorted({check["harness"] for check in report.get("harnesses", []) if check["harness"] != "?"})
    fix = "kenning daemon start"
    if connected:
        problem: ReportProblem = {
            "domain": "daemon", "severity": "error", "fix": fix,
            "message": f"the daemon is not running: {', '.join(connected)} get no memories, and their sessions "
                       "are only spooled until it starts"}
        summary = f"not running; {len(connected)} agent(s) connected get no memories"
    else:
        problem = {"domain": "daemon", "severity": "warning", "fix": fix,
                   "message": "the daemon is not running (no agent is connected yet)"}
        summary = "not running (no agent connected)"
    status, score = ("unhealthy", 0.0) if connected else ("degraded", 0.6)
    report["domains"] = {"daemon": {"domain": "daemon", "score": score, "status": status, "summary": summary,
                                    "metrics": {"running": False, "agents_connected": connected},
                                    "problems": []}, **report["domains"]}
    report["problems"].insert(0, problem)
    report["composite"] = composite(report["domains"])


def render_report(report: DoctorReport, where: str) -> None:
    comp = report["composite"]
    style = STATUS_STYLE.get(comp["status"], "white")
    console.print(f"kenning doctor — {where}", highlight=False)
    console.print(f"composite health [{style}]{comp['status']}[/{style}] {comp['score']:.2f}", highlight=False)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("domain", "status", "score", "summary"):
        table.add_column(col)
    for name, d in report["domains"].items():
        s = STATUS_STYLE.get(d["status"], "white")
        table.add_row(name, f"[{s}]{d['status']}[/{s}]", f"{d['score']:.2f}", d["summary"])
    console.print(table)
    for check in report.get("harnesses", []):
        state = "ok" if not check["problems"] else "needs attention"
        trusted = {True: ", trusted", False: ", not trusted", None: ""}[check.get("trusted")]
        console.print(f"harness {check['harness']} ({check['scope']}): {state}{trusted} — {escape(check['path'])}",
                      highlight=False, soft_wrap=True)
    problems = report["problems"]
    if not problems:
        console.print("[green]no problems found[/green]")
        return
    console.print(f"\n{len(problems)} problem(s):", highlight=False)
    for p in problems:
        mark = "[red]✗[/red]" if p["severity"] == "error" else "[yellow]![/yellow]"
        label = escape(f"[{p['domain']}]")
        console.print(f" {mark} {label} {escape(p['message'])}", highlight=False, soft_wrap=True)
        console.print(f"     fix: {escape(p['fix'])}", highlight=False, soft_wrap=True, style="bright_black")


def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    fix: bool = typer.Option(False, "--fix", help="Run safe repairs first (rebuild FTS, embed missing vectors)."),
) -> None:
    """Diagnose kenning: every health domain, and the fix for each problem. Exit 2 when unhealthy."""
    try:
        report, results, where = _fetch(fix)
    except KenningError as exc:
        fail(str(exc))
        return
    add_harness_checks(report)
    add_spool_check(report)
    if not where.startswith("daemon"):
        daemon_down(report)
    if as_json:
        print_json(report | ({"repairs": results} if fix else {}))
    else:
        for r in results:
            console.print(f"repair: {json.dumps(r)}", highlight=False)
        render_report(report, where)
    if report["composite"]["status"] == "unhealthy":
        raise typer.Exit(EXIT_UNHEALTHY)


def dashboard(
    open_browser: bool = typer.Option(True, "--open/--no-open", help="Open it in the default browser."),
) -> None:
    """Print the dashboard URL (and open it) — the daemon must be running."""
    cfg = settings()
    url = f"{cfg.base_url}/"
    client = KenningClient(cfg.base_url, token=cfg.auth_token)
    try:
        up = client.is_up()
    finally:
        client.close()
    if not up:
        fail(f"no daemon at {cfg.base_url}; start it with `kenning daemon start`, then run `kenning dashboard`")
    console.print(url, highlight=False)
    if open_browser:
        try:
            webbrowser.open(url)
        except webbrowser.Error:
            pass


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
    app.command("dashboard")(dashboard)
