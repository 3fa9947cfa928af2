"""The limits an operator sets for the browser that evaluates model-written pages, and the
environment's other declarations about the site around it: its demo baselines and its paper rows."""
from __future__ import annotations

from collections.abc import Mapping

from evaluators.base import DemoBaselines, OperatorSetting, OperatorSettings, OptionValue, PaperRows
from evaluators.browser import EvaluationPolicy, set_evaluation_policy

PAGE_MEMORY_MB = "MAGEBENCH_WEBUI_PAGE_MEMORY_MB"
PAGE_CPU_SECONDS = "MAGEBENCH_WEBUI_PAGE_CPU_SECONDS"
REQUIRE_NETWORK_NAMESPACE = "MAGEBENCH_WEBUI_REQUIRE_NETWORK_NAMESPACE"


def apply_limits(values: Mapping[str, OptionValue]) -> None:
    """Hand the operator's limits to the evaluation browser of this process."""
    set_evaluation_policy(EvaluationPolicy(
        page_memory_mb=int(values[PAGE_MEMORY_MB]),
        page_cpu_seconds=float(values[PAGE_CPU_SECONDS]),
        require_network_namespace=bool(values[REQUIRE_NETWORK_NAMESPACE]),
        waiver=f"set {REQUIRE_NETWORK_NAMESPACE}=false"))


# Per-page caps on a renderer's resident memory (MiB) and CPU time (seconds), an overrun being a
# render error, and whether the browser must have its own network namespace: production refuses to
# fall back to the flag layer alone unless the operator says so (the README's settings table).
OPERATOR_SETTINGS = OperatorSettings(settings=(
    OperatorSetting(PAGE_MEMORY_MB, int, 1024),
    OperatorSetting(PAGE_CPU_SECONDS, float, 30.0),
    OperatorSetting(REQUIRE_NETWORK_NAMESPACE, bool, False, production_default=True),
), apply=apply_limits)

#: The demo's oracles read each target page's own files from the fixture resources.
DEMO_BASELINES = DemoBaselines(oracle_resources=("WebUI",))

#: Table 1: mini set, 3 repeats; Table 4: full set, 3 repeats, δ 0.8 (one flow in that table).
PAPER_ROWS = PaperRows(column="WebUI", repeats={"mini": 3, "full": 3},
                       uncertainty={("global", "full"): 0.8, ("online", "full"): 0.8})
