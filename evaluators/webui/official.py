"""WebUI's official prompts, read from an operator's official checkout (never run).

Global: the rules (``WebUIEnv.system_prompt``), the Global flow's WebUI format and its text for a
left-out image. Online follows the official WebUI Online flows (``Flow/Online_Web_*.py``, see
:mod:`evaluators.webui.online_variants`): the rules, then the description, then one user turn a
round, whose texts are the extras ``code_html`` / ``code_css`` / ``code_javascript`` (templates of
``{html}``, ``{css}``, ``{javascript}``), ``refine`` (after the picture), ``no_code`` (the turn before
any code) and ``continuation`` (asked for when a reply stops inside a code block), as the "Natural"
flow has them; every other flow's own texts follow under its name (``nocot_refine``,
``mergenodes_system``, ...). The official WebUI flows have no text for an unusable reply; the
Online flow's of Sokoban and Football stands in for it, sent only by the labelled parse-retry
option, and its text for a left-out image for images past the limit.
"""
from __future__ import annotations

from evaluators.agents.checkout import OfficialCheckout, build_prompt_set
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, PromptSet
from evaluators.webui.official_flow import read_webui_online_flow
from evaluators.webui.online_variants import NATURAL, VARIANTS

ENV_FILE = "env/WebUI_env.py"
ENV_CLASS = "WebUIEnv"
TASK = "WebUI"


def official_prompt_set(checkout: OfficialCheckout, flow: str) -> PromptSet | None:
    """The texts the official harness sends to a model rebuilding a web page in ``flow``."""
    if flow not in (FLOW_GLOBAL, FLOW_ONLINE):
        return None
    system = checkout.returned_text(ENV_FILE, ENV_CLASS, "system_prompt")
    if flow == FLOW_GLOBAL:
        return checkout.global_prompt_set(system, TASK)
    online = checkout.online_flow
    return build_prompt_set(system=system, regenerate=online.regenerate, unavailable_image=online.unavailable_image,
                            extra=webui_online_flow(checkout))


def webui_online_flow(checkout: OfficialCheckout) -> dict[str, str]:
    """Checks every official WebUI Online flow's requests and reads their texts: Natural's under the
    plain names, each other flow's under its prefix where they differ from Natural's."""
    natural = _read(checkout, NATURAL)
    texts = dict(natural)
    for name, variant in VARIANTS.items():
        if name == NATURAL:
            continue
        texts.update({variant.key(key): text for key, text in _read(checkout, name).items()
                      if natural.get(key) != text})
    return texts


def _read(checkout: OfficialCheckout, name: str) -> dict[str, str]:
    variant = VARIANTS[name]
    return read_webui_online_flow(*checkout.flow_call(variant.flow_file, "OnlinePlan", "self.generate_with_continue"),
                                  variant)
