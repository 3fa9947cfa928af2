"""How the site shows an environment: its place on the boards, its analysis sections and its own
panel on a replay."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from evaluators.declarations import AnalysisPanel, ReplayPanel


class PageDeclarations:
    #: The environment's URL name, which the default replay panel checks artefacts against (declared
    #: by the plug-in itself, ``EnvironmentPlugin.slug``).
    slug: ClassVar[str]
    #: How the score reads in the overview's legend; empty: ``score_label``.
    score_hint: ClassVar[str] = ""
    #: Where the environment's boards, columns and links go (lowest first).
    position: ClassVar[int] = 9
    #: Scenario tags the analysis page breaks scores down by: (tag name, heading); "key" is the
    #: scenario's own key.
    tag_groups: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: A score with an absolute meaning to fail against (a scenario's mean below it is failed);
    #: None fails scenarios relative to the board's median.
    fail_threshold: ClassVar[float | None] = None
    #: The environment's own sections of the analysis page, after the tag tables, in this order.
    analysis_panels: ClassVar[tuple[AnalysisPanel, ...]] = ()
    #: The template of the environment's own replay panel, included in the replay page above the
    #: shared timeline (its context: the attempt, its trajectory and :meth:`replay_panel`'s);
    #: None shows the shared timeline only.
    replay_template: ClassVar[str | None] = None
    #: Static files (paths under the static root) the replay panel loads, in order.
    replay_scripts: ClassVar[tuple[str, ...]] = ()
    #: Style sheets (paths under the static root) the replay panel loads after the site's own, in order.
    replay_styles: ClassVar[tuple[str, ...]] = ()

    def replay_panel(self, artifacts: Mapping[str, Any], read_artifact: Callable[[str], Any]) -> ReplayPanel | None:
        """The environment's own panel on an attempt's replay page, or None.

        ``artifacts`` is the trajectory's artefact index (what :meth:`Episode.save_artifacts`
        returned); ``read_artifact(name)`` reads a JSON file stored beside the trajectory (None if
        missing or unreadable). By default the panel is :attr:`replay_template` with
        :attr:`replay_scripts` and :attr:`replay_styles`, shown when the artefacts are this environment's.
        """
        if self.replay_template is None or artifacts.get("kind") != self.slug:
            return None
        return ReplayPanel(template=self.replay_template, scripts=self.replay_scripts, styles=self.replay_styles)
