"""WebUI's lost-score components as the pages show them: what each is called and its colour.

The components are the parts of ``details["breakdown"]`` (``evaluators.webui.env.breakdown``); the
shared pages read their names and colours from the plug-in's ``breakdown_parts``.
"""
from __future__ import annotations

from evaluators.base import BreakdownPart

BREAKDOWN_PARTS: tuple[BreakdownPart, ...] = (
    BreakdownPart("parse", "unparsable replies", "#8c2d2d"),
    BreakdownPart("render", "pages that failed to load", "#c0582b"),
    BreakdownPart("interaction", "failed interactions", "#d9a21b"),
    BreakdownPart("unmatched", "unmatched target elements", "#7c8ba1"),
    BreakdownPart("attribute", "attribute mismatches", "#4d7cc9"),
)
