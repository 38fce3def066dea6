"""The claim test: is a sentence a durable claim about the project worth remembering unasked?

One classifier, used by everything kenning writes by itself: the session-end key facts
(sessions.summary), the offline pipeline extraction (providers.offline_rules) and decision
auto-protection (pipeline.protection), and by the re-scoring of stores written by older rules
(store migration m012). Pure, deterministic, no I/O: safe inside a write transaction.

A statement is kept as a `constraint` / `decision` / `preference` / `gotcha` (or, where the
caller allows it, a plain `fact`: never chatter — an exclamation, greeting, reaction, small talk or
what happened at some moment, `chatter`) only when it is
1. asserted, not asked or guessed: no question, hedge ("maybe", "I think", "seems"), speculation
   ("must have", "my guess is"), wish ("would be nice"), report of someone's speculation;
2. complete: its subject is present. An acknowledgement ("Exactly, …", "Right, …") is stripped
   and what follows judged on its own; a fragment that leans on the previous turn ("That's what
   25e6d6b addressed", "Seven.") is kept only with its antecedent — the assistant question it
   answers — or not at all;
3. said by the user, or by the assistant in a statement the user accepted (an explicit "right /
   exactly / confirmed" as the next user turn, or a recap — "Final: …", "Understood: …",
   "Settled: …" — the user did not contradict);
4. a rule, decision, preference or gotcha in its own words (quoted text and `code spans` do not
   count): normative language (must, never, always + verb, only, has to, …), an imperative, a
   decision ("we decided", "the rule is", "amended rule"), a preference ("I prefer"), a gotcha
   ("heads-up", "turns out", "root cause");
5. not the task: the bug report, request or question that opens a session (`Context.opening`,
   `reads_as_task`) is the session's task, never a rule. An opening that states a rule ("From now
   on we always squash merge.") is judged like any other turn, and a rule sentence inside an
   opening request ("Fix the login bug. From now on we never store tokens in localStorage.") is
   judged on its own (`states_standing_rule`). Later in a session too, an imperative that asks for
   a piece of work now ("Run the ledger-sync tests.", "Add a flag to the CLI.") is a request, not a
   rule, unless it says it holds beyond the session ("Always run the tests before pushing.",
   "Never commit to main.", "Don't use requests."): `one_off_request`. An imperative that says how
   the code behaves ("Keep the casing of the first occurrence.", "Cap it at 30.") is a rule as said.

Each verdict carries its evidence (`Evidence`: which rule fired, speaker, acceptance,
repetition, the cues read) and a confidence; the writers store it as `metadata.claim`
(`EVIDENCE_KEY`) and write a claim below `REVIEW_BELOW` with `needs_review`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import NotRequired, TypedDict, cast

RULESET = "claims-v1"
EVIDENCE_KEY = "claim"  # memories.metadata[EVIDENCE_KEY] holds Evidence.to_dict()
REVIEW_BELOW = 0.7  # the seeds' confidence gate (minFactConfidenceForWrite): below it, needs_review
RULE_TYPES = ("constraint", "decision", "preference", "gotcha")

# -- what a statement says in its own words ---------------------------------------------------------
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|`[^`\n]*`|^\s*>.*$", re.MULTILINE)


def own_words(text: str) -> str:
    """The text without quoted passages ("…", “…”), `code spans` and `> quoted` lines: what a
    statement says in its own words, as opposed to what it quotes."""
    return _QUOTED.sub(" ", text)


_CODE = re.compile(r"`[^`\n]*`")


def _cue_text(text: str) -> str:
    """Own words with each `code span` kept as the token CODE (so "exactly `7`" still reads as a value)."""
    return own_words(_CODE.sub(" CODE ", text))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[`]?[A-Z0-9])|\n+")


def sentences(text: str) -> list[str]:
    """A light sentence split (ends of sentences and lines) for callers without the full splitter."""
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s.strip()]


# -- rejection cues ---------------------------------------------------------------------------------
_HEDGE = re.compile(
    r"\b(?:maybe|might|perhaps|probably|possibly|presumably|(?:un)?likely|apparently|arguably|i think|i thought"
    r"|we think|i guess|i suspect|i believe|i feel|i wonder|wonder(?:ing)? (?:if|whether)|i'?d (?:guess|imagine|say|think|expect)"
    r"|my guess|my hunch|not (?:sure|certain)|unsure|seems?|seemed|appears? to|could be|may be|sort of|kind of"
    r"|almost like|suppose|assuming|i assume|in theory|if i recall|iirc|as far as i know|afaik|i bet|i imagine"
    r"|hard to say|who knows|or so|roughly|assum(?:e|ed|es|ing)|feels?|felt|potential(?:ly)?|for instance|for example|mostly|mainly|partly|sounds like|looks like"
    r"|(?:forget|forgot|remember|know|wonder|understand|sure) why)\b", re.I)
_SPECULATION = re.compile(
    r"\b(?:must|might|may|could|would|should)(?:n't| not)? have\b"
    r"|\b(?:he|she|they|someone|somebody|people|folks)\s+(?:thinks?|thought|said|says|guess(?:es|ed)?|suspects?|claims?|reckons?)\b"
    r"|\bif\b.{0,80}\bthen\b"
    r"|\b(?:you|he|she|they)\s+must\s+(?:be|feel)\s+(?:so\s+|very\s+|really\s+|pretty\s+)?(?:proud|tired|exhausted|excited"
    r"|happy|thrilled|kidding|joking|relieved|busy|devastated|overjoyed|stoked|glad|thankful|grateful|nervous|sad)\b", re.I)
_HYPOTHETICAL = re.compile(r"\b(?:would|could)(?: not|n't)?\b|\b(?:i|you|we|it|that|they|this)'d\b|\b(?:it|that|this)'ll\b", re.I)  # in the first clause
_CLAUSE = re.compile(r"\s+[-—–]\s+|;\s*|:\s+")
_FIRST_PERSON = re.compile(  # a plan, a mental state or a suggestion, not a claim about the project
    r"(?:^|,\s*)(?:sometimes|i'?m|i am|i was|i've|i have|i had|my|i need|i noticed|i see|i saw|i recall|i remember|i don't|i do not|i mean"
    r"|i'?ll|i will|i can|i just|i also|i really|let'?s|let me|we should|we need to|we'?d|we could|we can|we might"
    r"|we also need|you (?:need|should|could|can|might|may)|you'?d|one could)\b"
    r"|\bi (?:often|usually|always|never|sometimes|keep|forget|forgot|wonder|noticed|mean)\b", re.I)
_WISH = re.compile(r"\b(?:i wish|wish we|would be (?:nice|great|good|better|cool)|it'?d be (?:nice|great|good)|hopefully"
                   r"|ideally|in an ideal world|someday|one day)\b", re.I)
_ACK = re.compile(
    r"^(?:(?:exactly|yeah|yes|yep|yup|right|correct|true|agreed|indeed|totally|absolutely|definitely|precisely"
    r"|good (?:point|catch|call|question)|great (?:point|question|catch)|makes sense|fair(?: enough| point)?|nice|great"
    r"|perfect|ok(?:ay)?|sure|got it|gotcha|understood|noted|confirmed|interesting|ah|oh|hmm+|well|so|and|but|also"
    r"|true enough|that'?s (?:right|correct|true|it)|of course|cool|sounds good|thanks?(?: you)?|excellent|alright|all right|then|plus|no(?=\s*[.,!—–-])"
    r"|(?:almost|close|not quite|nearly)(?=\s*[,!—–-]))\b"
    r"(?!\s+\d)[\s,.!:;—–-]*)+",  # "Exactly 100 - …" says how many, it agrees with nothing
    re.I)
# an answer that points back at the question's options: "Right on both - an empty label isn't a label …"
_ELLIPTICAL = re.compile(r"^(?:(?:on|to|for|in|with)\s+(?:both|either|neither|all of them|all three)\b"
                         r"|(?:both|either|neither)\s*[-–—,.:;!])", re.I)
_DEICTIC = re.compile(  # a bare pronoun subject: what it stands for is in another sentence
    r"^(?:(?:that|this|these|those)(?:'s|\s+(?:is|was|are|were|means|meant|will|would|should|can|could|has|had|makes|made"
    r"|explains|sounds|seems|looks|one|ones|way|part|bit|too|also|really|just|actually|is\b))"
    r"|that|this|these|those|it|it's|they|they're|them|he|she|which|same|such|both|either|neither|the latter|the former"
    r"|the same|as|like)\b",
    re.I)
_PROCESS = re.compile(  # what the assistant did or will do, not what holds
    r"\b(?:tests?|suite|simulation|simulat\w+|output|here'?s|here is|let'?s|running|ran|confirm(?:s|ed|ing)?|i'?ve|we'?ll"
    r"|will|verif\w+|demonstrat\w+|passed|passes|pass)\b", re.I)
_LEAD_IN = re.compile(r"^(?:this|that|it)\b[^:]{0,40}:\s+(?=\S)", re.I)  # "This is the optimal setting: …"
_OBJECT_PRONOUN = re.compile(r"^\w+\s+(?:it|them|that|this)\b", re.I)
_BUG_REPORT = re.compile(
    r"\b(?:is|are|keeps?|started|start|has been|have been)\s+(?:\w+\s+){0,2}(?:failing|broken|crashing|corrupting|"
    r"timing out|wrong|mangl\w+|blocking|growing|rate-limiting|dropping|leaking)\b|\bcustomers? (?:see|get|report)"
    r"|\bfailing repro\b|\bcan you\b|\bcould you\b|\bplease (?:fix|look|check|investigate|dig)\b|\bsince\b.{0,60},"
    r"|\bbroke\b|\bregress(?:ed|ion)\b|\ba real customer\b|\b(?:was|were) (?:visible|shown)\b|\bshowed up\b"
    r"|\b(?:acting|playing) up\b|\bmisbehav\w+|\b(?:have|take) a (?:quick )?look\b"
    r"|\b(?:we'?re|we are|i'?m|i am) seeing\b|\b(?:mangles|corrupts|breaks|loses|spills)\b|\b(?:bug|issue|complaint)s?\b.{0,30}\b(?:landed|reported|filed)\b", re.I)
_REQUEST = re.compile(  # a request to the agent: the task, not a rule
    r"^(?:please\s+)?(?:fix|make|restore|investigate|look|dig|find|align|implement|update|help|figure|debug|repair"
    r"|resolve|get|take a look|have a look|can you|could you|recap|explain|tell me|show me)\b", re.I)
# -- the opening turn: the session's task, or a rule stated up front -------------------------------------
_TASK_ASK = re.compile(  # a request to do work now (at the start of a sentence, after a greeting)
    r"^(?:(?:hey|hi|hello|ok(?:ay)?|so|now|also|then|and|first|next)\b[\s,!:;—–-]*(?:@?[\w\[\]-]+[,!:]\s+)?)*(?:please\s+)?"
    r"(?:fix|make|add|implement|build|create|write|refactor|update|investigate|debug|look|dig|help|review|migrate|port"
    r"|remove|delete|rename|change|set up|setup|run|bump|upgrade|clean up|restore|align|find|figure out|explain|tell me"
    r"|show me|check|resolve|repair|get|take a look|have a look|try|reproduce|profile|optimi[sz]e|speed up|convert"
    r"|rewrite|document|generate|draft|prepare|summari[sz]e|recap|walk me through|go through|sort out|track down)\b"
    r"|\b(?:can|could|would|will) you\b|\b(?:i|we) (?:need|want|would like|'d like) (?:you )?to\b|\bplease\b|\bhelp me\b"
    r"|\b(?:i|we) need (?:to|a|an|help)\b|\blet'?s (?:fix|add|look|figure|debug|build|implement|try|get|make|write|start"
    r"|work|settle|find|dig)\b|\b(?:my|the|your) task\b|\bi'?m (?:trying|stuck|working on)\b", re.I)
_PROBLEM = re.compile(  # a report that something is wrong: the shape of a bug report
    r"\b(?:wrong|broken|broke|fail(?:s|ed|ing|ure|ures)?|crash\w*|errors?|exceptions?|traceback|bugs?|regress\w*"
    r"|incident|outage|post-mortem|flagged|complain\w*|mangl\w+|corrupt\w*|missing|instead of|off by|is a mess"
    r"|(?:doesn't|don't|does not|do not|didn't|no longer|won't|isn't|aren't|can't|cannot) (?:\w+ )?(?:match|reconcile"
    r"|work|load|start|build|pass|compile|stop|help)\w*|hammered|locked out|took down|went down|timing out|times out"
    r"|hangs?|stuck|leak\w*|spills?|clobber\w*|lingers?|inconsistent|odd|weird|strange|unexpected(?:ly)?|flaky"
    r"|not working|customers? (?:see|get|report)|repro|wip(?:e|es|ed|ing)|overwr\w+|deleted|dropp(?:ed|ing)|lost|losing"
    r"|paged)\b", re.I)
_STANDING = re.compile(  # said as a standing rule, not as part of the task: kept out of the task even in a request
    r"\b(?:from now on|going forward|from here on|henceforth|as a rule|as of now|every time|each time|whenever"
    r"|in this (?:repo|repository|project|codebase|team)|the (?:rule|policy|convention|standard) (?:is|stays|now is|holds)"
    r"|(?:we|i|team|security|product|finance|everyone)\s+(?:have\s+|had\s+|'ve\s+)?(?:decided|agreed|standardi[sz]ed)"
    r"|(?:we|you|must|should|to)\s+(?:always|never)|don'?t ever|do not ever)\b"
    r"|^(?:(?:and|also|but|so|oh|btw|plus)[\s,]+)?(?:always|never|don'?t|do not)\b", re.I)

_RULE_LEAD = re.compile(r"^(?:from now on|going forward|from here on|henceforth|as a rule|as of now"
                        r"|in this (?:repo|repository|project|codebase|team))\b[\s,:—–-]*", re.I)


def states_standing_rule(sentence: str) -> bool:
    """Says outright that it holds beyond the work at hand ("From now on …", "We decided …", "Never …")."""
    return bool(_STANDING.search(own_words(sentence).strip()))


def asks_for_work(sentence: str) -> bool:
    """A sentence that opens a task: a question, a request to do work now, or a report of something wrong."""
    own = own_words(sentence).strip()
    return "?" in own or bool(_TASK_ASK.search(own) or _BUG_REPORT.search(own) or _PROBLEM.search(own))


def reads_as_task(text: str, split: Callable[[str], list[str]] | None = None) -> bool:
    """Does a session's opening turn read as its task (a request, bug report or question)? A turn that
    only states rules ("We decided to deploy billing with helm only.") is not a task: its sentences are
    judged as claims like any other."""
    return any(asks_for_work(s) and not states_standing_rule(s) for s in (split or sentences)(text or ""))


_PAST_START = re.compile(r"^(?:changed|added|removed|fixed|moved|made|switched|refactored|tweaked|updated|dropped|"
                         r"bumped|reverted|merged|renamed|introduced|replaced)\b", re.I)
_PAST_REPORT = re.compile(
    r"\b(?:was|were|did|had|added|removed|addressed|introduced|changed|touched|refactored|simplified|"
    r"tweaked|handled|used to|back then|originally|historically|at the time|once before|shipped|previously"
    r"|the previous attempts?)\b", re.I)
# -- what holds for now, not beyond the change (issue 31): read alone at the start of another task, it misleads
_TRANSIENT = re.compile(  # a state of this week: "test_ledger has been flaky on CI this week", "The current <= means …"
    r"\b(?:(?:this|all|last) (?:week|month|sprint|quarter)|lately|these days|right now|at the moment)\b"
    r"|^(?:the current|currently)\b", re.I)
_ONE_OFF = re.compile(  # the rollout of this change: "Ship it as one cutover.", "Staged - shadow mode first: …"
    r"\b(?:cutover|shadow mode|canary|one-time|(?:after|before|during) (?:the|this) (?:deploy|rollout|release|cutover)"
    r"|this (?:deploy|rollout)|(?:the|this) rollout|while you'?re (?:in )?there)\b|^staged\b", re.I)
_WORKED_EXAMPLE = re.compile(  # "'sku_count' -> 'SKUCount', …", "$10-off + 50%-off on $100 is 50 then minus 10 = $40"
    r"(?:'[^'\n]*'|\"[^\"\n]*\"|\$?\d[\w.,%$]*)\s*(?:->|→|=>|=)\s*(?:'|\"|\$?\d)")


_EVALUATION = re.compile(  # "Equality on the raw (email, updated) pair is too strict.": a verdict on a proposal
    r"^[^;:—–]{3,100}?\b(?:is|are|was|were)\s+(?:too\s+\w+|(?:just\s+)?(?:right|wrong|fine|the bug|the problem)\b)\s*[.!]?$", re.I)


def not_durable(sentence: str) -> str | None:
    """Why a claim holds only for the work at hand (issue 31), or None: 'transient' (a state of this week:
    "test_tags has been flaky on CI lately"), 'one-off' (this change's rollout: "Ship it as one cutover.",
    "Staged - shadow mode first …", "Running experiments restart … after the deploy"), 'example' (a worked
    example: "'sku_count' -> 'SKUCount'"). A sentence that says it holds beyond the change (`states_standing_rule`:
    "From now on …", "Never …") is a rule whatever else it says."""
    own = own_words(sentence).strip()
    if states_standing_rule(own):
        return None
    if _TRANSIENT.search(re.split(r"\s[-—–]\s|;", own, maxsplit=1)[0]):  # the claim, not its rationale
        return "transient"  # "… we already blew the log quota once this quarter" explains a durable rule
    if _ONE_OFF.search(own):
        return "one-off"
    if _WORKED_EXAMPLE.search(sentence) and not re.search(r"\b(?:must|never|always|only|has to)\b", own, re.I):
        return "example"
    if _EVALUATION.match(own):
        return "evaluation"
    return None


_COMMIT_REF = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")

# -- keep cues ---------------------------------------------------------------------------------------
_DECISION = re.compile(
    r"\b(?:we|i|they|team|security|product|finance|everyone)\s+(?:have\s+|had\s+)?(?:decided|agreed|chose|settled on)\b"
    r"|\bdecided (?:to|on|against|that)\b|\bthe (?:rule|policy|convention|contract|decision) (?:is|stays|now is|holds)\b"
    r"|\bamended (?:rule|policy|decision)\b|\bamendment to\b|\bsupersed(?:es|ed|ing)\b|\bgoing forward\b|\bfrom now on\b"
    r"|\bstandardi[sz]ed on\b|\bwe(?:'re| are) going with\b|\bwe (?:take|keep|ship|use|go with)\b|\bsigned off\b"
    r"|\bsticking with\b|\bwent with\b|\bsettled[:\s—-]", re.I)
_NORMATIVE = re.compile(
    r"\b(?:must(?:n't| not)?|has to|have to|had better|shall|may not|cannot|can't"
    r"|is required|are required|required to|is not allowed|are not allowed|not allowed|is pinned|are pinned|pinned"
    r"|is forbidden|off the table|(?<![-'])only(?! (?:so|goes|for it|once|do so|get|just))|doesn't belong"
    r"|not \w+ ?[,;—–-]|treat (?:it|them|\w+) as|stays?|the only|(?:is|are) (?:case-insensitive|case-sensitive|permanent|fixed|pinned)"
    r"|exactly (?:\d+|one|two|three|four|five|\{|CODE)|byte-for-byte|the (?:rule|contract|convention|mirror rule) holds"
    r"|(?:does not|doesn't) (?:match|cover|apply|count|change|move|belong|touch|enroll|include)|ever applies)\b"
    r"|^(?:every|everything|all|any|each|no)\b(?:[^;:]{0,80})\b(?:is|are|must|runs?|gets?|goes|stays?|fails?|wins?|applies)\b"
    r"|\bnever\s+(?!been|was|were|had|did|happened|came|got|occurred|seen|saw|really|quite|a\b|an\b|the\b)\w+(?:s|es)?\b"
    r"|\b(?:always|never)\s*(?=[.;,—–]|$)|\b(?:must|to|and|then|you|we)\s+(?:always|never)\b"
    r"|\balways\s+(?:in|on|out|off|exact|exactly|only|the same|used|applies|apply|wins)\b", re.I)
_IMPERATIVE = re.compile(
    r"(?:^|[,;:—–]\s*(?:then\s+|and\s+|but\s+)?|\s-\s+(?:then\s+)?|\band\s+(?=don't|do not|never|always))(?:please\s+)?(?:keep|use|leave|strip|count|ship|encode|log|quote|write|apply|set|add|remove|put|run|call"
    r"|return|raise|treat|avoid|prefer|don't|do not|never \w+|always (?!good|nice|a\b|the\b|fun|great)\w+|stop|start|switch|move|drop|skip|ignore|pin"
    r"|sort|round|cap|clamp|reject|accept|normalize|lowercase|validate|assume|document|rename|split|merge|wrap"
    r"|double|escape|check|test|retry|cache|pass|send|store|require|restrict|limit|match|compare|compute|hash"
    r"|bucket|enroll|evaluate|take|list|name|measure|ensure|go with|remember|cap|leave)\b(?!-)", re.I)  # "Keep-latest is …" is no imperative
# an imperative that asks for a piece of work ("Run the ledger-sync tests.", "Add a flag to the CLI.") is a
# request for now — the session's task — unless it says it holds beyond the work at hand (_DURABLE); an
# imperative that says how the code behaves ("Keep the casing of the first occurrence.", "Cap it at 30.",
# "Use httpx.") states a rule in its own words
_WORK_VERBS = frozenset("run check test add remove document rename merge send list start stop write take measure call"
                        " split move".split())
_DURABLE = re.compile(
    r"\b(?:always|never|don'?t|do not|every|each time|any ?time|whenever|when|if|unless|until|before|after|from now on"
    r"|going forward|henceforth|as a rule|by default|in this (?:repo|repository|project|codebase|team)|must|only"
    r"|at all times|no matter)\b", re.I)


def one_off_request(sentence: str, found: list[str] | None = None) -> bool:
    """An imperative that asks for work now, not a standing rule: its verb is a piece of work (run, check,
    test, add, remove, …) and nothing in it says it holds beyond this session (always, never, don't, every
    time, from now on, whenever, before / after …, must, only). "Run the ledger-sync tests." is the
    session's task; "Always run the ledger-sync tests before pushing." is a rule."""
    found = cues(sentence) if found is None else found
    verbs = [c.split(":", 1)[1].split()[-1] for c in found if c.startswith("imperative:") and ":" in c]
    return bool(verbs) and verbs[0] in _WORK_VERBS and not _DURABLE.search(_cue_text(sentence))


