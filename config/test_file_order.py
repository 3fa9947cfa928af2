"""The order test files start in: the slowest first, by the time each took in a recorded run.

scripts/test hands whole files to its parallel processes in collection order (``--dist loadfile``),
each process taking the next file as it runs out. Started slowest first, the long files run while
the short ones fill the gaps, and no long file is left to run alone at the end (the greedy
longest-first rule). The times are in ``config/test-durations.json``; ``pytest
--record-file-durations`` writes them again. A file with no recorded time starts first, as if slow.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Protocol, TypeVar

DURATIONS = Path(__file__).with_name("test-durations.json")


class _Item(Protocol):
    @property
    def nodeid(self) -> str: ...


T = TypeVar("T", bound=_Item)


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def recorded_durations(path: Path = DURATIONS) -> dict[str, float]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(name): float(seconds) for name, seconds in data.items()} if isinstance(data, dict) else {}


def slowest_files_first(items: list[T], durations: dict[str, float]) -> list[T]:
    """``items`` with whole files in order of recorded time, longest first; a file's own tests keep
    their order, and files of equal time keep theirs."""
    position = {name: index for index, name in reversed(list(enumerate(file_of(i.nodeid) for i in items)))}

    def key(item: T) -> tuple[float, int]:
        name = file_of(item.nodeid)
        return (-durations.get(name, float("inf")), position[name])

    return sorted(items, key=key)


class DurationRecorder:
    """Adds up each file's setup, call and teardown times as the reports come in."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def add(self, nodeid: str, duration: float) -> None:
        self.seconds[file_of(nodeid)] += duration

    def write(self, path: Path = DURATIONS) -> None:
        """Files of this run replace their old times; files it did not run keep theirs."""
        merged = {**recorded_durations(path), **{name: round(s, 2) for name, s in self.seconds.items()}}
        path.write_text(json.dumps(dict(sorted(merged.items())), indent=1) + "\n")
