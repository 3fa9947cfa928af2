"""Every source file does one job, which keeps it short enough to read in one sitting."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MAX_LINES = 700

#: The project's own code; fixtures/ holds data in the official layout and the virtualenv is not ours.
SOURCE_FOLDERS = ("accounts", "bench", "config", "deploy", "evaluators", "leaderboard", "client/magebench_client",
                  "monitoring", "scripts", "static/js", "submissions")


def _sources() -> list[Path]:
    files = [ROOT / "manage.py", ROOT / "conftest.py"]
    for folder in SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if "tests" in parts or "migrations" in parts or path.suffix not in {".py", ".js"}:
                continue
            files.append(path)
    return files


def test_no_source_file_outside_tests_and_migrations_is_longer_than_700_lines() -> None:
    long = {str(path.relative_to(ROOT)): lines for path in _sources()
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_size_check_sees_the_projects_largest_modules() -> None:
    # A check that found no file would pass on anything.
    seen = {str(path.relative_to(ROOT)) for path in _sources()}
    assert {"manage.py", "evaluators/base.py", "submissions/services.py", "leaderboard/models.py",
            "client/magebench_client/commands.py", "deploy/backup.py"} <= seen