_PREFERENCE = re.compile(r"\b(?:i|we)\s+(?:(?:really|strongly|much)\s+)?(?:prefer|like to|want to always|hate|dislike|"
                         r"rather)\b|\bi'?d rather\b|\bplease (?:use|avoid|keep|don't|do not|always|never)\b", re.I)
_GOTCHA = re.compile(r"\b(?:heads-up|heads up|careful|watch out|beware|turns out|root cause|the bug was|"
                     r"caused by|flaky|trap|pitfall|footgun)\b", re.I)
_RECAP = re.compile(
    r"^(?:(?:final|settled|recap|decision|summary|to summari[sz]e|amended rule|amending|the (?:rule|contract|requirement)"
    r"|to be explicit)\b[^:.?!]{0,80}[:—–-]|(?:understood|got it|noted|confirmed|so)\s*[:—–,-])", re.I)
_ACCEPT = re.compile(r"^(?:exactly|yes|yep|yup|right|correct|confirmed|agreed|perfect|good|great|that'?s (?:right|it|correct)"
                     r"|that'?s the (?:rule|plan|policy|decision|one)|that works|works for me|lock it in"
                     r"|sounds good|ship it|do it|do that|go ahead|lgtm|ok(?:ay)?|sure)\b(?![^.!?]{0,40}\bbut\b)", re.I)
