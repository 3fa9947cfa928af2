"""The order scripts/test starts test files in: the slowest first, each file's tests together."""
from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from config.test_file_order import DurationRecorder, recorded_durations, slowest_files_first


class Item(NamedTuple):
    nodeid: str


def test_files_start_slowest_first_with_their_tests_in_order_and_an_unrecorded_file_first() -> None:
    items = [Item("a.py::one"), Item("a.py::two"), Item("b.py::one"), Item("c.py::one"), Item("d.py::one"),
             Item("b.py::two"), Item("e.py::one")]
    durations = {"a.py": 3.0, "b.py": 40.0, "c.py": 3.0, "d.py": 0.5}
    ordered = [item.nodeid for item in slowest_files_first(items, durations)]
    assert ordered == ["e.py::one", "b.py::one", "b.py::two", "a.py::one", "a.py::two", "c.py::one", "d.py::one"]


def test_a_recorded_run_replaces_the_times_of_its_files_and_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"a.py": 5.0, "b.py": 7.0}))
    recorder = DurationRecorder()
    for nodeid, seconds in [("b.py::one", 1.25), ("b.py::one", 0.5), ("b.py::two", 2.0), ("c.py::x", 0.125)]:
        recorder.add(nodeid, seconds)
    recorder.write(path)
    assert recorded_durations(path) == {"a.py": 5.0, "b.py": 3.75, "c.py": 0.12}


def test_an_unreadable_record_orders_nothing(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    assert recorded_durations(tmp_path / "broken.json") == {}
    assert recorded_durations(tmp_path / "absent.json") == {}
