"""Where an environment's scenarios come from: the official resources, an import-time check of each,
and a note on a set of them."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from evaluators.declarations import ImportedScenario, ScenarioCheck, StoredScenario


class ScenarioDeclarations:
    #: The name of a check an import runs on every scenario (e.g. whether a page can be evaluated as
    #: intended), under which its result is stored with the scenario; None: no check.
    scenario_check: ClassVar[str | None] = None
    #: A field of each scenario's stored data (a ``__``-separated path into it) that
    #: :meth:`scenario_note` reads; "" for an environment with no such note.
    scenario_note_field: ClassVar[str] = ""

    def discover(self, resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
        """Read this environment's scenarios from an official ``resources/`` directory.

        Raises ResourceError when the directory has none of this environment's files at all;
        returns an empty list only for an environment that does not import from resources.
        """
        return []

    def check_scenarios(self, scenarios: Sequence[StoredScenario], *, workers: int, recheck: bool,
                        store: Callable[[ScenarioCheck], None]) -> list[str]:
        """Run :attr:`scenario_check` on these stored scenarios and return the report's lines.

        ``store`` is called with each new result as it comes; a scenario whose stored check is
        still valid keeps it unless ``recheck``. ``workers`` bounds the checks run at a time.
        """
        return []

    def scenario_note(self, values: Sequence[Any]) -> str:
        """A short note on a set of scenarios (a board's, or a suite's on the metric card), from each
        one's :attr:`scenario_note_field` (None where a scenario has none); "" for no note."""
        return ""