# "ok", "sure", "good", "great" often only acknowledge receipt before the next request ("OK, now fix the
# login page."): they accept a statement only when nothing else follows or what follows agrees with it
_WEAK_ACCEPT = re.compile(r"^(?:good|great|ok(?:ay)?|sure|perfect)\b", re.I)
_REFERS = re.compile(r"\b(?:do that|do it|go ahead|ship it|that'?s (?:right|it|correct|the rule)|exactly|agreed|correct"
                     r"|keep (?:it|that)|as you (?:said|wrote)|that one|sounds (?:good|right))\b", re.I)
_REJECT = re.compile(r"^(?:no\b|nope|not (?:quite|really|exactly)|wrong|that'?s (?:wrong|only half)|the direction is right but"
                     r"|neither|actually\b)", re.I)
_VERB = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|can|will|must|should|keeps?|stays?|wins?|"
                   r"matches?|uses?|runs?|gets?|goes|comes?|means?|holds?|applies|apply|counts?|\w+(?:s|ed))\b", re.I)
_WORD = re.compile(r"[A-Za-z0-9_'=<>*.@:+/-]+")
# a plain statement with no claim language (the `fact` route) is chatter, never a durable claim, when it is
# an exclamation, greets, reacts or evaluates, speaks to the listener, or tells what happened at some moment
_SPEAKER_LABEL = re.compile(r"^[A-Z][\w'-]{0,30}(?: [A-Z][\w'-]{0,30})?:\s+(?=\S)")  # "Caroline: …" (a transcript line)
_GREETING = re.compile(
    r"^(?:hey|hi|hiya|hello|howdy|yo|good (?:morning|afternoon|evening|night)|bye|goodbye|see you|see ya|take care"
    r"|congrat\w*|welcome|cheers|wow|whoa|aw+|ooh|oh|omg|haha\w*|lol|yay|woo+|phew|ugh|sounds|looks|glad|thanks?"
    r"|thank you|no worries|love (?:it|that|this)|nice|awesome|amazing|cool|great|lovely|sweet|same here|me too)\b", re.I)
_REACTION = re.compile(
    r"\b(?:awesome|amazing|wonderful|lovely|beautiful|gorgeous|fantastic|incredible|inspiring|inspirational|cute"
    r"|sweet|adorable|cool|fun|blast|thrilled|grateful|thankful|blessed|brave|stunning"
    r"|so (?:much|many|good|great|nice|cool|fun|happy|proud|glad|excited|true)|such an? \w+|really (?:cool|nice|great|fun)"
    r"|i'?m|you|your|you're|yours)\b", re.I)
_MOMENT = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|this (?:morning|afternoon|evening|week|weekend|month|year|summer)"
    r"|last (?:night|week|weekend|month|year|summer|time|friday|saturday|sunday)|the other day|recently|just now"
    r"|a (?:few|couple of) (?:days|weeks|months) ago|\w+ (?:days|weeks|months|years) ago)\b", re.I)


_SOCIAL = re.compile(  # social moves, never a rule however they are phrased ("Keep it up!", "Can't wait to see it.")
    r"^(?:keep (?:it|up|going|on)|can'?t wait|take care|take a look at (?:this|that|these|my)|have (?:fun|a (?:good|great|nice|lovely|blast))|stay (?:safe|strong)"
    r"|enjoy (?:it|your|the)|check (?:out )?(?:this|my|the|that|these|those|our) (?:\w+ )?(?:pic|pics|photo|photos"
    r"|picture|pictures|video|crowd|view|piece|creation|painting)|don'?t forget to (?:have fun|enjoy|take care))\b"
    r"|\b(?:can'?t wait|can'?t agree more|can'?t beat (?:it|that)|look(?:ing)? forward to|never forget (?:the|that) (?:day|time|moment))\b", re.I)


def chatter(sentence: str) -> str | None:
    """Why a plain statement (no claim language) is conversation, not a durable fact: 'exclamation'
    ("Pets sure do bring so much joy to us!"), 'small-talk' (a greeting, reaction, evaluation or a
    sentence addressed to the listener: "Sounds fun.", "You're so brave."), 'episode' (what happened at
    some moment: "The parade was yesterday."), or None."""
    said = _SPEAKER_LABEL.sub("", own_words(sentence).strip())
    if "!" in said:
        return "exclamation"
    if _GREETING.match(said) or _REACTION.search(said):
        return "small-talk"
    if _MOMENT.search(said):
        return "episode"
    return None

# confidence by the rule that fired (before repetition and acceptance)
RULE_CONFIDENCE = {
    "user-decision": 0.85, "user-rule": 0.8, "user-imperative": 0.75, "user-preference": 0.75, "user-gotcha": 0.7,
    "answer-to-question": 0.72, "accepted-recap": 0.75, "accepted-statement": 0.72,
    "unaccepted-recap": 0.6,  # an assistant recap no user turn accepted: review only, never standing (issue 33)
    "stated-decision": 0.75, "stated-rule": 0.72, "stated-preference": 0.7, "stated-gotcha": 0.7, "stated-fact": 0.7,
}


RECAP_RESTATES = 0.3  # share of a closing recap's words the agreement it follows already said (`_closes_agreement`)
UNMARKED_ACCEPTED = 0.68  # an accepted assistant statement with no rule language: below the gate, into review
LEANS_ON_ANOTHER = 0.65  # a rule whose subject is another sentence ("this amendment", "that formula form"): review


@dataclass
class Context:
    """What surrounds a sentence. speaker: 'user' | 'assistant' | 'unknown' (a stored memory's text,
    said by whoever stored it); accepted: for an assistant turn, whether the user accepted it (None:
    unknown); recap: the assistant turn is a recap the user did not contradict; opening: the
    sentence is part of the request that opens the session (the task); antecedent: the question
    of the other speaker this turn answers (its last question, if any)."""

    speaker: str = "unknown"
    accepted: bool | None = None
    recap: bool = False
    opening: bool = False
    antecedent: str | None = None
    previous: str | None = None  # the sentence before, in the same turn
    allow_fact: bool = False  # a plain declarative statement may be kept as `fact` (pipeline extraction)
    subject: str | None = None  # the code the chat names so far (`chat_subject`): completes a claim missing its subject
    before: str | None = None  # the last whole sentence of the chat before this one (completes a fragment without code)
    subject_mentions: int = 0  # how often the chat named `subject` so far (twice: what the chat is about)


class ClaimCandidate(TypedDict, total=False):
    """One sentence the LLM claim gate is asked about (session end builds it from a kept claim's
    evidence; the offline rules read it back from the prompt's JSON, so a key may be missing)."""

    id: str  # its index in the batch, as a string
    text: str
    type: str | None
    speaker: str | None
    rule: str | None
    antecedent: str | None


class ClaimVerdict(TypedDict):
    """The claim gate's answer on one candidate: a durable claim or chatter, its type and confidence."""

    id: str
    durable: bool
    type: str
    confidence: float
    reason: str
    rewrite: NotRequired[str]  # the claim as one self-contained sentence naming its subject ('' / absent: as said)


class EvidenceDict(TypedDict):
    """Evidence as stored in a memory's metadata (`Evidence.to_dict`)."""

    rule: str
    speaker: str
    accepted: bool | None
    repetition: int
    confidence: float
    cues: list[str]
    antecedent: str | None
    ruleset: str


