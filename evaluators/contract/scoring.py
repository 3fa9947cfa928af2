"""What an environment's score means: its actions and their diagnostics, the parts a score is lost
to, and the floor and ceiling the summary across environments reads."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from evaluators.declarations import BreakdownPart, ScenarioSpec, SummaryReference


class ScoringDeclarations:
    #: The action vocabulary the parser accepts; empty for environments whose replies are code.
    #: Uploads accept action names (``actions``) only where it is not empty.
    ACTIONS: ClassVar[tuple[str, ...]] = ()
    #: Actions that hand the play on without changing the state the agent is judged by (a pass): a
    #: trajectory made only of them is RA (``evaluators.agents.diagnostics``). Empty: no such rule here.
    PASS_ACTIONS: ClassVar[frozenset[str]] = frozenset()
    #: Whether IA/RA (action diagnostics) mean something here; page-writing environments have none.
    has_action_diagnostics: ClassVar[bool] = True
    #: Names of the lost-score components each scored attempt stores in details["breakdown"].
    breakdown_keys: ClassVar[tuple[str, ...]] = ()
    #: The same components, in the same order, with what the pages call them and their colours; an
    #: environment with ``breakdown_keys`` declares them here so that no shared page names them.
    breakdown_parts: ClassVar[tuple[BreakdownPart, ...]] = ()
    #: What the summary across environments' floor and ceiling mean here, in words for the page and the
    #: metric card ("an optimal solution"); the numbers come from :meth:`idle_score` and :meth:`best_score`.
    floor_meaning: ClassVar[str] = ""
    ceiling_meaning: ClassVar[str] = ""
    #: Fixed, published floors and ceilings by (flow, subset) for a metric with no closed-form end
    #: (:meth:`summary_reference`); each names its source. Empty: the closed forms only.
    summary_references: ClassVar[Mapping[tuple[str, str], SummaryReference]] = {}

    @property
    def metric_card(self) -> dict[str, Any]:
        """The metric card page's content (what is measured, how it differs from the paper)."""
        return {}

    def idle_score(self, scenario: ScenarioSpec) -> float | None:
        """The score of an agent that does nothing, when it is known in closed form: the floor of the
        cross-environment summary (``scoring.normalised``). None: the board's Idle baseline entry is
        the floor instead, or 0 without one."""
        return None

    def best_score(self, scenario: ScenarioSpec) -> float | None:
        """The best score an agent can reach on ``scenario``, when the metric has a meaningful maximum:
        the ceiling of the cross-environment summary. None (a reward with no analytic maximum): the
        ceiling is the board's :attr:`summary_references` entry, and without one the environment is
        not normalised (never to the best entry on a board, which would move as entries arrive)."""
        return None

    def summary_reference(self, flow: str, subset: str) -> SummaryReference | None:
        """The fixed floor and ceiling declared for the board of ``flow`` and ``subset``, if any."""
        return self.summary_references.get((flow, subset))
