"""Football's fixed floor and ceiling for the summary across environments.

The dense reward has no closed form at either end (the engine is stochastic, and the shot, pass and
scoring terms have no meaningful maximum), so the summary reads published numbers instead of any
entry on the board: the floor is the paper's Idle baseline and the ceiling the best model result the
paper reports, on the same set and flow. They are constants, so a new entry, however good, moves no
other entry's normalised score; a model above the paper's best reads above 100.

Source: MageBench (arXiv 2412.04531), Table 1 (the mini set, Football Online run 10 times per
scenario) and the appendix's Table 4 (the full set, 3 repeats); the numbers are as the paper prints
them. Measured there on the official scenarios: on another suite (the platform's own fixtures) the
same numbers are the reference, which the metric card says.
"""
from __future__ import annotations

from collections.abc import Mapping

from evaluators.declarations import FLOW_ONLINE, ReferenceScore, SummaryReference

SUMMARY_REFERENCES: Mapping[tuple[str, str], SummaryReference] = {
    (FLOW_ONLINE, "mini"): SummaryReference(
        floor=ReferenceScore(2.53, "the paper's Idle baseline on the mini set (Table 1)"),
        ceiling=ReferenceScore(21.2, "GPT-4o's mean on the mini set, the best model result the paper reports "
                                     "(Table 1)")),
    (FLOW_ONLINE, "full"): SummaryReference(
        floor=ReferenceScore(2.36, "the paper's Idle baseline on the full set (Table 4)"),
        ceiling=ReferenceScore(19.61, "Gemini-1.5-pro's mean on the full set, the best model result the paper "
                                      "reports (Table 4)")),
}
