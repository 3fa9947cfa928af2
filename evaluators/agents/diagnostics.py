"""IA (invalid actions) and RA (repeating actions): the platform's operational definitions.

The official MageBench code computes neither (reference §0), so the platform defines them here,
publishes these rules on every metric card, and applies them identically to live runs, uploads
and offline scoring.

IA is a property of what the model sent, not of what the flow made of it: one reply that broke
the format or named something that is not an action makes the attempt IA, whether or not a parse
retry (a non-default option) later obtained a valid reply. A missing marker and a wrong name are
the same failure: the official parsers fall back to reading the whole reply when the marker is
absent, so a reply only fails when the text read as the action is not an action.

RA marks degenerate repetition, the failure the paper describes as a model repeating itself
instead of playing. Three signatures count:

* a reply whose tail is one short word n-gram repeated ``RA_MIN_TAIL_REPEATS`` times (the typical
  run-off to max_tokens); n-grams made only of action names are left to the next rule, so a long
  but purposeful move list is not mistaken for babble;
* the same action executed ``RA_MAX_NOOP_DECISIONS`` times in a row with none of them changing the
  state, in either flow (Online: consecutive decisions; Global: consecutive moves of the plan).
  Many identical moves are therefore not RA by themselves: Sokoban corridors call for long straight
  runs, and a move that still changes the board is play, not repetition; it becomes RA once the
  repeats stop having any effect (walking into a wall);
* Football only: a trajectory of at least ``RA_MIN_PASS_ONLY`` decisions that are all passes (long,
  short or high), the paper's rule for an agent that does nothing but pass.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

#: A reply whose tail repeats one n-gram this often has degenerated (typical max_tokens run-off).
RA_MIN_TAIL_REPEATS = 8
RA_MAX_NGRAM = 10
#: This many identical executed actions in a row, none of which changed the state.
RA_MAX_NOOP_DECISIONS = 5
#: "Repeating" needs something to repeat: one pass that ends the episode is not a pass-only habit.
RA_MIN_PASS_ONLY = 2
#: Characters around an action name in a list ("Up," "Left.") that do not make it another word.
_LIST_PUNCTUATION = ",.;:"
_NOTE_CHARS = 40

DEFINITIONS = {
    "IA": (
        "An attempt has an invalid action (IA) when any reply the model sent broke the reply format or named "
        "something that is not an action: Online, the text read as the action (between the first '# action' and "
        "the next one, or the whole reply when there is no '# action') is not exactly one action name; Global, "
        "the action list (after '### Actions', or the whole reply) holds no action name, or a comma-separated "
        "entry that is not one. A missing marker and a wrong name count the same, and a later valid reply (parse "
        "retries, a non-default option) does not clear it."
    ),
    "RA": (
        f"An attempt has repeating actions (RA) when a reply's tail is one n-gram of at most {RA_MAX_NGRAM} words "
        f"repeated {RA_MIN_TAIL_REPEATS} or more times (n-grams made only of action names excepted), or when the "
        f"same action is executed {RA_MAX_NOOP_DECISIONS} times in a row without changing the state (Online: "
        f"consecutive decisions; Global: consecutive moves of the plan; a long run of identical moves that keep "
        f"changing the state is not RA), or, in an environment with actions that only hand the play on (passes), "
        f"when all of at least {RA_MIN_PASS_ONLY} decisions are such passes."
    ),
}


def longest_run(items: Sequence[str]) -> int:
    best = run = 0
    previous: object = object()
    for item in items:
        run = run + 1 if item == previous else 1
        previous = item
        best = max(best, run)
    return best


def tail_repeats(text: str, max_ngram: int = RA_MAX_NGRAM, ignore: Collection[str] = ()) -> int:
    """How many times the reply's final word n-gram repeats back to back, best over n.

    Words are compared without list punctuation ("Right," and "Right" are one word, so a list's
    last item still matches); n-grams whose words are all in ``ignore`` (action names) are skipped.
    """
    words = [w for w in (word.strip(_LIST_PUNCTUATION) for word in text.split()) if w]
    best = 1 if words else 0
    for n in range(1, min(max_ngram, len(words) // 2) + 1):
        gram = words[-n:]
        if ignore and all(word in ignore for word in gram):
            continue
        count = 1
        position = len(words) - 2 * n
        while position >= 0 and words[position : position + n] == gram:
            count += 1
            position -= n
        best = max(best, count)
    return best


def reply_is_repetitive(reply: str, vocabulary: Collection[str] = ()) -> bool:
    return tail_repeats(reply, ignore=vocabulary) >= RA_MIN_TAIL_REPEATS


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _NOTE_CHARS else text[: _NOTE_CHARS - 1] + "…"


@dataclass
class DiagnosticsTracker:
    """Accumulates IA/RA evidence over one attempt.

    ``vocabulary`` is the environment's action names; ``pass_actions`` the actions whose exclusive
    use is RA (Football's passes; empty elsewhere).
    """

    vocabulary: frozenset[str] = frozenset()
    pass_actions: frozenset[str] = frozenset()
    invalid_replies: int = 0
    #: Decisions left without an action once any parse retries were spent (informational).
    invalid_decisions: int = 0
    foreign_token_replies: int = 0
    repetitive_replies: int = 0
    longest_noop_streak: int = 0
    parse_errors: int = 0
    actions: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    _noop_action: str | None = None
    _noop_streak: int = 0

    def observe_reply(self, reply: str, tokens: Sequence[str], foreign: Sequence[str], parse_ok: bool) -> None:
        if not parse_ok:
            self.parse_errors += 1
        if foreign:
            self.foreign_token_replies += 1
            self._note("not an action: " + ", ".join(repr(_short(t)) for t in list(foreign)[:3]))
        if not parse_ok or foreign:
            self.invalid_replies += 1
            if not parse_ok and not foreign:
                self._note("a reply named no action")
        if reply_is_repetitive(reply, self.vocabulary):
            self.repetitive_replies += 1
            self._note("a reply degenerated into repetition")

    def observe_failed_decision(self) -> None:
        self.invalid_decisions += 1

    def observe_action(self, action: str, changed_state: bool) -> None:
        """One executed action, and whether it changed the environment's state."""
        self.actions.append(action)
        if changed_state:
            self._noop_action, self._noop_streak = None, 0
            return
        self._noop_streak = self._noop_streak + 1 if action == self._noop_action else 1
        self._noop_action = action
        if self._noop_streak > self.longest_noop_streak:
            self.longest_noop_streak = self._noop_streak
            if self._noop_streak == RA_MAX_NOOP_DECISIONS:
                self._note(f"'{action}' executed {RA_MAX_NOOP_DECISIONS} times in a row with no effect")

    @property
    def pass_only(self) -> bool:
        return (bool(self.pass_actions) and len(self.actions) >= RA_MIN_PASS_ONLY
                and all(action in self.pass_actions for action in self.actions))

    @property
    def invalid_action(self) -> bool:
        return self.invalid_replies > 0

    @property
    def repeating_action(self) -> bool:
        return (self.repetitive_replies > 0 or self.longest_noop_streak >= RA_MAX_NOOP_DECISIONS
                or self.pass_only)

    def _note(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    def as_dict(self) -> dict[str, object]:
        reasons = list(self.reasons)
        if self.pass_only:
            reasons.append(f"all {len(self.actions)} decisions were passes")
        return {
            "invalid_action": self.invalid_action,
            "repeating_action": self.repeating_action,
            "invalid_replies": self.invalid_replies,
            "invalid_decisions": self.invalid_decisions,
            "foreign_token_replies": self.foreign_token_replies,
            "repetitive_replies": self.repetitive_replies,
            "longest_noop_streak": self.longest_noop_streak,
            "pass_only": self.pass_only,
            "parse_errors": self.parse_errors,
            "reasons": reasons,
        }