@dataclass
class Evidence:
    rule: str  # the extraction rule that fired (rejections are counted per rule)
    speaker: str
    accepted: bool | None
    repetition: int = 1  # how many times the session stated it
    confidence: float = 0.0
    cues: list[str] = field(default_factory=list)
    antecedent: str | None = None
    ruleset: str = RULESET

    def to_dict(self) -> EvidenceDict:
        return cast(EvidenceDict, asdict(self))


@dataclass
class Verdict:
    kept: bool
    text: str  # what is stored: the acknowledgement stripped, the antecedent attached
    type: str | None = None
    confidence: float = 0.0
    reason: str = ""  # why rejected ('question', 'hedge', …), or the rule that kept it
    evidence: Evidence | None = None

    @property
    def needs_review(self) -> bool:
        return self.kept and self.confidence < REVIEW_BELOW


def _reject(text: str, reason: str) -> Verdict:
    return Verdict(False, text, reason=reason)


def strip_acknowledgement(sentence: str) -> str:
    """'Exactly, the key stays …' -> 'the key stays …' (capitalised); '' when nothing follows."""
    rest = _ACK.sub("", sentence.strip(), count=1).lstrip(" ,.;:—–-").rstrip()
    if not rest.strip(" .!"):
        return ""
    return rest[:1].upper() + rest[1:] if rest else ""


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def rejection(sentence: str) -> str | None:
    """Why a sentence is not an asserted statement (question, hedge, speculation, wish), or None."""
    own = own_words(sentence)
    if "?" in own:
        return "question"
    if _WISH.search(own):
        return "wish"
    if _HEDGE.search(own):
        return "hedge"
    if _SPECULATION.search(own) or _HYPOTHETICAL.search(_CLAUSE.split(own.strip(), maxsplit=1)[0]):
        return "speculation"
    return None


def cues(sentence: str) -> list[str]:
    """The keep cues in the sentence's own words."""
    own = _cue_text(sentence)
    found = []
    for name, pattern in (("decision", _DECISION), ("normative", _NORMATIVE), ("preference", _PREFERENCE),
                          ("gotcha", _GOTCHA)):
        match = pattern.search(own)
        if match:
            found.append(f"{name}:{match.group(0).strip().lower()[:30]}")
    imperative = _IMPERATIVE.search(_RULE_LEAD.sub("", own.strip()))  # "From now on never commit …"
    if imperative:
        found.append(f"imperative:{imperative.group(0).strip(' ,;:—–-').lower()}")
    return found


def _type_of(found: list[str]) -> tuple[str, str] | None:
    """(memory type, rule family) from the cues."""
    kinds = {c.split(":", 1)[0] for c in found}
    if "decision" in kinds:
        return "decision", "decision"
    if "preference" in kinds:
        return "preference", "preference"
    if "normative" in kinds:
        return "constraint", "rule"
    if "imperative" in kinds:
        return "constraint", "imperative"
    if "gotcha" in kinds:
        return "gotcha", "gotcha"
    return None


def judge(sentence: str, ctx: Context | None = None) -> Verdict:
    """The claim test for one sentence in its context."""
    ctx = ctx or Context()
    text = " ".join(sentence.split()).strip()
    if ctx.opening:
        return _reject(text, "task")  # the request that opens the session is its task
    why = rejection(text)
    if why:
        return _reject(text, why)
    body = strip_acknowledgement(text)
    body = _LEAD_IN.sub("", body)
    body = body[:1].upper() + body[1:]
    answer = (ctx.speaker == "user" and ctx.antecedent is not None and bool(ctx.antecedent)
              and len(_words(text)) <= 6 and _picks(text, ctx.antecedent))
    if answer and len(_words(body)) < 1:
        body = text.strip(" .!")
    if len(_words(body)) < 2 and not answer:
        return _reject(text, "acknowledgement")
    if _SOCIAL.search(_SPEAKER_LABEL.sub("", own_words(body).strip())):
        return _reject(text, "small-talk")
    if _BUG_REPORT.search(own_words(body)) and not _DECISION.search(own_words(body)):
        return _reject(text, "bug-report")
    if _REQUEST.match(body) and ctx.speaker != "assistant":
        return _reject(text, "request")
    found = cues(body)
    kind = _type_of(found)
    if kind is not None and kind[1] == "imperative" and one_off_request(body, found):
        return _reject(text, "request")  # "Run the ledger-sync tests.": work for now, not a rule
    if _FIRST_PERSON.search(body) and (kind is None or kind[1] not in ("decision", "preference")):
        return _reject(text, "first-person")  # a plan, a state of mind, a suggestion
    short_lived = not_durable(body)
    if short_lived and (kind is None or kind[1] != "preference"):
        return _reject(text, short_lived)  # true for this change or this week: never shown as a standing rule
    if ctx.speaker == "unknown" and reads_as_commit_subject(text):
        return _reject(text, "commit-subject")  # a commit records what was done: found by a query, never a rule
    if (_COMMIT_REF.search(body) or _PAST_START.match(body)) and (kind is None or kind[1] != "decision"):
        return _reject(text, "history-report")  # what a commit did is the commit's own record
    antecedent = None
    command = _RULE_LEAD.sub("", own_words(body).strip())  # "From now on, never …" is an imperative too
    imperative = any(c.startswith("imperative:") for c in found) and bool(_IMPERATIVE.match(command))
    recap = ctx.speaker == "assistant" and (ctx.recap or bool(_RECAP.match(body))) and ctx.accepted is not False
    verbless = not _VERB.search(own_words(body)) and len(_words(body)) < 12 and not imperative and not recap
    fragment = bool(_DEICTIC.match(body) or _ELLIPTICAL.match(body)) or verbless
    if kind is None and answer and not _DEICTIC.match(body):
        kind, fragment = ("constraint", "answer"), True  # "Down." to "… round them up or down?"
    if imperative and _OBJECT_PRONOUN.match(command) and not fragment:
        previous = ctx.previous or ""
        if len(_words(previous)) < 5 or _DEICTIC.match(strip_acknowledgement(previous)) or rejection(previous):
            return _reject(text, "fragment")  # "Leave it at 7." with nothing before it that says what "it" is
        antecedent = previous  # "Cap it at 30." after the sentence that says what "it" is
    if fragment:
        if ctx.antecedent and ctx.speaker == "user" and kind is not None:
            antecedent = ctx.antecedent  # an answer to the other speaker's question: kept with it
        else:
            return _reject(text, "fragment")
    said = own_words(body)
    if kind is None and ctx.speaker == "assistant" and not _FIRST_PERSON.search(body) and said.strip(" .") and (
            recap or ctx.accepted and not _PROCESS.search(said) and not _PAST_REPORT.search(said)):
        kind = ("constraint", "recap")  # a recap / an accepted statement says what was settled, cue words or not
    if kind is None:
        if ctx.allow_fact and ctx.speaker != "assistant" and not _COMMIT_REF.search(body) \
                and not _PAST_REPORT.search(own_words(body)) and len(_words(_SPEAKER_LABEL.sub("", body))) >= 3:
            small = chatter(text)  # the whole sentence: "Wow, looks awesome!" is a reaction before the ack is stripped
            if small:
                return _reject(text, small)
            kind = ("fact", "fact")
        else:
            return _reject(text, "no-claim-language")
    if _PAST_REPORT.search(own_words(body)) and kind[1] not in ("decision",) and \
            not any(c.startswith(("normative:must", "normative:never", "normative:always", "imperative")) for c in found):
        return _reject(text, "history-report")  # what a commit did is the commit's record, not a rule
    memory_type, family = kind
    if ctx.speaker == "assistant":
        if recap:  # only the user makes a rule: a recap nobody accepted stays in review
            rule = "accepted-recap" if ctx.accepted else "unaccepted-recap"
        elif ctx.accepted:
            rule = "accepted-statement"
        else:
            return _reject(text, "unaccepted-assistant")
        if family == "fact":
            return _reject(text, "no-claim-language")
    elif antecedent is not None and antecedent == ctx.antecedent:
        rule = "answer-to-question"
    elif ctx.speaker == "user":
        rule = f"user-{family}" if family != "fact" else "stated-fact"
    else:
        rule = f"stated-{'rule' if family == 'imperative' else family}"
    confidence = RULE_CONFIDENCE[rule]
    if rule == "accepted-statement" and not found:
        confidence = UNMARKED_ACCEPTED  # accepted, but no rule language of its own: a reviewer decides
    elif ctx.speaker == "assistant" and ctx.accepted:
        confidence += 0.05  # explicitly accepted, not just uncontradicted
    joiner = "answering" if antecedent == ctx.antecedent else "after"
    stored = body if antecedent is None else f"{body} ({joiner}: {antecedent})"
    if _APPROVAL.match(body):
        return _reject(text, "acknowledgement")  # "Ship it.": an approval of something said before, no rule
    if memory_type != "fact":  # whole claims: the text names its subject, or the claim stays in its episode
        missing = lacks_subject(body) or bool(_PARTLY.match(text))
        if (missing or _answer_lead(body)) and antecedent is None and ctx.speaker == "user" and ctx.antecedent \
                and _topic_of_question(ctx.antecedent):
            antecedent = ctx.antecedent  # "Only the leading-zero digit strings." answering "Should I write every field …?"
            stored = f"{body} (answering: {antecedent})"
        elif missing and antecedent is None and ctx.before and (not ctx.subject or _POINTS_BACK.search(own_words(body))):
            antecedent = ctx.before  # "If both have the same number of filled fields, keep ours." after the rule it refines
            stored = f"{body} (after: {antecedent})"  # "Don't touch the rest." names the code and what the rest is of
        # a fragment takes the chat's code; a whole rule naming no code only when the chat keeps naming it (twice or
        # more), so a rule said in passing ("Always run migrations in a transaction.") is not tied to the task's code
        if ctx.subject and (missing or ctx.subject_mentions >= 2) and not _names_own_code(body) \
                and scope_of(body).applies != "project":
            stored = f"`{ctx.subject}`: {stored}"  # a rule of the chat's code names it: "`merge_tags`: Keep one …"
            found = [*found, f"completed:{ctx.subject}"]
        elif missing and unresolved_fragment(stored):
            return _reject(text, "fragment")
        completed = any(c.startswith("completed:") for c in found)  # the chat's code says what the question is about
        leaning = leans_on_another(body, antecedent if antecedent == ctx.antecedent and not completed else None)
        if leaning:  # what it is about is said in another sentence: a reviewer reads it in its chat
            confidence = min(confidence, LEANS_ON_ANOTHER)
            found = [*found, f"leans-on:{leaning}"]
    evidence = Evidence(rule=rule, speaker=ctx.speaker, accepted=ctx.accepted, confidence=round(confidence, 3),
                        cues=found, antecedent=antecedent)
    return Verdict(True, stored, memory_type, round(confidence, 3), rule, evidence)


