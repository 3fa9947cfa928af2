"""What the chaos loop needs from the platform it runs on: local processes or the compose stack."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Protocol

from bench._chaos.record import Checks, Record


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Refused(Exception):
    """A submission the platform did not take (database or web process down); nothing was stored."""


class Stack(Protocol):
    #: What the report says it ran on.
    description: str
    #: The chaos events it draws from.
    kinds: tuple[str, ...]
    #: The site's base URL and the headers every request carries.
    site: str
    headers: dict[str, str]
    #: Seconds each SIGTERMed worker took to be gone.
    stop_seconds: list[float]

    def prepare(self, workdir: Path) -> None:
        """Ready to start: Django set up in this process (the upload is recorded with it)."""

    def start(self, workdir: Path, upload: bytes) -> None: ...

    def submit(self, team: str, rng: random.Random) -> None:
        """One submission of ``team`` (a plan's team or the uploader); raises :class:`Refused`."""

    def event(self, kind: str, rng: random.Random, record: Record, started: float) -> str:
        """Do one chaos event; what happened, for the report."""

    def active_count(self) -> int: ...

    def outcome(self, record: Record) -> tuple[Checks, list[str]]:
        """The stored attempts and results checked (:mod:`bench._chaos.outcome`), and the figures."""

    def stop(self) -> None: ...
