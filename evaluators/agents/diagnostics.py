"""IA (invalid actions) and RA (repeating actions): the platform's operational definitions.

The official MageBench code computes neither (reference §0), so the platform defines them here,
publishes these constants on every metric card, and applies them identically to live runs,
uploads and offline scoring.

IA: an attempt has an invalid action when, at some decision, the model's replies could not be
    turned into a valid action even after the parse retries, or a reply named tokens outside the
    environment's action set.
RA: an attempt has repeating actions when a single reply degenerates into repetition (one action
    token repeated ``RA_MAX_ACTION_RUN`` times in a row, or the reply's tail is one short word
    n-gram repeated ``RA_MIN_TAIL_REPEATS`` times), or when the Online agent chooses the same
    action at ``RA_MAX_NOOP_DECISIONS`` consecutive decisions none of which changed the state.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

#: A straight run longer than any room interior (13x13 rooms have 11 free cells) must waste moves.
RA_MAX_ACTION_RUN = 12
#: A reply whose tail repeats one n-gram this often has degenerated (typical max_tokens run-off).
RA_MIN_TAIL_REPEATS = 8
RA_MAX_NGRAM = 10
#: Online: this many identical decisions in a row with no effect on the environment.
RA_MAX_NOOP_DECISIONS = 5

DEFINITIONS = {
    "IA": (
        "An attempt has an invalid action (IA) when at some decision the model's reply could not be "
        "turned into a valid action after the parse retries, or a reply named tokens outside the "
        "environment's action set."
    ),
    "RA": (
        f"An attempt has repeating actions (RA) when one reply repeats the same action token "
        f"{RA_MAX_ACTION_RUN} or more times in a row, or its tail is one n-gram of at most "
        f"{RA_MAX_NGRAM} words repeated {RA_MIN_TAIL_REPEATS} or more times, or when the Online "
        f"agent picks the same action at {RA_MAX_NOOP_DECISIONS} consecutive decisions that all "
        f"leave the environment unchanged."
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


def tail_repeats(text: str, max_ngram: int = RA_MAX_NGRAM) -> int:
    """How many times the reply's final word n-gram repeats back to back, best over n."""
    words = text.split()
    best = 1 if words else 0
    for n in range(1, min(max_ngram, len(words) // 2) + 1):
        gram = words[-n:]
        count = 1
        position = len(words) - 2 * n
        while position >= 0 and words[position : position + n] == gram:
            count += 1
            position -= n
        best = max(best, count)
    return best


def reply_is_repetitive(reply: str, action_tokens: Sequence[str]) -> bool:
    return longest_run(action_tokens) >= RA_MAX_ACTION_RUN or tail_repeats(reply) >= RA_MIN_TAIL_REPEATS


@dataclass
class DiagnosticsTracker:
    """Accumulates IA/RA evidence over one attempt."""

    invalid_decisions: int = 0
    foreign_token_replies: int = 0
    repetitive_replies: int = 0
    longest_noop_streak: int = 0
    parse_errors: int = 0
    reasons: list[str] = field(default_factory=list)
    _noop_action: str | None = None
    _noop_streak: int = 0

    def observe_reply(self, reply: str, tokens: Sequence[str], foreign: Sequence[str], parse_ok: bool) -> None:
        if not parse_ok:
            self.parse_errors += 1
        if foreign:
            self.foreign_token_replies += 1
            self._note(f"tokens outside the action set: {', '.join(list(foreign)[:5])}")
        if reply_is_repetitive(reply, tokens):
            self.repetitive_replies += 1
            self._note("a reply degenerated into repetition")

    def observe_failed_decision(self) -> None:
        self.invalid_decisions += 1
        self._note("no valid action after the parse retries")

    def observe_online_action(self, action: str, changed_state: bool) -> None:
        if changed_state:
            self._noop_action, self._noop_streak = None, 0
            return
        self._noop_streak = self._noop_streak + 1 if action == self._noop_action else 1
        self._noop_action = action
        if self._noop_streak > self.longest_noop_streak:
            self.longest_noop_streak = self._noop_streak
            if self._noop_streak == RA_MAX_NOOP_DECISIONS:
                self._note(f"'{action}' chosen {RA_MAX_NOOP_DECISIONS} times in a row with no effect")

    @property
    def invalid_action(self) -> bool:
        return self.invalid_decisions > 0 or self.foreign_token_replies > 0

    @property
    def repeating_action(self) -> bool:
        return self.repetitive_replies > 0 or self.longest_noop_streak >= RA_MAX_NOOP_DECISIONS

    def _note(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    def as_dict(self) -> dict[str, object]:
        return {
            "invalid_action": self.invalid_action,
            "repeating_action": self.repeating_action,
            "invalid_decisions": self.invalid_decisions,
            "foreign_token_replies": self.foreign_token_replies,
            "repetitive_replies": self.repetitive_replies,
            "longest_noop_streak": self.longest_noop_streak,
            "parse_errors": self.parse_errors,
            "reasons": list(self.reasons),
        }