_QUOTED_VALUE = re.compile(  # 'DbName', "00042": a value the rule gives, not code it names ('merge_tags' stays code)
    r"""(['"])[^'"\s_.()]{1,60}\1""")


def _names_own_code(body: str) -> bool:
    """Does a claim name code of its own (then it keeps its own subject)? Quoted values ('DbName') and word
    pairs ("primary/replica", "in/out") are not code."""
    return any("/" not in name or re.search(r"\.\w{1,4}$", name) for name in code_names(_QUOTED_VALUE.sub(" ", body)))


def names_own_code(text: str) -> bool:
    """Does a text name code of its own (`code_names`, less quoted values and word pairs)?"""
    return _names_own_code(text)


def _answer_lead(body: str) -> bool:
    """Does the claim open with a bare answer before its reason ("Tenant, seq, and the reason only - payloads can
    carry PII …")? Its first piece names no subject of its own: it says what, the question it answers says of what."""
    chunks = [c for c in re.split(r",\s*|\s+[-—–]\s+|;\s*|:\s+", own_words(body).strip()) if c.strip()]
    return len(chunks) > 1 and len(_words(chunks[0])) <= 4 and not _clause(chunks[0]) \
        and not code_names(chunks[0]) and not _PROJECT_CUE.search(chunks[0])


_THIS_CHANGE = re.compile(  # "The only thing this amendment changes is the scope: …": which amendment, of what?
    r"\b(?:this|that|these|those)\s+(?:amendments?|changes?|fix(?:es)?|approach(?:es)?|proposals?|versions?|patch(?:es)?"
    r"|options?|idea|plan|wording|refactor|rewrite|tweak|edit)\b", re.I)
_THAT_THING = re.compile(  # a question about "that formula form", "those entries": its subject is an earlier sentence
    r"\b(?:that|those|these)\s+(?!(?:is|was|are|were|the|a|an|it|its|we|you|i|they|he|she|our|your|their|way|much|many"
    r"|far|long|often)\b)[a-z][\w-]*", re.I)


def leans_on_another(body: str, question: str | None = None) -> str | None:
    """What a rule leans on when its subject is another sentence, or None: a deictic change ("The only thing this
    amendment changes is the scope: …", "that fix") in its own words, or — for an answer kept with the question it
    answers — a deictic thing in that question ("Only the leading-zero digit strings." answering "Should I write
    every field in that formula form?"). Such a rule is not shown unasked as a standing rule (`LEANS_ON_ANOTHER`)."""
    said = own_words(body)
    found = _THIS_CHANGE.search(said)
    if found:
        return " ".join(found.group(0).lower().split())
    if question:
        found = _THAT_THING.search(own_words(question))
        if found and not code_names(question):
            return " ".join(found.group(0).lower().split())
    return None


_PROPOSAL = re.compile(r"\b(?:want me to|should (?:i|we)|shall (?:i|we)|do we need|keep)\b", re.I)


def _picks(answer: str, question: str) -> bool:
    """A short answer that picks one option of an either-or question (shares a content word with
    it), or turns down a proposal ("Never." / "No, 30 seconds." to "… want me to allow that?")."""
    if re.match(r"^(?:never|no)\b", answer.strip(), re.I) and _PROPOSAL.search(question):
        return True
    if _NUMBER_ANSWER.match(answer.strip()) and _ASKS_VALUE.search(question):
        return True  # "Seven." to "What did your measurement land on for the reset time?"
    if not re.search(r"\bor\b", question, re.I):
        return False
    said = {w.lower().strip(".,;:!*") for w in _words(answer)} - _ANSWER_STOP
    asked = {w.lower().strip(".,;:!?*") for w in _words(question)}
    if said & asked:
        return True
    # "Silently fine." to "… hard error, warning, or ignore?": a list of options, answered in other words
    options = re.search(r"(?:[\w-]+(?: [\w-]+)?,\s+){1,}[\w-]+(?: [\w-]+)?,?\s+or\s+[\w-]+", question)
    return bool(options) and len(said) <= 3 and not _ACK.match(answer.strip())


_NUMBER_ANSWER = re.compile(
    r"^(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty"
    r"|sixty|hundred)(?:\s+[a-z%]+)?[.!]?$", re.I)
_ASKS_VALUE = re.compile(r"\b(?:how (?:many|much|long|often|big|large)|what (?:value|number|limit|size|figure|timeout)"
                         r"|what did .{0,60}\b(?:land|come|measure)|which (?:value|number))\b", re.I)
_ANSWER_STOP = frozenset("a an the it is are yes no not or and to of so just only i we you that this mostly mainly".split())


def reinforce(verdict: Verdict, repetition: int) -> Verdict:
    """A claim stated `repetition` times in one session: +0.05 per restatement (at most +0.1)."""
    if not verdict.kept or verdict.evidence is None or repetition <= 1:
        return verdict
    ceiling = LEANS_ON_ANOTHER if _leans(verdict.evidence.cues) else 0.95  # said twice, it still leans on another
    verdict.confidence = round(min(ceiling, verdict.confidence + 0.05 * min(2, repetition - 1)), 3)
    verdict.evidence.repetition = repetition
    verdict.evidence.confidence = verdict.confidence
    return verdict


def accepted_by(reply: str | None, asks: bool = False) -> bool | None:
    """Does the user's next turn accept the assistant's turn? True / False (contradicts) / None.
    Acceptance is explicit agreement ("Yes, exactly, do that.", "Right.", "LGTM"); a bare "OK" / "Sure"
    followed by another request acknowledges receipt and accepts nothing (None), and so does an unrelated
    next request. `asks`: the assistant's turn ends with a question, so a leading "no" answers it (None)."""
    if reply is None:
        return None
    head = reply.strip()
    if _REJECT.match(head):
        return None if asks else False
    if not _ACCEPT.match(head) or len(_words(head)) > 25:  # a short yes, not the start of a discussion
        return None
    if _WEAK_ACCEPT.match(head):
        rest = strip_acknowledgement(head)
        if rest and not _REFERS.search(rest) and (asks_for_work(rest) or len(_words(rest)) > 3):
            return None  # "OK. Now add the login page.": receipt, then an unrelated request
    return True


def user_made(evidence: EvidenceDict | dict[str, object]) -> bool:
    """Only the user makes a rule (issue 33): a claim the user said (or a stored text whose speaker is not
    told), or an assistant statement a user turn accepted explicitly (`accepted` True). An assistant recap
    nobody accepted — "Noted: from now on we always disable TLS verification." then an unrelated request —
    is not."""
    return evidence.get("speaker") != "assistant" or evidence.get("accepted") is True


def gated_confidence(evidence: EvidenceDict | dict[str, object], confidence: float) -> float:
    """A claim's confidence after the LLM claim gate scored it: the gate may lower or raise it, but never
    lifts a claim no user made (`user_made`) out of review."""
    if _leans(cast(list[str], evidence.get("cues") or [])):
        confidence = min(confidence, LEANS_ON_ANOTHER)  # what it is about is still in another sentence
    return confidence if user_made(evidence) else min(confidence, RULE_CONFIDENCE["unaccepted-recap"])


def _leans(cues: list[str]) -> bool:
    return any(c.startswith("leans-on:") for c in cues)


def accepts_rewrite(original: str, rewrite: str) -> bool:
    """May the claim gate's rewrite replace a stored claim's text (issue 31: the original is kept as
    evidence)? Only a whole sentence (`lacks_subject` false) that keeps every piece of code the original
    names and says no more than about twice as much."""
    rewrite = " ".join((rewrite or "").split())
    if not rewrite or len(rewrite) > max(2 * len(original), 200) or lacks_subject(rewrite):
        return False
    lowered = rewrite.lower()
    return all(name.lower() in lowered for name in code_names(original))


def is_recap(text: str) -> bool:
    """An assistant turn that restates what was settled ("Final: …", "Understood: …")."""
    return bool(_RECAP.match(text.strip()))


def last_question(text: str) -> str | None:
    """The last question in a turn (what a short answer in the next turn leans on)."""
    found = [q.strip() for q in re.findall(r"(?:[^.!?\n]|\.(?=\S))*\?", text) if len(q.split()) >= 3]
    if not found:
        return None
    last = " ".join(found[-1].split())
    if len(found) > 1 and len(last.split()) <= 6 and text.rstrip().endswith(found[-1]) \
            and text.rstrip()[:-len(found[-1])].rstrip().endswith(found[-2]):
        last = " ".join(f"{found[-2]} {found[-1]}".split())  # "… what should the log line carry? The full payload?"
    return last[:300]


def rescore(content: str, memory_type: str) -> Verdict:
    """The claim test for a memory written by older rules (no turn context: speaker unknown)."""
    verdict = judge(content, Context(speaker="unknown"))
    if verdict.kept and verdict.evidence is not None and memory_type in RULE_TYPES and verdict.type != memory_type:
        verdict.evidence.cues.append(f"type-was:{memory_type}")
    return verdict


def _similar(a: str, b: str) -> bool:
    ta = {w.lower() for w in _words(a) if len(w) > 3}
    tb = {w.lower() for w in _words(b) if len(w) > 3}
    return bool(ta and tb) and len(ta & tb) / len(ta | tb) >= 0.5


def _content(text: str) -> set[str]:
    return {w.lower().strip(".,;:") for w in _words(text) if len(w) > 3}


def _closes_agreement(recap: str, before: list[tuple[int, str, str]]) -> bool:
    """Does an assistant recap that no later user turn answers restate an agreement the user just made?
    Yes when the turn before it is the user's explicit acceptance of the assistant's proposal ("Exactly. And
    on a tie keep ours.") and the recap's words are mostly the chat's own — the user's turns and the proposal
    they accepted (RECAP_RESTATES). A recap that follows no acceptance ("Read @notes/ops.md" → "Noted: from
    now on we always disable TLS verification.") or brings in what nobody agreed stays unaccepted."""
    if len(before) < 2 or before[-1][1] != "user" or before[-2][1] != "assistant":
        return False
    proposal, reply = before[-2][2], before[-1][2]
    if accepted_by(reply, proposal.rstrip().endswith("?")) is not True:
        return False
    agreed = _content(proposal).union(*(_content(text) for _, role, text in before if role == "user"))
    said = _content(recap)
    return bool(said) and len(said & agreed) / len(said) >= RECAP_RESTATES


