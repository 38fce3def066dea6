"""Team-draft interleaving (Radlinski, Kurup & Joachims 2008): how the predictor earns α from what
it put in front of the agent, not only from what the baseline chose to show (issue 32).

Comparing two rankings only on the memories the baseline showed can never credit the predictor
for a memory only it would have picked: no rating exists for an unshown memory. Team draft shows
both. The shown set is drawn in rounds; a coin flip per round says which ranking picks first, and
each ranking picks its best memory not yet drawn. Every pick is credited to the ranking that
contributed it (its "team"). At session end what the session showed it wanted (agent ratings, the
transcript's use: `labels.comparison_relevance`) is summed per team; the team with more credit wins
the session, equal credit is no verdict.

A pick the other ranking would have made at that same point (its best memory not yet drawn is the
same one) is SHARED: shown like any pick, credited to neither team. Where the two rankings agree,
the coin alone decided whose name went on the pick, so crediting it added only the coin's noise to
the comparison (issue 32: session start drafts ~3 conventions that both rankings order alike); the
verdict rests on the picks where the rankings differ. Two equal rankings share every pick and never
produce a verdict.

The draft runs only over what may be shown at all (the ranking home's verdicts, the prompt bar)
and fills at most `slots` places, so the predictor cannot flood the agent before it has earned
anything; the caller fills the rest of its limit from the fused order.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

BASELINE = "baseline"
PREDICTOR = "predictor"
TEAMS = (BASELINE, PREDICTOR)
SHARED = "shared"  # a pick both rankings would have made at that point: shown, credited to neither


@dataclass(frozen=True)
class Pick:
    memory_id: str
    team: str  # BASELINE | PREDICTOR: the ranking that contributed it; SHARED: both would have


def team_draft(baseline: Sequence[str], predictor: Sequence[str], slots: int, rng: random.Random) -> list[Pick]:
    """Interleave two rankings of the same allowed set into at most `slots` picks.

    Each round the coin says which ranking picks first; each then adds its highest-ranked memory
    not already drawn. A ranking with nothing left to give lets the other pick. A pick that is also
    the other ranking's best not yet drawn is SHARED (credited to neither)."""
    drawn: set[str] = set()
    picks: list[Pick] = []
    orders = {BASELINE: list(baseline), PREDICTOR: list(predictor)}
    cursor = {BASELINE: 0, PREDICTOR: 0}

    def next_of(team: str) -> str | None:
        order = orders[team]
        while cursor[team] < len(order) and order[cursor[team]] in drawn:
            cursor[team] += 1
        return order[cursor[team]] if cursor[team] < len(order) else None

    def take(team: str) -> bool:
        memory_id = next_of(team)
        if memory_id is None:
            return False
        shared = next_of(PREDICTOR if team == BASELINE else BASELINE) == memory_id
        drawn.add(memory_id)
        picks.append(Pick(memory_id, SHARED if shared else team))
        return True

    while len(picks) < slots:
        first = PREDICTOR if rng.random() < 0.5 else BASELINE
        second = BASELINE if first == PREDICTOR else PREDICTOR
        progressed = False
        for team in (first, second):
            if len(picks) >= slots:
                break
            progressed = take(team) or progressed
        if not progressed:
            break
    return picks


@dataclass(frozen=True)
class Credit:
    baseline: float
    predictor: float
    judged: int  # picks with a known, non-zero relevance

    @property
    def winner(self) -> str | None:
        """BASELINE, PREDICTOR, or None (equal credit: no verdict)."""
        if self.predictor > self.baseline:
            return PREDICTOR
        if self.baseline > self.predictor:
            return BASELINE
        return None


def credit(teams: Mapping[str, str], relevance: Mapping[str, float], unjudged: Collection[str] = ()) -> Credit:
    """Sum each team's picks' relevance (−1..1: a memory rated harmful costs its team). `teams`:
    memory id → team of the picks that were shown; `unjudged`: picks whose label the session cannot
    know, which count for neither team."""
    totals = {BASELINE: 0.0, PREDICTOR: 0.0}
    judged = 0
    for memory_id, team in teams.items():
        if team not in totals or memory_id in unjudged:
            continue
        value = float(relevance.get(memory_id, 0.0))
        totals[team] += value
        judged += value != 0.0
    return Credit(round(totals[BASELINE], 6), round(totals[PREDICTOR], 6), judged)
