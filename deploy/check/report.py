"""What a check run prints: every check passed or failed (with why), and the time of each step."""
from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from deploy.stack import say


class CheckFailed(Exception):
    """A check's condition did not hold; the message says what was seen."""


def expect(condition: bool, seen: object) -> None:
    if not condition:
        raise CheckFailed(str(seen))


@dataclass
class Report:
    passed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def check(self, name: str, run: Callable[[], object]) -> bool:
        """Runs one check: it passes unless it raises; what it returns is shown beside its name."""
        try:
            shown = run()
        except CheckFailed as failure:
            self.failed.append((name, str(failure)))
            say(f"FAILED  {name}\n          {str(failure)[-1500:]}")
            return False
        except Exception as error:  # noqa: BLE001 - any error is this check failing, reported with its cause
            self.failed.append((name, f"{error.__class__.__name__}: {error}"))
            say(f"FAILED  {name}: {error.__class__.__name__}: {str(error)[-1500:]}")
            if os.environ.get("MAGEBENCH_CHECK_TRACEBACKS"):
                traceback.print_exc()
            return False
        self.passed.append(name)
        say(f"ok      {name}" + (f" ({shown})" if shown not in (None, True, "") else ""))
        return True

    def timing(self, what: str, seconds: float) -> None:
        self.timings.append((what, seconds))
        say(f"{what}: {seconds:.1f} s")

    def summary(self, header: str) -> str:
        lines = [header]
        lines += [f"  {what:<66} {seconds:8.1f} s" for what, seconds in self.timings]
        lines.append(f"  {'total':<66} {time.monotonic() - self.started:8.1f} s")
        lines.append(f"  checks passed: {len(self.passed)}, failed: {len(self.failed)}")
        lines += [f"  ok      {name}" for name in self.passed]
        lines += [f"  FAILED  {name}: {why[-300:]}" for name, why in self.failed]
        return "\n".join(lines)
