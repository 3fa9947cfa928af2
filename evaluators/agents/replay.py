"""A model that answers with replies recorded elsewhere: how uploaded outputs are re-scored.

The uploaded replies go through the same flow, parser and environment as a live endpoint's, so an
upload is scored by exactly the code that scores live runs.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluators.endpoints.client import Completion


class RepliesExhausted(Exception):
    """The recorded replies ran out: the run ends there, as the recorded run did."""


class RecordedModel:
    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.used = 0

    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int,
                 top_p: float | None = None, frequency_penalty: float | None = None) -> Completion:
        if self.used >= len(self.replies):
            raise RepliesExhausted(f"all {len(self.replies)} recorded replies were used")
        text = self.replies[self.used]
        self.used += 1
        return Completion(text=text, prompt_tokens=None, completion_tokens=None, latency=0.0, attempts=1,
                          finish_reason="stop")
