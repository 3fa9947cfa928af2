"""What is wrong with an upload: each problem found, and the error listing them all."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an upload, and where."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class UploadError(ValueError):
    """An upload that cannot be used; ``problems`` lists everything found, in file order."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions cross process boundaries (task results); the default reduce would pass the
        # joined message back as ``problems``.
        return (type(self), (self.problems,))


class ProblemList:
    """The problems found so far, listing up to ``limit`` and counting the rest."""

    def __init__(self, limit: int) -> None:
        self.items: list[Problem] = []
        self.limit = limit
        self.dropped = 0

    def add(self, where: str, message: str) -> None:
        if len(self.items) < self.limit:
            self.items.append(Problem(where, message))
        else:
            self.dropped += 1

    def __bool__(self) -> bool:
        return bool(self.items)

    def stop(self, where: str, message: str) -> None:
        """Raise at once: the problems so far and this one, which ends the check (a cap reached)."""
        problems = [*self.items, Problem(where, message)]
        if self.dropped:
            problems.insert(len(self.items), Problem("upload", f"{self.dropped} more problem(s) not listed"))
        raise UploadError(problems)

    def raise_if_any(self) -> None:
        if not self.items:
            return
        problems = list(self.items)
        if self.dropped:
            problems.append(Problem("upload", f"{self.dropped} more problem(s) not listed"))
        raise UploadError(problems)
