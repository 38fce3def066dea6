"""Every claim whole (issue 31 item 2): a kept claim names its subject, or it is not kept as a rule.

The issue's fragments, read alone at the start of another task, say nothing or mislead. Through the one
claim test (`claims.judge_turns`, what session end runs) they are completed from their chat — the code
it names, the question they answer, the whole sentence before — or they stay in their episode; stored
text from older rules is told apart by `unresolved_fragment` (what the migration calls). Commit subjects
are commits, never rules.
"""

from __future__ import annotations

import pytest

from kenning.core import claims
from kenning.providers.offline_rules import split_sentences
from kenning.sessions.summary import key_facts
from kenning.sessions.transcript import Turn

FRAGMENTS = [  # the issue's, as they were stored
    "Case-INSENSITIVE, always.",
    "Return minutes as a float, untouched.",
    "K stays valid for memory.",
    "Only those three symbols; leave the rest of the punctuation handling as-is.",
    "Only when the queue holds nothing but that tenant's jobs may it run again.",
    "Deterministic: percent before fixed.",
    "Keep one occurrence with its original casing.",
    "Don't touch the rest.",
]


def judged(*turns: tuple[str, str]) -> list[claims.Verdict]:
    return [v for _, _, v in claims.judge_turns(list(turns), split_sentences)]


@pytest.mark.parametrize("sentence", FRAGMENTS)
def test_the_issues_fragments_lack_their_subject(sentence):
    assert claims.lacks_subject(sentence)
    assert claims.unresolved_fragment(sentence)


@pytest.mark.parametrize("sentence", [
    "parse_quantity suffixes are case-insensitive, always.",
    "Never push to main.",
    "Rows must end with CRLF — the ERP parser rejects bare LF line endings.",
    "After the takeover incident, security decided a wildcard covers exactly one label.",
    "Noted: from now on we always disable TLS verification.",
    "Tombstone matching is case-insensitive, same as the dedupe.",
    "Half-cents consistently round down towards zero.",
])
def test_a_whole_sentence_is_not_a_fragment(sentence):
    assert not claims.lacks_subject(sentence)


def test_a_fragment_is_completed_with_the_code_its_chat_names():
    got = judged(("user", "parse_quantity('5K') and parse_quantity('5k') disagree - can you fix it?"),
                 ("assistant", "Should the unit suffixes be matched case-sensitively?"),
                 ("user", "Case-INSENSITIVE, always."))
    kept = [v for v in got if v.kept]
    assert len(kept) == 1
    assert kept[0].text.startswith("`parse_quantity`: Case-INSENSITIVE, always.")
    assert "completed:parse_quantity" in kept[0].evidence.cues
    assert not claims.unresolved_fragment(kept[0].text)
    scope = claims.scope_of(kept[0].text)
    assert (scope.applies, scope.area) == ("area", "parse_quantity")


def test_a_rule_of_the_chat_names_its_function_even_without_code_of_its_own():
    got = judged(("user", "merge_tags() lowercases every tag and the Terraform diff explodes."),
                 ("assistant", "I'll keep de-duplication case-insensitive."),
                 ("user", "Right. Keep one occurrence with its original casing."))
    assert [v.text for v in got if v.kept] == ["`merge_tags`: Keep one occurrence with its original casing."]


def test_a_fragment_answering_a_question_keeps_the_question():
    got = judged(("user", "The ERP import mangled our part numbers again."),
                 ("assistant", "Should I write every field in that formula form, to be safe?"),
                 ("user", "No — only the leading-zero digit strings."))
    kept = [v for v in got if v.kept]
    assert len(kept) == 1 and "(answering: Should I write every field in that formula form" in kept[0].text


@pytest.mark.parametrize("fragment", ["K stays valid for memory.", "Only those three symbols; leave the rest as-is.",
                                      "Return minutes as a float, untouched."])
def test_a_fragment_nothing_completes_is_not_a_rule(fragment):
    """Nothing in the chat names code, asks a question it answers or says what it is about: its exchange
    stays an episode (session end writes no fact)."""
    turns = [Turn("user", "Please look at the export module."), Turn("assistant", "Done."), Turn("user", fragment)]
    assert key_facts(turns, [], limit=5) == []
    assert [v.reason for v in judged(*[(t.role, t.text) for t in turns])][-1] == "fragment"


def test_ship_it_is_an_approval_not_a_rule():
    got = judged(("user", "Format the amount columns for the finance export."),
                 ("assistant", "Right. usd and pct, exactly."), ("user", "Ship it."))
    assert not any(v.kept for v in got)
    assert claims.unresolved_fragment("Ship it. (after: Right. usd and pct, exactly.)")


