"""The seeded random baseline, with a generator of its own for each conversation.

``RandomAgent`` draws every reply from one seeded generator shared by all the conversations it
serves, so what an attempt plays depends on how its requests interleave with the other attempts'
requests: eight attempts at once play other episodes than two at once, and their lengths (a
Football episode of the random agent runs from 2 to 150 model calls) decide the wall time more than
the workers do. Here each conversation draws from a generator seeded by its opening request (text
and images) and by how many conversations opened with the same request before it, so, with the
engine's seed fixed too, the k-th episode of a scenario plays the same actions whatever the workers.

The baseline server answers each connection on a thread of its own and a worker keeps one
connection for a whole attempt, so a conversation is a server thread (a connection opened again
after a failure starts a new one).
"""
from __future__ import annotations

import hashlib
import random
import threading
from collections import Counter
from collections.abc import Sequence

from evaluators.baselines.agents import Message, RandomAgent, message_image_urls, message_text, plugin_reply


class ConversationRandomAgent(RandomAgent):
    """Random replies, reproducible per conversation rather than per server."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.seed = seed
        self._conversation = threading.local()
        self._opened: Counter[str] = Counter()
        #: How many conversations began, by the digest of their opening request.
        self.conversations = 0

    def _generator(self, messages: Sequence[Message]) -> random.Random:
        generator: random.Random | None = getattr(self._conversation, "generator", None)
        if generator is None:
            opening = hashlib.sha256()
            for message in messages:
                opening.update(message_text(message).encode("utf-8", errors="replace"))
                for url in message_image_urls(message):
                    opening.update(url.encode("utf-8", errors="replace"))
            key = opening.hexdigest()
            with self._lock:
                order = self._opened[key]
                self._opened[key] += 1
                self.conversations += 1
            digest = hashlib.sha256(f"{self.seed}:{key}:{order}".encode()).digest()
            generator = self._conversation.generator = random.Random(int.from_bytes(digest[:8], "big"))
        return generator

    def reply(self, messages: Sequence[Message]) -> str:
        claimed = plugin_reply(self.name, messages, self._generator(messages), self.options)
        return claimed if claimed is not None else self.unclaimed(messages)

    @property
    def openings(self) -> int:
        """How many different opening requests it saw."""
        return len(self._opened)
