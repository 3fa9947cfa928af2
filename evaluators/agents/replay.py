"""A model that answers with replies recorded elsewhere: how uploaded outputs are re-scored.

The uploaded replies go through the same flow, parser and environment as a live endpoint's, so an
upload is scored by exactly the code that scores live runs.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluators.endpoints.messages import Completion
from evaluators.endpoints.profile import OFFICIAL_PROFILE, RequestProfile


class RepliesExhausted(Exception):
    """The recorded replies ran out: the run ends there, as the recorded run did."""


class RecordedModel:
    """Plays saved replies back in order, one per model call, as if an endpoint had sent them.

    Used wherever replies are scored without an endpoint: uploads (their re-scoring on the site,
    ``validate_upload --rescore``) and ``score_reply``. When the replies run out it raises
    :class:`RepliesExhausted` instead of answering: the flows end the run there, as the recorded
    run ended, rather than scoring made-up empty replies as parse errors.
    """

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.used = 0

    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int,
                 top_p: float | None = None, frequency_penalty: float | None = None,
                 profile: RequestProfile = OFFICIAL_PROFILE) -> Completion:
        if self.used >= len(self.replies):
            raise RepliesExhausted(f"all {len(self.replies)} recorded replies were used")
        text = self.replies[self.used]
        self.used += 1
        return Completion(text=text, prompt_tokens=None, completion_tokens=None, latency=0.0, attempts=1,
                          finish_reason="stop")