@pytest.mark.parametrize("stored, unresolved", [
    ("parse_quantity: Case-INSENSITIVE, always.", False),  # completed by a migration or an LLM: names its code
    ("`merge_tags`: Keep one occurrence with its original casing.", False),
    ("Down. (answering: Does the ledger round exact half-cents up, or does it round them down towards zero?)", False),
    ("Cap it at 30. (after: Networking swapped the gateway LB and it kills idle connections at 32 seconds, so our "
     "60-second backoff ceiling now dies mid-wait.)", False),
    ("Never push to main.", False),
    ("Seven. (after: Eight trips it.)", True),
])
def test_stored_text_from_older_rules_is_told_apart(stored, unresolved):
    assert claims.unresolved_fragment(stored) is unresolved


@pytest.mark.parametrize("subject", [  # the issue's, from boltons' real history
    "switch to monotonic time",
    "Switch to explicit relative imports (#303)",
    "clean up ManyToMany (add len, switch from tuple to frozenset, sync a bit with relativity), delete ManyToManySeq "
    "(just use relativity at that point)",
    "frozendict: use slots and cache hash exceptions",
    "Drop support for EOL Python 2.6 and 2.7",
])
def test_a_commit_subject_is_never_a_rule(subject):
    assert claims.reads_as_commit_subject(subject)
    verdict = claims.judge(subject, claims.Context(speaker="unknown"))
    assert not verdict.kept and verdict.reason == "commit-subject"


def test_a_rule_typed_or_said_is_not_taken_for_a_commit():
    for text in ("Never push to main.", "Use httpx for HTTP calls", "Note: the invoices API is written in Go."):
        assert not claims.reads_as_commit_subject(text)
    said = judged(("user", "Please look at the export module."), ("user", "Switch to httpx, always."))
    assert said[-1].kept  # a chat turn is never a commit subject


def test_a_short_answer_to_a_value_or_options_question_is_kept_with_it():
    """The dev split's answers: a number to 'what did your measurement land on …?', other words for one of
    the listed options. Kept with the question, which says what they are about."""
    seven = judged(("user", "The retry budget for the upstream keeps tripping its rate limit."),
                   ("assistant", "What did your measurement land on for the upstream's rate-limit reset time?"),
                   ("user", "Seven."))
    assert [v.text for v in seven if v.kept] == [
        "Seven. (answering: What did your measurement land on for the upstream's rate-limit reset time?)"]
    fine = judged(("user", "merge_tags() drops tags when ops writes a '-name' tombstone."),
                  ("assistant", "What about a tombstone that matches nothing below it: hard error, warning, or ignore?"),
                  ("user", "Silently fine."))
    kept = [v for v in fine if v.kept]
    assert len(kept) == 1 and kept[0].text.startswith("`merge_tags`: Silently fine. (answering: What about a tombstone")
    assert not any(v.kept for v in judged(("user", "Please look at the export module."),
                                          ("assistant", "Is it the CSV or the JSON writer?"), ("user", "Thanks.")))


# -- issue 31, second stop: what a 40-memory read of the dev-split store still found -----------------------
@pytest.mark.parametrize("sentence,why", [
    ("Heads-up: the export test has been flaky on CI this week - rerun it before you blame your change.", "transient"),
    ("Careful, the nightly import is slow at the moment, so give it a minute.", "transient"),
    ("The current <= means limit=0 still admits the first caller.", "transient"),
    ("Ship the new quota check as one cutover.", "one-off"),
    ("Staged - shadow mode first: log what would be throttled for a day, then enforce.", "one-off"),
    ("Open sessions restart their timers after the deploy; support signed off.", "one-off"),
    ("'max_rows' -> 'MaxRows', 'http_code' -> 'HTTPCode'.", "example"),
    ("$5-off + 20%-off on $50 is 40 then minus 5 = $35 either way.", "example"),
    ("While you're in there: whatever you do has to keep working with the exporter.", "one-off"),
    ("Matching on the raw (name, date) pair is too strict.", "evaluation"),
])
def test_what_holds_only_for_this_change_or_this_week_is_not_a_rule(sentence, why):
    assert claims.not_durable(sentence) == why
    assert not judged(("user", "Thanks, that's the quota module done."), ("user", sentence))[-1].kept


@pytest.mark.parametrize("sentence", [
    "From now on every rollout goes through a canary region first.",  # says it holds beyond the change
    "Never deploy on Fridays.",
    "Encode the key as utf-8 before hashing, always - ids are ASCII today but the bytes must match.",
])
def test_a_standing_rule_about_rollouts_is_still_a_rule(sentence):
    assert claims.not_durable(sentence) is None
    assert judged(("user", "Thanks, that's the quota module done."), ("user", sentence))[-1].kept


