"""Seed a daemon by replaying a small simulated user through the public HTTP API only.

Three projects, each with three topics of four memories. Session i works on one topic of
one project: session-start (the real pre-filter and ranking), three prompts with agent
feedback on what was injected at the start and at each prompt (helpful for the topic, unhelpful
otherwise; every 6th session is a glance with no rating and no memory used), session-end with
a transcript that uses the topic's memories (the real continuity judge, the real summary job
and, when wired, the real predictor comparison and training). No SQL anywhere.

Run against a dev daemon:  python tests/dashboard/replay.py --url http://127.0.0.1:3850 --sessions 30
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone

import httpx

WORLD = {
    "webapp": {
        "routing": ["The web app uses React Router 7 with file-based routes under app/routes",
                    "Route loaders must never call fetch directly; use the api client in app/lib/api.ts",
                    "Gotcha: nested routes need an Outlet or the child page renders blank",
                    "Decision: we chose React Router over Next.js to keep the app a static SPA"],
        "styling": ["Styling uses Tailwind CSS 4 with the design tokens in tailwind.config.ts",
                    "Never use inline style attributes; the lint rule no-inline-styles fails CI",
                    "Dark mode is driven by the data-theme attribute on the html element",
                    "The Button component lives in app/components/ui/button.tsx with cva variants"],
        "testing": ["Frontend tests run with Vitest and Testing Library via pnpm test",
                    "Playwright end-to-end tests need the API on port 4000 before they start",
                    "Gotcha: Vitest fake timers break the debounce hook unless you call advanceTimers",
                    "Snapshot tests are banned; assert on roles and visible text instead"],
    },
    "billing": {
        "webhooks": ["The billing worker retries Stripe webhooks three times with exponential backoff",
                     "Webhook signatures are verified with the secret in Vault under billing/stripe",
                     "Gotcha: Stripe sends duplicate webhook events; dedupe on event.id in the webhook_events table",
                     "Decision: webhooks are processed asynchronously through the billing_jobs queue"],
        "invoices": ["Invoices are rendered to PDF with WeasyPrint from Jinja templates in billing/templates",
                     "Invoice numbers come from a PostgreSQL sequence per tenant, never from max(id)",
                     "Gotcha: WeasyPrint needs the Pango system library; the Docker image installs it",
                     "Tax rates are cached for one hour in Redis under the key tax:<country>"],
        "payments": ["Card payments go through Stripe PaymentIntents with automatic confirmation",
                     "Refunds above 500 EUR need a second approver in the admin console",
                     "Gotcha: PaymentIntent amounts are integers in cents, never floats",
                     "Failed payments trigger the dunning email sequence after 24 hours"],
    },
    "infra": {
        "deploys": ["Deploys run from GitHub Actions on merge to main with the deploy.yml workflow",
                    "Production runs on Kubernetes 1.31 in eu-west-1 managed by Terraform",
                    "Gotcha: the Helm chart needs --atomic or a failed rollout leaves pods half upgraded",
                    "Decision: blue-green deploys for the API, rolling updates for workers"],
        "observability": ["Logs ship to Loki through the Grafana Agent daemonset",
                          "Alerts page the on-call through Opsgenie when p95 latency exceeds 800 ms",
                          "Traces use OpenTelemetry with the OTLP exporter to Tempo",
                          "Gotcha: the Grafana Agent drops logs larger than 64 KB per line"],
        "databases": ["PostgreSQL 16 runs on RDS with a read replica for reporting",
                      "Database migrations run with Alembic in a Kubernetes job before the deploy",
                      "Gotcha: long migrations need lock_timeout set or they block production writes",
                      "Backups are snapshotted nightly and kept for 35 days"],
    },
}
TYPES = ["fact", "constraint", "gotcha", "decision"]
START = datetime(2026, 11, 2, 8, tzinfo=timezone.utc)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def seed_memories(http: httpx.Client) -> dict[str, tuple[str, str]]:
    """Remember the world (dated before the first session); returns memory id -> (project, topic)."""
    batch, keys = [], []
    for project, topics in WORLD.items():
        for topic, texts in topics.items():
            for i, text in enumerate(texts):
                kind = "gotcha" if text.startswith("Gotcha") else ("decision" if text.startswith("Decision") else TYPES[i % 2])
                batch.append({"content": text, "project": project, "type": kind, "tags": [topic],
                              "importance": 0.4 + 0.1 * (i % 4), "created_at": iso(START - timedelta(days=20 - i)),
                              "source": "replay"})
                keys.append((project, topic))
    response = http.post("/api/memory/batch", json={"memories": batch})
    response.raise_for_status()
    return {r["id"]: key for r, key in zip(response.json()["results"], keys)}


def run_session(http: httpx.Client, index: int, owner: dict[str, tuple[str, str]], *, wait: bool = True) -> dict:
    projects = list(WORLD)
    project = projects[index % len(projects)]
    topics = list(WORLD[project])
    topic = topics[(index // len(projects)) % len(topics)]
    key = f"replay-{index:03d}-{project}-{topic}"
    at = START + timedelta(hours=7 * index)
    # Every 6th session is a quick one (one prompt, no feedback: low judge confidence, excluded
    # from the EMA); every 4th is a surprise (the context names one topic, the work needs another).
    quick, surprise = index % 6 == 5, index % 4 == 2
    needed = topics[(topics.index(topic) + 1) % len(topics)] if surprise else topic
    texts = WORLD[project][needed]
    start = http.post("/api/hooks/session-start", json={
        "session_key": key, "project": project, "harness": "claude-code", "cwd": f"/src/{project}",
        "context": f"continue the {topic} work in {project}", "timestamp": iso(at)}).json()
    injected = start.get("memory_ids") or []
    feedback = {mid: (0.9 if owner.get(mid) == (project, needed) else -0.6) for mid in injected}
    prompts = [f"how do we handle {needed} in {project}?", texts[0].split(";")[0].lower(), texts[2].lower()[:60]]
    if quick:  # a glance that goes nowhere: no rating, no memory used, nothing to learn from
        prompts, feedback = ["never mind, wrong window"], {}
    for n, prompt in enumerate(prompts):
        shown = http.post("/api/hooks/user-prompt-submit", json={
            "session_key": key, "prompt": prompt, "timestamp": iso(at + timedelta(minutes=5 + n)),
            "memory_feedback": (feedback or None) if n == 0 else None})
        shown.raise_for_status()
        # the agent rates the prompt's memories at the end of its turn (a Stop hook's <memory-feedback>):
        # since issue 31 most of what a session sees comes at its prompts, not at its start
        ids = [] if quick else shown.json().get("memory_ids") or []
        rated = {mid: (0.9 if owner.get(mid) == (project, needed) else -0.6) for mid in ids}
        if rated:
            http.post("/api/hooks/feedback", json={"session_key": key, "memory_feedback": rated}).raise_for_status()
    transcript = "\n".join(
        [f"user: {p}\nassistant: {'ok' if quick else texts[(n + 1) % 4]}" for n, p in enumerate(prompts)]
        + ([] if quick else ["user: thanks, that fixed it", f"assistant: noted the {needed} details for next time"]))
    end = http.post("/api/hooks/session-end", json={
        "session_key": key, "transcript": transcript, "wait": wait, "timestamp": iso(at + timedelta(minutes=40))})
    end.raise_for_status()
    return {"session_key": key, "injected": injected, "end": end.json()}


def replay(base_url: str, sessions: int, *, first: int = 0, timeout: float = 120.0) -> dict:
    """Seed the world (idempotent: exact duplicates dedupe) and run sessions first..first+sessions-1."""
    with httpx.Client(base_url=base_url, timeout=timeout) as http:
        owner = seed_memories(http)
        runs = [run_session(http, i, owner) for i in range(first, first + sessions)]
    return {"memories": len(owner), "sessions": [r["session_key"] for r in runs], "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:3850")
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--first", type=int, default=0, help="index of the first session (to continue a replay)")
    args = parser.parse_args()
    out = replay(args.url, args.sessions, first=args.first)
    print(f"{out['memories']} memories, {len(out['sessions'])} sessions replayed into {args.url}")


if __name__ == "__main__":
    main()
