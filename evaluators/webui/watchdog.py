"""A watchdog that bounds each step of driving a page: past its deadline it escalates, in two stages."""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)


class Watchdog:
    """Fires ``escalate(stage)`` when a guarded step overruns: stage 1 at the deadline, stage 2
    ``grace`` seconds later if the step is still stuck. Deliberate waits extend the deadline."""

    def __init__(self, escalate: Callable[[int], None], grace: float) -> None:
        self._escalate = escalate
        self._grace = grace
        self._condition = threading.Condition()
        self._deadline: float | None = None
        self._stage = 0
        self._closed = False
        self.fired = False
        self._thread = threading.Thread(target=self._run, name="page-watchdog", daemon=True)
        self._thread.start()

    @contextlib.contextmanager
    def guard(self, seconds: float) -> Iterator[None]:
        """Watch the step run inside: it has ``seconds`` before the first stage fires."""
        with self._condition:
            self._deadline = time.monotonic() + seconds
            self._stage = 0
            self.fired = False
            self._condition.notify_all()
        try:
            yield
        finally:
            with self._condition:
                self._deadline = None
                self._condition.notify_all()

    def extend(self, seconds: float) -> None:
        """Move the deadline of the guarded step on by a wait of ``seconds`` (not once it fired)."""
        with self._condition:
            if self._deadline is not None and self._stage == 0:
                self._deadline += seconds
                self._condition.notify_all()

    def close(self) -> None:
        """Stop the watchdog's thread."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def _run(self) -> None:
        with self._condition:
            while not self._closed:
                if self._deadline is None:
                    self._condition.wait()
                    continue
                remaining = self._deadline - time.monotonic()
                if remaining > 0:
                    self._condition.wait(remaining)
                    continue
                self._stage += 1
                self.fired = True
                self._deadline = time.monotonic() + self._grace if self._stage < 2 else None
                try:
                    self._escalate(self._stage)
                except Exception:  # the watchdog must outlive whatever it kills
                    log.exception("page watchdog could not escalate")