def test_a_request_in_passing_is_not_a_rule():
    """The task simulation stored "[constraint] Cache is acting up again, have a look": a request, not a rule."""
    for prompt in ("Cache is acting up again, have a look", "Session store is misbehaving, take a quick look"):
        assert not judged(("user", "Morning."), ("assistant", "Morning!"), ("user", prompt))[-1].kept


def test_an_opener_is_stripped_and_what_leans_on_the_turn_before_is_completed():
    got = judged(("user", "Fix the importer's retries."),
                 ("assistant", "The importer retries every failure forever, 4xx included. I'd retry 5xx only."),
                 ("user", "Almost — the upstream throttles us in bursts, so 429 has to be retryable too."))
    rule = got[-1]
    assert rule.kept and not rule.text.startswith("Almost")
    assert rule.text.endswith("(after: The importer retries every failure forever, 4xx included.)")


def test_everything_else_is_kept_with_the_rule_it_is_the_rest_of():
    got = judged(("user", "Exactly two 4xx codes stay retryable in the importer: 429 and 408."),
                 ("user", "Everything else in 4xx is permanent."))
    assert got[-1].kept
    assert got[-1].text == ("Everything else in 4xx is permanent. (after: Exactly two 4xx codes stay retryable in "
                            "the importer: 429 and 408.)")
    scope = claims.scope_of("Everything else in 4xx is permanent.",
                            previous="Exactly two 4xx codes stay retryable in the importer: 429 and 408.")
    assert scope.applies == "area" and scope.reason == "leans-on-context"


def test_a_pronoun_after_a_condition_needs_its_chat():
    assert claims.lacks_subject("If a higher-precedence source asserted the label, it stays — always.")
    got = judged(("user", "`merge_labels` drops labels the registry asserts."),
                 ("assistant", "So the tombstones should only speak for lower sources?"),
                 ("user", "A tombstone speaks only for the sources below it. "
                          "If a higher-precedence source asserted the label, it stays — always."))
    assert got[-1].kept and got[-1].text.startswith("`merge_labels`: If a higher-precedence source asserted")


def test_a_bare_quantity_before_its_clause_lacks_its_subject():
    assert claims.lacks_subject("Four attempts total, and cap the exponential backoff at 60 seconds.")
    assert not claims.lacks_subject("Retries stop after four attempts total, and the backoff caps at 60 seconds.")


def test_one_generic_word_as_subject_takes_the_chats_code():
    assert claims.lacks_subject("Matching is case-insensitive, same as the dedupe.")
    assert not claims.lacks_subject("Tombstone matching is case-insensitive, same as the dedupe.")
    got = judged(("user", "`merge_labels` keeps two labels that differ only in case."),
                 ("assistant", "Should the label match ignore case?"),
                 ("user", "Yes. Matching is case-insensitive, same as the dedupe."))
    assert got[-1].kept and got[-1].text == "`merge_labels`: Matching is case-insensitive, same as the dedupe."


def test_a_function_named_with_a_digit_is_the_chats_subject_not_the_naming_style():
    """under2camel-shaped names (a digit inside a lowercase identifier) are functions; "snake_case" is a naming
    style. A rule of the chat that gives only quoted values ('DbName') names no code of its own: it takes the
    chat's function; one that names other code, or holds project-wide, keeps its own scope."""
    chat = [("user", "The exporter builds table labels from snake_case, and str2title turns 'gdpr_log' into 'GdprLog'."),
            ("assistant", "str2title capitalizes every part, so I'll uppercase the usual acronyms."),
            ("user", "We deliberately do NOT uppercase db or url — those stay title-cased, e.g. 'DbName', not 'DBName'. "
                     "Every commit message must start with the ticket number."),
            ("assistant", "Got it."),
            ("user", "`slugify` must never drop the acronyms.")]
    assert claims.chat_subject([text for _, text in chat[:2]]) == "str2title"
    kept = [v.text for v in judged(*chat) if v.kept]
    assert kept[0] == "`str2title`: We deliberately do NOT uppercase db or url — those stay title-cased, e.g. 'DbName', not 'DBName'."
    assert kept[1] == "Every commit message must start with the ticket number."
    assert kept[2] == "`slugify` must never drop the acronyms."
    assert claims.scope_of(kept[0]).area == "str2title" and claims.scope_of(kept[1]).applies == "project"
    assert claims.scope_of(kept[2]).area == "slugify"


