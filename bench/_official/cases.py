"""The flows compared, and the fixture scenario each is played on."""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._official.replies import FOOTBALL_ONLINE, SOKOBAN_GLOBAL, SOKOBAN_ONLINE, WEBUI_GLOBAL, WEBUI_ONLINE, Script
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, ScenarioSpec, get_plugin

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "magebench"
RESOURCES = FIXTURES / "resources"


@dataclass(frozen=True)
class Case:
    name: str
    env: str
    flow: str
    #: The experiment scripts' values (scripts/experiments/<Env>/<Flow>/*.sh), given to both sides.
    values: Mapping[str, int]
    script: Script
    #: Football frames: compared by size only.
    size_only: bool = False
    #: The environment's engine is stochastic (request counts may differ from run to run).
    stochastic: bool = False
    #: Further platform runs compared with the same official requests: (short name, platform settings).
    variants: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    #: WebUI Online: the official runner's ``--webui_online_type``.
    official_online_type: str = "Natural"
    #: Platform settings of every platform run of the case (the variants' are added to them).
    platform: Mapping[str, Any] = field(default_factory=dict)


CASES: tuple[Case, ...] = (
    Case("sokoban-global", "sokoban", FLOW_GLOBAL,
         {"resolution": 640, "max_image": 1, "max_tokens": 1000}, SOKOBAN_GLOBAL),
    Case("sokoban-online", "sokoban", FLOW_ONLINE,
         {"resolution": 640, "max_image": 1, "max_memory": 5, "max_loop": 50, "max_tokens": 300}, SOKOBAN_ONLINE),
    Case("webui-global", "webui", FLOW_GLOBAL,
         {"resolution": 1920, "max_image": 10, "max_tokens": 4000}, WEBUI_GLOBAL),
    Case("football-online", "football", FLOW_ONLINE,
         {"resolution": 1280, "max_image": 1, "max_memory": 5, "max_loop": 400, "max_tokens": 1000},
         FOOTBALL_ONLINE, size_only=True, stochastic=True),
    Case("webui-online", "webui", FLOW_ONLINE,
         {"resolution": 1920, "max_image": 10, "max_loop": 4, "max_tokens": 4000}, WEBUI_ONLINE,
         # The labelled paper-era variant, whose page fills the whole 1920×1080 window where the
         # official runner's page gets 1920×937 of it under today's headless Chromium.
         variants=(("1080", {"webui_viewport_1080": True}),)),
    # The official harness's other WebUI Online flows, each against the platform's labelled
    # webui_online_flow, in the default viewport, the one the official runner's browser gives the page today.
    *(Case(f"webui-online-{name}", "webui", FLOW_ONLINE,
           {"resolution": 1920, "max_image": 10, "max_loop": 4, "max_tokens": 4000}, WEBUI_ONLINE,
           official_online_type=official, platform={"webui_online_flow": name})
      for name, official in (("nocot", "NoCoT"), ("noimg", "NoIMG"), ("mergenodes", "MergeNoDes"))),
)
OFFICIAL_ENV = {"sokoban": "Sokoban", "football": "Football", "webui": "WebUI"}
OFFICIAL_FLOW = {FLOW_GLOBAL: "Global", FLOW_ONLINE: "Online"}


def official_loadable(env: str, entry: str) -> bool:
    """Whether the official runner can load this resource: it loads a Football scenario file on its
    own (no package around it), so a file written as gfootball's scenarios are (``from . import *``)
    fails there."""
    if env != "football":
        return True
    text = (FIXTURES / entry).read_text(encoding="utf-8")
    return not re.search(r"^\s*from\s+\.", text, re.MULTILINE)


def pick_scenario(env: str) -> tuple[str, str]:
    """The first scenario of the mini list the official runner can load (else of the full list):
    its resources entry ("resources/Sokoban/1-....pkl") and why it was picked."""
    name = OFFICIAL_ENV[env]
    for subset in ("mini", "all"):
        entries = json.loads((RESOURCES / f"{name}_{subset}.json").read_text(encoding="utf-8"))
        for position, entry in enumerate(entries):
            if official_loadable(env, entry):
                if subset == "mini" and position == 0:
                    return entry, f"first of {name}_mini.json"
                skipped = f"; every {name}_mini.json scenario imports relatively (from . import *), " \
                          "which the official loader cannot" if subset == "all" else ""
                return entry, f"#{position + 1} of {name}_{subset}.json{skipped}"
    raise SystemExit(f"no {name} scenario the official runner can load")


def platform_spec(env: str, entry: str) -> ScenarioSpec:
    key = Path(entry).stem if env != "webui" else Path(entry).name
    for item in get_plugin(env).discover(RESOURCES, verify=False):
        if item.key == key:
            return ScenarioSpec(env=env, key=item.key, data=item.data, resource_path=item.resource_file)
    raise SystemExit(f"the {env} plug-in finds no scenario {key!r} in {RESOURCES}")
