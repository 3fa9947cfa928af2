"""The official harness's four WebUI Online flows (``main_WebUI_online.py --webui_online_type``).

Every one starts from a Global generation and refines it round after round; they differ in what a
round shows the model and in the texts that ask for the change:

- Natural (``Flow/Online_Web_CoT_Natural.py``): the rules and the description, then the current code,
  a screenshot of the current render and a request to analyse the difference before rewriting.
- NoCoT (``Flow/Online_Web_NoCoT.py``): the same request without the step-by-step analysis.
- NoIMG (``Flow/Online_Web_CoT_NoImg.py``): no screenshot; the model checks its code against the
  description alone.
- MergeNoDes (``Flow/Online_Web_CoT_MergeNoDes.py``): no description and rules of its own; the
  screenshot is stacked under the description's second part, which must be an image (the target
  page), in one picture.

The texts of each come from the run's prompt set: Natural's under the plain names (``refine``,
``no_code``, ...), another flow's under its name and an underscore (``nocot_refine``) wherever they
differ from Natural's, MergeNoDes's rules as ``mergenodes_system``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from evaluators.base import PromptSet

NATURAL = "natural"
NOCOT = "nocot"
NOIMG = "noimg"
MERGENODES = "mergenodes"

#: The texts every round of every flow uses, read under the flow's prefix when it has its own.
ROUND_TEXTS = ("code_html", "code_css", "code_javascript", "refine", "no_code", "continuation")

Picture = Literal["screenshot", "merged", ""]


@dataclass(frozen=True)
class OnlineVariant:
    #: The value of the setting ``webui_online_flow``.
    name: str
    #: The official runner's ``--webui_online_type``.
    official: str
    #: The official flow's file in a checkout.
    flow_file: str
    #: The conversation opens with the environment's rules and the task description; else with the
    #: flow's own rules alone (``mergenodes_system``).
    described: bool
    #: What a round shows between the code and the request: the current render, the description's
    #: image (its second part) stacked over it, or nothing.
    picture: Picture
    #: One line for the metric card.
    summary: str

    def key(self, text: str) -> str:
        """The prompt-set name of this flow's own ``text`` (Natural's are the plain names)."""
        return text if self.name == NATURAL else f"{self.name}_{text}"

    def texts(self, prompts: PromptSet) -> dict[str, str]:
        """The round texts this flow sends, from ``prompts`` (its own where it has them, else Natural's),
        with its opening rules as ``system``."""
        extra: Mapping[str, str] = prompts.extra
        texts = {name: extra.get(self.key(name), extra[name]) for name in ROUND_TEXTS}
        texts["system"] = prompts.system if self.described else extra[self.key("system")]
        return texts


VARIANTS: dict[str, OnlineVariant] = {variant.name: variant for variant in (
    OnlineVariant(NATURAL, "Natural", "Flow/Online_Web_CoT_Natural.py", described=True, picture="screenshot",
                  summary="the rules and the description, then the current code, a screenshot of its render and "
                          "a request to analyse the difference step by step before rewriting"),
    OnlineVariant(NOCOT, "NoCoT", "Flow/Online_Web_NoCoT.py", described=True, picture="screenshot",
                  summary="as natural, but the request asks for the rewrite without the step-by-step analysis"),
    OnlineVariant(NOIMG, "NoIMG", "Flow/Online_Web_CoT_NoImg.py", described=True, picture="",
                  summary="as natural, but no screenshot: the model checks its code against the description alone"),
    OnlineVariant(MERGENODES, "MergeNoDes", "Flow/Online_Web_CoT_MergeNoDes.py", described=False, picture="merged",
                  summary="no description and rules of its own; one picture, the image right after the "
                          "description's opening text (the target page) over the current render; only pages whose "
                          "description has such an image can run it"),
)}


def online_variant(name: str) -> OnlineVariant:
    return VARIANTS[name]