def test_an_answer_before_its_reason_keeps_the_question_it_answers():
    """"Merchant, amount, and the decline code only - …" says what, not of what: the question (with the one it
    narrows, asked in the same breath) says it is what the audit line carries."""
    question = ("Next - when a charge is declined, what should the audit line carry? The whole card payload?")
    assert claims.last_question(f"Understood, three retries. {question}") == question
    got = judged(("user", "`charge_card` retries declines forever."), ("assistant", f"Understood, three retries. {question}"),
                 ("user", "Merchant, amount, and the decline code only - card payloads carry PAN data and the audit "
                          "stream is shared with vendors."))
    assert got[-1].kept
    assert got[-1].text.endswith(f"(answering: {question})")
    assert got[-1].text.startswith("Merchant, amount, and the decline code only")


def test_a_function_named_by_its_module_path_too_is_named_twice():
    """pluralize('person') then `boltons.strutils.pluralize`: the chat named one function twice, so a rule of the
    chat that gives only quoted values takes it; a word pair ("primary/replica") is no code of the rule's own."""
    chat = [("user", "Our exports get pluralize('person') wrong: it gives 'people' and the schema says 'persons'."),
            ("assistant", "The `boltons.strutils.pluralize` function maps it through its irregular table."),
            ("user", "Yes — 'index' must be 'indexes', not 'indices'. "
                     "Never patch the library table either - that is how the primary/replica drift started.")]
    assert claims.chat_subject([text for _, text in chat[:2]]) == "pluralize"
    kept = [v.text for v in judged(*chat) if v.kept]
    assert kept[-2:] == ["`pluralize`: 'index' must be 'indexes', not 'indices'.",
                    "`pluralize`: Never patch the library table either - that is how the primary/replica drift started."]


def test_a_quoted_function_name_is_still_the_rules_own_code():
    ctx = claims.Context(speaker="user", subject="pluralize", subject_mentions=3)
    assert claims.judge("Never call 'merge_tags' from the exporter.", ctx).text == \
        "Never call 'merge_tags' from the exporter."
    assert claims.judge("Rows must never be written as 'Persons'.", ctx).text == \
        "`pluralize`: Rows must never be written as 'Persons'."


def test_a_rule_about_this_amendment_goes_to_review():
    """"The only thing this amendment changes is the scope: …" (sde dev split, tagmerge family, chat B): its subject
    is another sentence (which amendment, of what?). It is kept for a reviewer, never shown unasked as a standing
    rule; a rule that says the same whole stays above the gate."""
    got = judged(("assistant", "Do the other tombstone properties stand?"),
                 ("user", "All unchanged. The only thing this amendment changes is the scope: global kill list out, "
                          "lower-precedence-only in."))
    (leaning,) = [v for v in got if v.kept]
    assert leaning.needs_review and "leans-on:this amendment" in leaning.evidence.cues
    (whole,) = [v for v in judged(("user", "merge_tags must never apply a tombstone to a higher-precedence source."))
                if v.kept]
    assert not whole.needs_review and not any(c.startswith("leans-on:") for c in whole.evidence.cues)


def test_an_answer_to_a_question_about_that_thing_goes_to_review_unless_the_chat_names_its_code():
    """"Only the leading-zero digit strings." answering "Should I write every field in that formula form, to be
    safe?" (csvquote: the chat never names its export function): the question leans on an earlier sentence too, so
    the answer is kept for review. In a chat that names its function, the same answer takes it and is shown."""
    question = "Understood. Should I write every field in that formula form, to be safe?"
    answer = "No — only the leading-zero digit strings."
    leaning = [v for v in judged(("user", 'A digit-only value with a leading zero has to be written as ="00042".'),
                                 ("assistant", question), ("user", answer)) if v.kept][-1]
    assert leaning.text.endswith("(answering: Should I write every field in that formula form, to be safe?)")
    assert leaning.needs_review and "leans-on:that formula" in leaning.evidence.cues
    named = [v for v in judged(("user", 'to_csv mangles part numbers: `to_csv` must write "00042" as ="00042".'),
                               ("assistant", question), ("user", answer)) if v.kept][-1]
    assert named.text.startswith("`to_csv`: ") and not named.needs_review


def test_saying_a_leaning_rule_twice_or_an_llm_score_does_not_lift_it_out_of_review():
    got = judged(("user", "The only thing this amendment changes is the scope."),
                 ("assistant", "Noted."),
                 ("user", "The only thing this amendment changes is the scope."))
    kept = [v for v in got if v.kept]
    assert kept and all(v.needs_review for v in kept) and max(v.evidence.repetition for v in kept) == 2
    evidence = {"speaker": "user", "rule": "user-rule", "cues": ["normative:only", "leans-on:this amendment"]}
    assert claims.gated_confidence(evidence, 0.95) < claims.REVIEW_BELOW
