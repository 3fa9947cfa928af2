"""How the model plays an environment: its flows, its own settings and the texts and runners of each flow."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from evaluators.declarations import FLOWS, ParseResult, PromptSet, ScenarioSpec, SettingOption

if TYPE_CHECKING:
    from evaluators.agents.checkout import OfficialCheckout
    from evaluators.settings import EvaluationSettings


#: A reply parser: the reply and the action names it may hold, to what it holds.
ReplyParser = Callable[[str, Iterable[str]], ParseResult]


class FlowDeclarations:
    #: The flows it offers; the flows a submission may name are those some loaded plug-in offers.
    flows: ClassVar[tuple[str, ...]] = FLOWS
    #: The settings only this environment reads, by name, in the order a stored row lists them. Its
    #: own folder reads their values through a typed accessor over ``EvaluationSettings.options``;
    #: those declared ``variant`` label a run (``evaluators.settings.non_official_settings``).
    setting_options: ClassVar[Mapping[str, SettingOption]] = {}
    #: A model that reads no images can play: with ``observation_images`` false the episode sends
    #: the text alone and renders no frame (the form names the environments where this holds).
    text_only_runs: ClassVar[bool] = True
    #: Each flow's texts and each flow's reply parser (called with the reply and ``ACTIONS``), for a
    #: plug-in whose ``prompts`` and ``parse`` depend on the flow alone: :class:`FlowTables` answers
    #: both from them. Empty: the plug-in writes its own ``prompts`` and ``parse``.
    prompt_sets: ClassVar[Mapping[str, PromptSet]] = {}
    reply_parsers: ClassVar[Mapping[str, ReplyParser]] = {}

    def settings_refusal(self, flow: str, settings: EvaluationSettings,
                         scenarios: Sequence[ScenarioSpec]) -> str | None:
        """Why ``settings`` cannot play ``flow`` on ``scenarios`` (a submission's board), naming what
        stands in the way; None when they can. A submission is refused with it before anything is
        written, rather than every attempt failing later."""
        return None

    def official_prompts(self, checkout: OfficialCheckout, flow: str) -> PromptSet | None:
        """The texts the official harness sends in ``flow``, read from an operator's official checkout
        as data (never executed); None where the official harness has no such flow. Raises
        ``evaluators.agents.official_source.CheckoutError`` when the checkout's files are not as expected."""
        return None

    def flow_runner(self, flow: str) -> Any:
        """The function that plays ``flow`` (default: the shared Global/Online flows)."""
        from evaluators.agents.flows import FLOW_RUNNERS

        return FLOW_RUNNERS[flow]

    def opening_flow(self, flow: str) -> str:
        """The flow whose parser reads the answer to ``flow``'s first request (default: ``flow``).

        A test call of an endpoint sends that request alone and shows what the parser made of the
        answer, so it must use the parser the episode itself would have used there."""
        return flow


class FlowTables(FlowDeclarations):
    """``prompts`` and ``parse`` read from :attr:`~FlowDeclarations.prompt_sets` and
    :attr:`~FlowDeclarations.reply_parsers`. A plug-in whose texts and parser depend on the flow alone
    lists it before ``EnvironmentPlugin`` and declares the two tables instead of writing both methods
    (which stay abstract on ``EnvironmentPlugin``: every plug-in still chooses its texts and parser)."""

    # What the tables are read with, declared on EnvironmentPlugin and its scoring group.
    title: ClassVar[str]
    ACTIONS: ClassVar[tuple[str, ...]]

    def prompts(self, flow: str) -> PromptSet:
        return self.prompt_sets[self._offered(flow, self.prompt_sets)]

    def parse(self, flow: str, reply: str) -> ParseResult:
        return self.reply_parsers[self._offered(flow, self.reply_parsers)](reply, self.ACTIONS)

    def _offered(self, flow: str, table: Mapping[str, object]) -> str:
        if flow not in table:
            raise ValueError(f"{self.title} has no flow {flow!r}")
        return flow
