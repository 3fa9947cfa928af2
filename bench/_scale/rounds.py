"""The boards a scale run plays, and the records of what its rounds measured."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BOARDS = [("sokoban", "global"), ("sokoban", "online"), ("webui", "global"), ("football", "online")]
QUEUES = ("light", "browser", "engine")
MIB = 1024 * 1024
#: The baseline each environment is played by: the oracle where it has a plan (Sokoban, WebUI);
#: it has none for Football, whose engine only steps when replies hold actions, so the seeded
#: random agent plays there.
AGENT_FOR_ENV = {"sokoban": "oracle", "webui": "oracle", "football": "random"}


def board_name(env: str, flow: str) -> str:
    return f"{env} {flow}"


@dataclass
class Round:
    label: str
    workers: int
    submitted_at: float
    finished: bool
    wall: float | None
    #: The 1-minute load average at submission: other sessions share these cores too.
    load: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def attempts(self) -> int:
        return len(self.rows)

    def by_board(self, board: tuple[str, str]) -> list[dict[str, Any]]:
        return [row for row in self.rows if (row["env"], row["flow"]) == board]

    def failures(self) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["status"] != "scored"]


@dataclass
class Memory:
    idle: dict[str, int]
    peak: dict[str, int]
    processes_idle: dict[str, int]
    processes_at_peak: dict[str, int]
    samples: int
    round: Round


def slot_times(measured: Round) -> dict[int, float]:
    """On one single-slot worker attempts run one after another, so the time from the previous
    attempt's end to this one's end is all the platform spent on it: delivery, claim, episode,
    HTTP, writes. The first attempt's slot starts at submission."""
    ordered = sorted((row for row in measured.rows if row["finished_at"] is not None),
                     key=lambda row: row["finished_at"])
    slots: dict[int, float] = {}
    previous = measured.submitted_at
    for row in ordered:
        end = row["finished_at"].timestamp()
        slots[row["id"]] = end - previous
        previous = end
    return slots