def judge_turns(turns: list[tuple[str, str]], split: Callable[[str], list[str]],
                names: frozenset[str] | set[str] | tuple[str, ...] = ()) -> list[tuple[int, str, Verdict]]:
    """Every sentence of a conversation judged in its context: [(turn index, sentence, verdict)].
    `turns`: (role, text) with role 'user' | 'assistant' (others are skipped); `split`: the
    sentence splitter. The first user turn is the session's task when it reads as one (`reads_as_task`:
    a request, bug report or question), except its sentences that state a standing rule; an opening that
    only states rules is judged like any other turn. An assistant turn counts as
    accepted by the user's next turn; a kept claim restated later is reinforced (repetition). A claim
    whose subject is missing from its sentence (`lacks_subject`) is completed with the code the chat
    named before it (`chat_subject`; `names`: the code graph's known names) or, failing that, kept only
    with a question or sentence that says what it is about."""
    spoken = [(i, role, text or "") for i, (role, text) in enumerate(turns) if role in ("user", "assistant")]
    first_user = next((i for i, role, _ in spoken if role == "user"), None)
    task_turn = first_user is not None and reads_as_task(dict((i, t) for i, _, t in spoken)[first_user], split)
    out: list[tuple[int, str, Verdict]] = []
    said: list[str] = []  # every sentence before the one judged: what the chat has named so far
    before: str | None = None  # the last whole sentence so far
    for position, (i, role, text) in enumerate(spoken):
        previous = spoken[position - 1] if position else None
        following = spoken[position + 1:]
        reply = next((t for _, r, t in following if r == "user"), None) if role == "assistant" else None
        next_is_user = bool(following) and following[0][1] == "user"
        asks = text.rstrip().endswith("?")
        accepted = accepted_by(reply if next_is_user else None, asks) if role == "assistant" else None
        if accepted is None and role == "assistant" and is_recap(text):
            accepted = _closes_agreement(text, spoken[:position]) or None
        ctx = Context(
            speaker=role,
            accepted=accepted,
            recap=role == "assistant" and is_recap(text),  # a turn that also asks: only its first sentence
            antecedent=last_question(previous[2]) if previous and previous[1] != role else None,
        )
        for sentence in split(text):
            # the request that opens the session is its task; a rule said in it ("From now on …") is kept apart
            ctx.opening = i == first_user and task_turn and not states_standing_rule(sentence)
            (ctx.subject, ctx.subject_mentions), ctx.before = _chat_subject(said, names), before
            out.append((i, sentence, judge(sentence, ctx)))
            said.append(sentence)
            if "?" not in sentence and len(_words(sentence)) >= 5 and not lacks_subject(sentence) \
                    and not rejection(sentence) and "```" not in sentence \
                    and out[-1][2].reason not in ("task", "request", "acknowledgement", "small-talk"):
                before = " ".join(sentence.split())[:300]
            ctx.antecedent = None  # only the turn's first sentence answers the question before it
            ctx.recap = ctx.recap and "?" not in text
            ctx.previous = " ".join(sentence.split())[:300]
    kept = [v for _, _, v in out if v.kept]
    for verdict in kept:
        reinforce(verdict, sum(_similar(verdict.text, other.text) for other in kept))
    return out


# -- where a kept claim applies (issue 31) ---------------------------------------------------------------
# A rule about one function is not a standing rule of the project: it belongs where that function comes up.
# `scope_of` tells a kept claim's scope from its own words, the chat around it and the code graph's names,
# offline and without I/O: 'project' (a convention that holds everywhere: commit style, the branch rule,
# the test command, the release train, a language / tool / library choice for the whole repository),
# 'area' with the area a user would name (a file, symbol, module, command or topic), or None when it
# cannot be told (such a rule never opens a session).
SCOPE_RULESET = "scope-v1"
_PROJECT_CUE = re.compile(
    r"\b(?:commit(?:s|ted|ting)?(?: messages?| subjects?)?|pull requests?|PRs?|merge requests?|code review|reviewers?"
    r"|branch(?:es)?|(?:to|into|on|onto|from|off) (?:main|master|trunk)|push(?:es|ed|ing)?|force-push\w*|rebase\w*|squash\w*|cherry-pick\w*"
    r"|releases?|release train|release notes|changelog|version(?:s|ing)?|semver|tags? the release|hotfix(?:es)?"
    r"|ci (?:config|pipeline|workflow|job)s?|pre-commit|linters?|lint(?:ing)?|formatter|black|ruff|flake8|mypy|isort|pylint|prettier|eslint"
    r"|type hints?|type annotations?|docstrings?|(?:relative|absolute|star|wildcard|circular|top-level) imports?"
    r"|import (?:order|style|statements?)|pep ?8|style guide|naming conventions?|license|copyright"
    r"|dependenc(?:y|ies)|third-party|vendored|requirements(?:\.txt)?|pyproject|lockfile|python (?:\d|version)"
    r"|the (?:whole |entire )?(?:repo|repository|codebase|project|code base)"
    r"|every (?:public |private |new |exported )?(?:module|file|function|method|class|package|change|pr|endpoint)"
    r"|all (?:modules|files|functions|packages|code|changes|prs|new code)"
    r"|(?:across|throughout) (?:the )?(?:entire |whole )?(?:repo|repository|codebase|code base|project|library|package|modules)"
    r"|python_requires|supported (?:python )?versions|(?:minimum|oldest|newest) python|python 3-only"
    r"|in this (?:repo|repository|project|codebase|team)|(?:the|our) test (?:command|suite)|before (?:pushing|merging|committing|you push|you merge|you commit|a release)"
    r"|on-call|staging(?: runs?)?)\b"
    r"|^(?:(?:always|never|don'?t|do not)\s+)?deploy\b", re.I)
_CONVENTION = re.compile(  # said as the project's convention: "atlas convention: …", "House rule: …", "Our code style: …"
    r"^(?:[\w.-]+\s+)?(?:conventions?|house rules?|team rules?|project rules?|repo rules?|code style|coding style"
    r"|style guide|standards?)(?:\s+(?:from now on|going forward|for now on))?\s*[:—–-]\s"
    r"|\b(?:our|the team'?s|the project'?s|the repo'?s|house|project-wide|repo-wide) (?:conventions?|code style|coding style|standards?)\b"
    r"|\bby convention\b", re.I)
_TOOL_CHOICE = re.compile(  # "Use httpx.", "Don't use requests.", "We use poetry, not pip." (a library or tool for the repo)
    r"^(?:(?:we|always|never|don'?t|do not|please)\s+)*(?:use|prefer|avoid|pin)\s+([a-z][a-z0-9_.-]*)\s*(?:$|[.,;:]|\s+(?:not|over|instead|for|everywhere))",
    re.I)
_CODE_SPAN = re.compile(r"`([^`\n]{1,80})`")
_IDENTIFIER = re.compile(  # how code is named in prose: snake_case, CamelCase, UPPER_SNAKE, dotted.names, calls, paths
    r"(?<![\w@.*/-])(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?|[A-Za-z_]\w*\(\)?"
    r"|[A-Za-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+\d+[a-z]\w*|_[a-z]\w+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z]+[A-Z]\w*"
    r"|(?:[\w.-]+/)+[\w.-]+)(?![\w@-])")
_NOT_AREA = re.compile(r"^(?:e\.g|i\.e|etc|vs|a\.m|p\.m)\b|^(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{4,40}$|^[0-9a-f]{7,40}$|^[\w.-]+\.(?:com|org|net|io|example|local|internal)$|^\d", re.I)
_SUBJECT = re.compile(  # the noun phrase a declarative rule is about, up to its verb
    r"^(?:(?:the|a|an|any|every|each|all|our|their|its)\s+)?((?:[A-Za-z][\w'+-]*\s+){0,3}?[A-Za-z][\w+-]*)"
    r"(?:\s+[^\s\w]\S*)?\s+(?:is|are|was|were|must|may|can|cannot|can't|should|shall|has|have|stays?|never|always|only|matches|match"
    r"|runs?|gets?|goes|wins?|applies|counts?|keys?|takes?|returns?|speaks?|scopes?|suppress(?:es)?|treats?|caps?)\b", re.I)
_NOT_SUBJECT = frozenset(
    "we i you they it this that these those there he she everything something anything nothing everyone someone"
    " one which what who here all both either neither none each every any some such same other others rest".split())


_PROJECT_FILE = re.compile(  # what configures the whole repository
    r"^(?:setup\.(?:py|cfg)|pyproject(?:\.toml)?|tox(?:\.ini)?|requirements[\w-]*\.txt|Makefile|\.github\S*|\.pre-commit\S*"
    r"|CHANGELOG(?:\.\w+)?|CONTRIBUTING(?:\.\w+)?|python_requires|\.gitignore|\.editorconfig|noxfile\.py|package\.json)$", re.I)


@dataclass(frozen=True)
class Scope:
    """Where a kept claim applies: `applies` 'project' | 'area' | None (cannot be told), the `area` a user
    would name for an area rule (a symbol, file, module, command or topic), and which cue decided (`reason`)."""

    applies: str | None
    area: str | None = None
    reason: str = ""


def code_names(text: str, names: frozenset[str] | set[str] | tuple[str, ...] = ()) -> list[str]:
    """The code a text names, in order of appearance: the code graph's known `names` first (matched whole,
    case-sensitively), then `code spans`, identifiers (snake_case, CamelCase, UPPER_SNAKE, dotted.names,
    calls, paths). Host names and abbreviations ("e.g.") are not code."""
    text = text or ""
    found: list[tuple[int, str]] = []
    for name in names:
        if len(name) >= 3:
            match = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text)
            if match:
                found.append((match.start() - 100_000, name))  # known names rank before guessed ones
    for match in _CODE_SPAN.finditer(text):
        span = match.group(1).strip().removesuffix("()")
        if re.fullmatch(r"[A-Za-z_][\w./-]*", span) and not _NOT_AREA.search(span) and not span.isdigit():
            found.append((match.start(), span))
    for match in _IDENTIFIER.finditer(_CODE_SPAN.sub(" ", text)):
        token = match.group(0).removesuffix("()").rstrip(".(")
        if _NOT_AREA.search(token) or len(token) < 3:
            continue
        found.append((match.start(), token))
    return list(dict.fromkeys(name for _, name in sorted(found)))


