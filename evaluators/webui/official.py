"""WebUI's official prompts, read from an operator's official checkout (never run).

Global: the rules (``WebUIEnv.system_prompt``), the Global flow's WebUI format and its text for a
left-out image. Online follows the official "Natural" WebUI flow (Flow/Online_Web_CoT_Natural.py):
the rules, then the description, then one user turn a round, whose texts are the extras
``code_html`` / ``code_css`` / ``code_javascript`` (templates of ``{html}``, ``{css}``,
``{javascript}``), ``refine`` (after the screenshot), ``no_code`` (the turn before any code) and
``continuation`` (asked for when a reply stops inside a code block). The official WebUI flows have
no text for an unusable reply; the Online flow's of Sokoban and Football stands in for it, sent only
by the labelled parse-retry option, and its text for a left-out image for images past the limit.
"""
from __future__ import annotations

from evaluators.agents.checkout import OfficialCheckout, build_prompt_set
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, PromptSet
from evaluators.webui.official_flow import read_webui_online_flow

ENV_FILE = "env/WebUI_env.py"
ENV_CLASS = "WebUIEnv"
TASK = "WebUI"
ONLINE_FLOW = "Flow/Online_Web_CoT_Natural.py"


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
    """Checks the official WebUI Online flow's requests and reads its texts: the code templates
    (``code_html``, ``code_css``, ``code_javascript``), ``refine``, ``no_code`` and ``continuation``."""
    return read_webui_online_flow(*checkout.flow_call(ONLINE_FLOW, "OnlinePlan", "self.generate_with_continue"))
