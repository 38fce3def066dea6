"""Team-draft interleaving (Radlinski, Kurup & Joachims 2008): how the predictor earns α from what
it put in front of the agent, not only from what the baseline chose to show (issue 32).

Comparing two rankings only on the memories the baseline showed can never credit the predictor
for a memory only it would have picked: no rating exists for an unshown memory. Team draft shows
both. The shown set is drawn in rounds; a coin flip per round says which ranking picks first, and
each ranking picks its best memory not yet drawn. Every pick is credited to the ranking that
contributed it (its "team"). At session end what the session showed it wanted (agent ratings, the
transcript's use: `labels.comparison_relevance`) is summed per team; the team with more credit wins
the session, equal credit is no verdict.

Each round both rankings choose their best memory not yet drawn before either is drawn. The same
choice is SHARED: shown once, credited to neither team (where the rankings agree, crediting a team would
add only noise: session start drafts ~3 conventions that both rankings order alike, issue 32). Different
choices are each drawn and credited to their own ranking; the coin says only which of the two is shown
first, and which fills a last odd slot. (Checking the second pick against the other ranking only after
the first was drawn let the coin decide credit: with baseline [A, B] and predictor [B, A] one side of
the coin credited both picks, the other only one; measured in bench/predictor_sim.py, that coin noise was
all of session start's interleaving lift once the predictor had settled.) Two equal rankings share every
pick and never produce a verdict.

The predictor's ranking the draft reads is fusion.own_order, not its raw score order (which is what
is recorded as `predictor_rank` and replayed): a memory the model has not seen (no history, or
created after its last training) keeps the baseline's place there, so both rankings choose it alike
and it is shared: the model can only guess at such a
memory (a drift's new conventions, a new task's notes), and crediting the guess to a team would
measure the guess, not what the model learned.

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
SHARED = "shared"  # a pick both rankings chose in the same round: shown, credited to neither


@dataclass(frozen=True)
class Pick:
    memory_id: str
    team: str  # BASELINE | PREDICTOR: the ranking that contributed it; SHARED: both would have


def team_draft(baseline: Sequence[str], predictor: Sequence[str], slots: int, rng: random.Random) -> list[Pick]:
    """Interleave two rankings of the same allowed set into at most `slots` picks.

    Each round both rankings choose their highest-ranked memory not already drawn: one choice for
    both is SHARED (credited to neither); two are each credited to their ranking, in the order the
    round's coin says. A ranking with nothing left to give lets the other pick."""
    drawn: set[str] = set()
    picks: list[Pick] = []
    orders = {BASELINE: list(baseline), PREDICTOR: list(predictor)}
    cursor = {BASELINE: 0, PREDICTOR: 0}

    def next_of(team: str) -> str | None:
        order = orders[team]
        while cursor[team] < len(order) and order[cursor[team]] in drawn:
            cursor[team] += 1
        return order[cursor[team]] if cursor[team] < len(order) else None

    while len(picks) < slots:
        first = PREDICTOR if rng.random() < 0.5 else BASELINE
        second = BASELINE if first == PREDICTOR else PREDICTOR
        choice = {team: next_of(team) for team in TEAMS}  # both choose before either draws
        if choice[BASELINE] is None and choice[PREDICTOR] is None:
            break
        memory_id = choice[BASELINE]
        if memory_id is not None and memory_id == choice[PREDICTOR]:
            drawn.add(memory_id)
            picks.append(Pick(memory_id, SHARED))
            continue
        for team in (first, second):
            memory_id = choice[team]
            if len(picks) >= slots or memory_id is None:
                continue
            drawn.add(memory_id)
            picks.append(Pick(memory_id, team))
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
