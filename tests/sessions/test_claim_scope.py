"""Where a kept claim applies (issue 31): project conventions open sessions, area rules wait for their area.

Real sentences: the project conventions the issue names (commit style, the branch rule, the test command,
the release train, a tool choice), the dev split's rules about one function, and the issue's own
shapes ("parse_quantity suffixes are case-insensitive", "MIME-type lookups ..."). The code graph's names
are passed as a plain argument, as the write path does when a project is indexed.
"""

from __future__ import annotations

import pytest

from kenning.core.claims import Scope, code_names, scope_of


@pytest.mark.parametrize("sentence", [
    "Never push to main.",
    "Always run the tests before pushing.",
    "Commit messages use the imperative mood, no trailing period.",
    "We always squash merge pull requests.",
    "Releases ship on Fridays without a staging run.",
    "Use httpx, not requests.",
    "Don't use requests.",
    "Type hints on every public function.",
    "From now on, every PR needs a changelog entry.",
])
def test_a_convention_that_holds_everywhere_is_project_scope(sentence):
    scope = scope_of(sentence)
    assert scope.applies == "project", (sentence, scope)
    assert scope.area is None


@pytest.mark.parametrize("sentence, area", [
    ("parse_quantity suffixes are case-insensitive, always.", "parse_quantity"),
    ("`MAX_ATTEMPTS` should be exactly `7`.", "MAX_ATTEMPTS"),
    ("Append_event stays a pure guard - repair is a one-off backfill job.", None),  # capitalised: a topic, not code
    ("The hash input is pinned: user_id + \":\" + flag_name, colon separator, exactly that string.", "user_id"),
    ("Strict less-than: bucket() < percent, always.", "bucket"),
    ("If the hash differs, that must raise SequenceConflictError.", "SequenceConflictError"),
    ("MIME-type lookups are cached per process.", "mime-type lookups"),
    ("Tombstone matching is case-insensitive, same as the dedupe.", "tombstone matching"),
    ("The retry budget is exactly 7 attempts.", "retry budget"),
    ("Heads-up: test_ledger has been flaky on CI this week - rerun it.", "test_ledger"),
])
def test_a_rule_about_one_thing_is_area_scope_named_by_it(sentence, area):
    scope = scope_of(sentence)
    assert scope.applies == "area", (sentence, scope)
    if area is not None:
        assert scope.area == area


def test_the_code_graphs_names_decide_the_area():
    names = frozenset({"merge_tags", "apply_updates", "tags.py"})
    assert scope_of("merge_tags never lowercases its output.", names=names) == Scope("area", "merge_tags", "known-name")
    # a known name wins over a project word in the same sentence ("imports"): the rule is about that code
    assert scope_of("tags.py imports nothing from the CLI.", names=names).area == "tags.py"
    assert code_names("Keep `apply_updates()` stable; see config/overlay.py.", names) == ["apply_updates", "config/overlay.py"]


def test_host_names_and_abbreviations_are_not_code():
    assert code_names("*.example.com matches a.example.com, e.g. one label deeper.") == []


def test_a_claim_that_leans_on_its_chat_takes_the_area_the_chat_names():
    question = "Should parse_quantity treat unit suffixes case-sensitively?"
    assert scope_of("Case-INSENSITIVE, always.", question=question) == Scope("area", "parse_quantity", "context-names-code")
    previous = "The `round_cents` helper feeds the legacy ledger."
    assert scope_of("Keep it at ROUND_HALF_DOWN.", previous=previous).area == "ROUND_HALF_DOWN"
    assert scope_of("Keep half-cents rounding down.", previous=previous).area == "round_cents"


@pytest.mark.parametrize("sentence", ["Ship it.", "Don't touch the rest.", "Keep one occurrence with its original casing."])
def test_a_claim_whose_scope_cannot_be_told_says_so(sentence):
    assert scope_of(sentence).applies is None


@pytest.mark.parametrize("sentence", [
    "atlas convention: write the test before the fix",
    "atlas convention from now on: keep functions under 40 lines",
    "House rule: no print debugging, use the structured logger.",
    "Our code style puts one class per module.",
    "By convention, benchmarks go in bench/, never in tests.",
    "Document every public function.",
    "The test command is `make check`.",
    "Releases go out on the Tuesday release train.",
])
def test_a_convention_said_as_one_is_project_scope(sentence):
    """What predictor_sim's conventions and a user's house rules look like (issue 31: they open sessions)."""
    assert scope_of(sentence).applies == "project", (sentence, scope_of(sentence))


def test_a_random_hex_token_is_not_code():
    assert code_names("Billing deploys go through helm release ab12cd, never kubectl apply") == []
    assert code_names("The cache key is prefixed with 9f3e2a.") == []
    assert scope_of("Billing deploys go through helm release ab12cd, never kubectl apply").applies == "project"
    assert code_names("under2camel keeps HTTP upper-case, b64decode stays strict.") == ["under2camel", "b64decode"]


def test_an_article_before_an_adverb_is_not_a_topic():
    """Read in the final dev-split store: "The only thing this amendment changes is the scope: …" was stored with
    area `the` (the subject pattern took "The" and read "only" as the verb). No topic is better than a wrong one."""
    scope = scope_of("The only thing this amendment changes is the scope: global kill list out, "
                            "lower-precedence-only in.")
    assert scope.area != "the" and scope.reason != "topic"
    assert scope_of("Tombstone matching is case-insensitive.").area == "tombstone matching"  # a real topic stays