def _topic(text: str) -> str | None:
    """The noun phrase a declarative sentence is about ("Tombstone matching is case-insensitive" ->
    'tombstone matching'), or None for an imperative, a pronoun subject or no clear subject."""
    body = _RULE_LEAD.sub("", strip_acknowledgement(_LEAD_IN.sub("", own_words(text).strip()))).strip()
    match = _SUBJECT.match(body)
    if not match:
        return None
    words = match.group(1).split()
    if not words or words[0].lower() in _NOT_SUBJECT or _IMPERATIVE.match(body) or _DEICTIC.match(body):
        return None
    if any(w.lower() in ("we", "i", "you") for w in words) or all(w.lower() in _TOPIC_STOP for w in words):
        return None  # "The only thing … is …": an article before an adverb is not a topic
    return " ".join(words).lower()


def scope_of(sentence: str, question: str | None = None, previous: str | None = None,
             names: frozenset[str] | set[str] | tuple[str, ...] = ()) -> Scope:
    """Where a kept claim applies (issue 31): Scope('project') for a convention that holds everywhere
    (commit style, "never push to main", the test command, the release train, a tool / library choice for
    the repository), Scope('area', area) for a rule that names or is about a file, symbol, module, command
    or topic ("`parse_quantity` suffixes are case-insensitive" -> 'parse_quantity'), Scope(None) when it
    cannot be told. `question`: the other speaker's question the claim answers; `previous`: the sentence
    before it in the chat; `names`: the code graph's known names (symbols, files) when there is one.
    Pure and offline: the caller stores `applies` / `area` (memories.applies / memories.area)."""
    own = own_words(sentence.replace("`", ""))  # code spans read as words here: `python_requires`, `tox -e docs`
    named = code_names(sentence, names)
    known = [n for n in named if n in names]
    project = _PROJECT_CUE.search(own)
    tool = _TOOL_CHOICE.match(_RULE_LEAD.sub("", own.strip()))
    convention = _CONVENTION.search(own)
    if convention:
        return Scope("project", None, f"convention:{convention.group(0).strip(' :—–-').lower()[:30]}")
    if known:
        return Scope("area", known[0], "known-name")
    if named and any(_PROJECT_FILE.search(n) for n in named):
        return Scope("project", None, f"project-file:{named[0]}")  # setup.cfg, tox.ini, python_requires, …
    if project and not named:
        return Scope("project", None, f"project:{project.group(0).lower()}")
    if tool and not named and tool.group(1).lower() not in _NOT_SUBJECT:
        return Scope("project", None, f"tool:{tool.group(1).lower()}")
    if named:
        if project and re.search(r"\b(?:every|all|across|throughout)\b", own, re.I):
            return Scope("project", None, f"project:{project.group(0).lower()}")  # "use `pytest -x` in every PR"
        return Scope("area", named[0], "names-code")
    topic = _topic(sentence)
    for context in (question, previous):  # a claim that leans on its chat is about what the chat names
        near = code_names(context or "", names)
        if near:
            return Scope("area", near[0], "context-names-code")
    if topic:
        return Scope("area", topic, "topic")
    context = question or previous
    if context and lacks_subject(sentence):  # "Everything else in 4xx is permanent. (after: There are exactly two 4xx …)"
        return Scope("area", _topic(context) or _verb_topic(context), "leans-on-context")
    if lacks_subject(sentence):
        return Scope(None, None, "untold")  # "Ship it.", "Don't touch the rest.": about something said elsewhere
    return Scope("area", _verb_topic(sentence), "not-project")  # a rule with no project cue is about one thing


def _verb_topic(sentence: str) -> str | None:
    """What an imperative acts on, as a topic ("Retry any 5xx plus exactly {429, 408}" -> 'retry 5xx'), or None."""
    body = _RULE_LEAD.sub("", _LEAD_LABEL.sub("", strip_acknowledgement(own_words(sentence)) or "", count=1)).strip()
    if not _IMPERATIVE.match(body):
        return None
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9][\w-]*", body) if w.lower() not in _TOPIC_STOP][:2]
    return " ".join(words) or None


_TOPIC_STOP = frozenset("please always never don't do not just then the a an any all every each its their our this that".split())


# -- whole claims (issue 31): a kept claim names its subject, or it is not kept as a rule ----------------
# "Case-INSENSITIVE, always.", "K stays valid for memory.", "Only those three symbols; leave the rest …":
# read alone at the start of another task they say nothing or mislead. A claim whose subject is missing
# from its sentence is completed from its chat (the code the chat names, the question it answers, the
# whole sentence before it) or it stays in its episode.
_FINITE = re.compile(  # a finite verb or a modal: a clause that says something of its subject
    r"\b(?:is|isn't|are|aren't|was|were|be|been|being|has|have|had|does|do|did|doesn't|don't|didn't|can|can't|cannot"
    r"|could|will|won't|would|shall|should|must|may|might|need|needs|means|meant|stays?|keeps?|wins?|goes|gets?|runs?"
    r"|holds?|applies|counts?|matches|match|takes?|returns?|raises?|uses?|speaks?|scopes?|suppress(?:es)?|treats?"
    r"|caps?|covers?|arrives?|advances?|ends?|starts?|changes?|becomes?|comes?|sits?|lives?|feeds?|diffs?|governs?"
    r"|preserves?|handles?|appears?|jumps?|kills?|names?|merges?|breaks?|reads?|writes?|sends?|calls?|keys|wraps?"
    r"|belongs?|depends?|imports?|exports?|rejects?|accepts?|allows?|lets?|makes?|leaves?|fails?|passes?|owns?"
    r"|round|sort|fall|hit|pay|ship|fire|trigger|expire|reset|wait|fit|flow|live|go|come|carry|win|stay|survive"
    r"|apply|equal|mirror|override|outrank|precede|follow|resolve|mean|count|cover|key|scope|speak|appear|remain|remains)\b"
    r"|\b\w{3,}(?:ed|es)\b", re.I)
_LEAD_LABEL = re.compile(  # a label before the claim: "Final:", "Heads-up:", "Recap of bucket(…):", "Warning:"
    r"^(?:(?:final|settled|recap|decision|summary|to summari[sz]e|amended rule|amending|to be explicit|heads[- ]up|warning"
    r"|careful|note|important|caveat|gotcha|rule|policy|update|correction|clarification|again|reminder)\b[^:]{0,80}:\s+"
    r"|(?:understood|got it|noted|confirmed|so)\s*[:—–,-]\s*)", re.I)
_GENERIC_OBJECT = re.compile(  # an imperative about something named elsewhere: "Ship it.", "Don't touch the rest."
    r"^(?:(?:please|always|never|don'?t|do not|just|then|and)\s+)*(?:ship|touch|keep|leave|do|use|apply|make|cap|treat"
    r"|change|handle|drop|skip|move|fix|merge|return|count|take|log|put|send|ignore|strip|normalize|lowercase|sort|round"
    r"|clean|wrap|set|pin|limit|clamp|match|check|test|run|quote|encode|write)(?:\s+up|\s+out|\s+away)?\s+"
    r"(?:it|them|that|this|those|these|the rest|the whole thing|everything else|the other ones?|both|either|one)\b", re.I)
_LEANS = re.compile(  # a word that points at another sentence: "that tenant's jobs", "only those three symbols", "may it"
    r"\b(?:those|these)\s+(?:\w+\s+){0,2}\w+|\bthat\s+\w+'s\b|\b(?:may|does|should|can|will|is|must)\s+it\b"
    r"|\bthe rest\b|\bthe same (?:one|thing|way)\b|\bthe (?:former|latter)\b|\bas-is\b"
    r"|^(?:a|an|the)\s+(?:\w+\s+)?ones?\b|^(?:if|when|once|unless)\s+(?:both|either|neither|they|it)\b"
    r"|\b(?:keep|take|use)\s+(?:ours|theirs|mine|yours)\b"
    r"|^(?:everything|anything|all) else\b", re.I)
_PARTLY = re.compile(r"^(?:almost|not quite|close|nearly)\b", re.I)  # "Almost — …" amends the turn before: it leans on it
_POINTS_BACK = re.compile(  # a claim about the rest of something said before: completed with that sentence too
    r"\bthe rest\b|\b(?:everything|anything|all) else\b|\b(?:too|as well)(?=\s*(?:[.,;!—–-]|or\b|$))", re.I)
_GENERIC_SUBJECT = re.compile(  # one generic word as the subject: an activity or an aspect of something named elsewhere
    r"^(?:the\s+)?(?:[a-z]+ing|order|output|casing|precedence)\s+(?:is|are|must|stays?|has to|only|never|always|goes|wins)\b", re.I)
_WHERE_VERB = re.compile(  # an imperative whose object says what, not where: "Return minutes as a float."
    r"^(?:(?:please|always|never|don'?t|do not|just|then)\s+)*(?:return|keep|count|leave|take|treat)\b", re.I)
_ADVERBIAL = re.compile(r"^(?:after|before|when|whenever|if|unless|once|for|in|on|with|since|until|as of|per|by default"
                        r"|otherwise|then|still|also|at|during|within|without|for now|from now on|going forward)\b", re.I)
_SHORT_SUBJECT = re.compile(r"^[A-Z]{1,2}\s+(?:stays?|is|are|must|means|keeps?|counts?|remains?|goes|gets?)\b")
_APPROVAL = re.compile(r"^(?:ship it|do it|go ahead|go for it|lgtm|sounds good|let'?s do (?:it|that)|do that|make it so)"
                       r"(?:\s+(?:then|now|already))?[.!]*$", re.I)


def lacks_subject(sentence: str) -> bool:
    """Is the claim's subject missing from its own sentence (so it means nothing read alone)? A
    pronoun or deictic start ("It stays valid …"), a first clause without a verb ("Case-INSENSITIVE,
    always.", "Deterministic: percent before fixed.", "Only the leading-zero digit strings."), an
    imperative on a pronoun or a rest ("Ship it.", "Don't touch the rest."), a word that points at another
    sentence ("only those three symbols", "that tenant's jobs … may it run"), a one-letter subject ("K stays
    valid for memory."). A sentence that names code (`code_names`) is never missing its subject."""
    own = " ".join(own_words(_CODE.sub(" CODE ", sentence)).split())
    body = _LEAD_LABEL.sub("", strip_acknowledgement(own) or own, count=1).strip()
    body = _RULE_LEAD.sub("", body).strip()
    if code_names(sentence):
        return False
    if not body or _DEICTIC.match(body) or _ELLIPTICAL.match(body) or _SHORT_SUBJECT.match(body):
        return True
    if _GENERIC_OBJECT.match(body) or _LEANS.search(body):
        return True
    if _WHERE_VERB.match(body) and not _PROJECT_CUE.search(body):
        return True
    if _GENERIC_SUBJECT.match(body) and not _PROJECT_CUE.search(body):
        return True  # "Matching is case-insensitive, same as the dedupe": matching of what, where?
    chunks = [c for c in re.split(r",\s*|\s+[-—–]\s+|;\s*|:\s+|\s+\(", body) if c.strip()]
    dropped = False
    while len(chunks) > 1 and _ADVERBIAL.match(chunks[0]):
        chunks, dropped = chunks[1:], True  # "After the takeover incident, security decided …": the clause follows
    first = chunks[0]
    if _QUANTITY.match(first.strip()):
        return True  # "Four attempts total, and cap the backoff at 60 seconds.": four attempts of what?
    if dropped and _DEICTIC.match(first):
        return True  # "If a higher-precedence source asserted the tag, it stays": which tags, where?
    if _IMPERATIVE.match(first) and re.fullmatch(r"(?:(?:always|never|don'?t|do not|just)\s+)?[a-z]+", first.strip(), re.I) \
            and len(chunks) > 1:
        return True  # "Never lowercase — the provider treats casing as significant": lowercase what?
    if _clause(first):
        return False
    for chunk in chunks[1:4]:
        rest = strip_acknowledgement(chunk)
        if _PREDICATE.match(chunk.strip()) and len(_words(chunk)) >= 3:
            return False  # "Corp accounts - user ids ending @corp.example - are always in …": subject, aside, predicate
        # a label or aside before a whole clause ("The natural fix: on a collision keep …", "Almost — the upstream …")
        if rest and len(_words(rest)) >= 4 and _clause(rest) and not _DEICTIC.match(rest) and not _LEANS.search(rest):
            return False
    return True


_QUANTITY = re.compile(
    r"^(?:exactly\s+)?(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|sixty|hundred)"
    r"(?:\s+[a-z]+)?(?:\s+(?:total|max|maximum|tops|each|at most))?[.!]?$", re.I)
_PREDICATE = re.compile(r"^(?:is|are|was|were|has|have|had|must|may|can|cannot|should|shall|will|stays?|never|always"
                        r"|only)\b(?!\s+(?:it|this|that|they)\b)", re.I)


def _clause(chunk: str) -> bool:
    """Does this piece of a sentence say something of a subject of its own (a verb, an imperative, a
    personal subject, or too long to be a label)? "Case-INSENSITIVE", "Percent first", "Staged" do not."""
    if len(_words(chunk)) == 1 and not _IMPERATIVE.match(chunk):
        return False  # "Staged - shadow mode first …", "Deterministic: …"
    if re.match(r"^(?:we|i|you|they|everyone|nobody|no one|the team)\b", chunk, re.I) or len(_words(chunk)) > 5:
        return True  # a clause with its own subject, or too long to be a label ("we always disable …")
    return bool(_FINITE.search(chunk) or _IMPERATIVE.match(chunk) or _PROJECT_CUE.search(chunk))


_COMPLETION = re.compile(r"^(?P<subject>[^\s:]{3,80}): (?P<body>.+?)(?: \((?P<joiner>answering|after): (?P<context>.+)\))?$", re.S)
_CONTEXT = re.compile(r"^(?P<body>.+?) \((?P<joiner>answering|after): (?P<context>.+)\)$", re.S)


def unresolved_fragment(content: str, names: frozenset[str] | set[str] | tuple[str, ...] = ()) -> bool:
    """Is a stored claim a fragment nothing completes (issue 31, for the migration of existing stores)?
    True for "Case-INSENSITIVE, always." or "Ship it. (after: Right. usd and pct, exactly.)"; False for a
    whole sentence, for a fragment completed with the code its chat names ("parse_quantity: Case-INSENSITIVE,
    always.") or with the question it answers / a whole sentence before it ("Down. (answering: Does it round
    values ending in .005 up or down?)" is whole when the question names what it is about)."""
    text = " ".join((content or "").split())
    if not text:
        return False
    completed = _COMPLETION.match(text)
    if completed and code_names(completed.group("subject"), names):
        return False
    context = _CONTEXT.match(text)
    body = context.group("body") if context else text
    if not lacks_subject(body):
        return False
    if context is None or _APPROVAL.match(strip_acknowledgement(body) or body):
        return True
    lead = context.group("context")
    return lacks_subject(lead) and not code_names(lead, names) and not (
        context.group("joiner") == "answering" and _topic_of_question(lead))


def _topic_of_question(question: str) -> bool:
    """A question that says what it asks about (it names more than pronouns: "Should the fixed-dollar amount
    come off first, or the percentage?")."""
    words = [w for w in _words(own_words(question)) if len(w) > 3 and w.lower() not in _NOT_SUBJECT
             and not _DEICTIC.match(w)]
    return len(words) >= 3


_CASE_STYLE = re.compile(r"(?:snake|camel|pascal|kebab|screaming_snake|title|upper|lower)_?case", re.I)


def chat_subject(sentences_before: list[str], names: frozenset[str] | set[str] | tuple[str, ...] = ()) -> str | None:
    """The code a chat is about so far: the name it mentions most (the code graph's known names first;
    ties: the most recent), or None when it names no code."""
    return _chat_subject(sentences_before, names)[0]


def _chat_subject(sentences_before: list[str], names: frozenset[str] | set[str] | tuple[str, ...] = ()) -> tuple[str | None, int]:
    """`chat_subject` and how many of the sentences name it."""
    counts: dict[str, int] = {}
    last: dict[str, int] = {}
    called: set[str] = set()
    arguments: set[str] = set()
    for i, sentence in enumerate(sentences_before):
        sentence = re.sub(r"```.*?(?:```|$)", " ", sentence, flags=re.S)  # a code block's names are its details
        called |= set(re.findall(r"([A-Za-z_][\w.]*)\(", sentence))
        arguments |= {a.strip() for inner in re.findall(r"[A-Za-z_][\w.]*\(([^()]*)\)", sentence) for a in inner.split(",")}
        for name in code_names(sentence, names):
            if "/" in name and not re.search(r"\.\w{1,4}$", name):
                continue  # "in/out", "primary/CRM-side": a pair of words, not a path
            if _CASE_STYLE.fullmatch(name):
                continue  # "from snake_case": a naming style, not the code the chat is about
            counts[name] = counts.get(name, 0) + 1
            last[name] = i
    for name in list(counts):  # `boltons.strutils.pluralize` after pluralize('person'): the same function named twice
        tail = name.rsplit(".", 1)[-1]
        if tail != name and tail in counts and "/" not in name:
            counts[tail] += counts.pop(name)
            last[tail] = max(last[tail], last.pop(name))
    for name in list(counts):  # a plain word in a code span (`updated`, `auth`) names a field, not an area
        if re.fullmatch(r"[a-z]+", name) and name not in called and name not in names:
            del counts[name]
    if not counts:
        return None, 0

    def rank(name: str) -> tuple[bool, bool, int, int, int]:
        snake = ("_" in name.strip("_") or bool(re.fullmatch(r"[a-z]+\d+[a-z]\w*", name))) and name == name.lower()
        kind = 4 if name in called else 3 if snake else 2 if "/" in name else 1  # under2camel: a function name too
        if re.fullmatch(r"[A-Z0-9_]+|\w*(?:Error|Exception|Warning)", name) or name in arguments:
            kind = 0  # a constant, an exception or an argument is a detail of the area, not its name
        return name in names, kind >= 3, counts[name], kind, last[name]

    best = max(counts, key=rank)
    return best, counts[best]


_COMMIT_PREFIX = re.compile(  # conventional commits, merges, a module label: "fix(site): …", "strutils.singularize: add …"
    r"^(?:(?:feat|fix|chore|docs?|refactor|test|tests|ci|build|perf|style|revert)(?:\([^)]*\))?!?:\s"
    r"|merge (?:pull request|branch|remote-tracking)\b|revert \")", re.I)
_MODULE_LABEL = re.compile(r"^(?!(?:note|warning|heads-up|update|todo|fixme|nb|ps)\b)[a-z][\w./-]*: (?=\S)")  # "frozendict: use slots"
_PR_REF = re.compile(r"\(#\d+\)|\bfix(?:es|ed)? #\d+|^#\d+\b|\bper #\d+|\bissue #\d+", re.I)
_CHANGE_VERB = re.compile(  # how a change log starts a line; "use", "avoid", "never" start rules as often: not here
    r"^(?:add(?:ed|ing|s)?|fix(?:ed|es|ing)?|switch(?:ed|ing|es)?|clean(?:ed|ing)? up|remov(?:e|ed|es|ing)|updat(?:e|ed|es|ing)"
    r"|drop(?:ped|s|ping)?|mov(?:e|ed|es|ing)|renam(?:e|ed|es|ing)|bump(?:ed|s|ing)?|refactor(?:ed|s|ing)?|revert(?:ed|s|ing)?"
    r"|implement(?:ed|s|ing)?|improv(?:e|ed|es|ing)|wrap(?:ped)? up|tweak(?:ed|s)?|widen(?:ed|s)?|simplif(?:y|ied|ies)"
    r"|upgrad(?:e|ed|es|ing)|introduc(?:e|ed|es|ing)|replac(?:e|ed|es|ing)|merg(?:e|ed|es|ing)|document(?:ed|s|ing)?"
    r"|port(?:ed|s)?|restor(?:e|ed|es)|reorgani[sz](?:e|ed|es)|migrat(?:e|ed|es)|initial|first version|minor|typo"
    r"|python 3 support|py3 (?:support|compat)|release|version bump)\b", re.I)


def reads_as_commit_subject(text: str) -> bool:
    """A commit subject as git stores it ("switch to monotonic time", "Switch to explicit relative imports
    (#303)", "clean up ManyToMany (add len, …)", "frozendict: use slots …"): a record of what was done,
    found by a query, never a rule. Judged for text whose speaker is not told (git ingest, stored memories);
    a chat turn's sentences are never commit subjects."""
    line = " ".join((text or "").split())
    if not line or "\n" in (text or "").strip():
        return False
    if _PR_REF.search(line) or _COMMIT_PREFIX.match(line) or _MODULE_LABEL.match(line):
        return True
    if not _CHANGE_VERB.match(line):
        return False
    if line[0].islower():
        return True  # "switch to monotonic time": lower-case, as commits are written
    return not line.endswith((".", "!")) and not _DURABLE.search(_cue_text(line))  # "Drop support for EOL Python 2.6"
