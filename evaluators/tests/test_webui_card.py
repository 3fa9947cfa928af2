"""The WebUI metric card states the official rules, the labelled variant and every known deviation."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import pytest
from django.urls import reverse

from evaluators.webui.card import METRIC_CARD

REPORT = Path(__file__).resolve().parents[2] / "bench" / "reports" / "webui_fidelity.md"
VIEWPORT_REPORT = REPORT.with_name("webui_viewport.md")


def text(section: str) -> str:
    return " ".join(item if isinstance(item, str) else " ".join(item) for item in cast(list[Any], METRIC_CARD[section]))


def test_the_card_says_every_element_counts_in_every_state_and_names_the_variant_setting():
    assert "every target element is scored in every state" in text("terms")
    assert "webui_exclude_unchanged=true" in text("variants") and "off by default" in text("variants")


def test_the_variant_numbers_on_the_card_are_the_means_of_the_fidelity_report():
    report = REPORT.read_text(encoding="utf-8")
    means = {title: re.findall(r"\| \*\*mean\*\* \| ([\d.]+) \| ([\d.]+) \|", block)[0]
             for title, block in re.findall(r"## Reply: ([^\n]+)\n(.*?)(?=\n## |\Z)", report, re.S)}
    variant = text("variants")
    for reply in ("degraded", "renamed ids"):
        official, exclude = means[reply]
        assert f"{official} official vs {exclude}" in variant or f"{official} vs {exclude}" in variant, reply
    assert "Pages with targets compared on url(...) values: none." in report
    assert "among the fixture pages it finds none" in text("quirks")


def test_the_card_gives_the_viewport_and_its_reason_and_lists_the_deviations_of_this_work():
    facts, deviations = text("facts"), text("deviations")
    assert "1920×1080 viewport" in facts and "headless mode" in facts and "1920×937" in facts
    for topic in ("'file not found' page", "layout sizes", "display:none", "regenerating up to 3 times",
                  "write_t", "Hoodie3"):
        assert topic in deviations, topic


def test_the_937_px_viewport_is_a_variant_whose_numbers_on_the_card_are_those_of_its_report():
    report = VIEWPORT_REPORT.read_text(encoding="utf-8")
    perfect_1080, perfect_937, degraded_1080, degraded_937 = re.findall(
        r"\| \*\*mean\*\* \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", report)[0]
    variants = text("variants")
    assert "webui_viewport_937=true" in variants and "off by default" in variants
    assert perfect_1080 == perfect_937 == "100.00" and "a perfect copy scores 100 at both heights" in variants
    assert f"{degraded_1080} at 1080 vs {degraded_937} at 937" in variants
    assert "webui_viewport_937=true" in text("facts")


def test_the_card_says_what_runs_on_virtual_time_and_when_and_where_a_page_falls_back_to_the_real_clock():
    browser = text("browser")
    for topic in ("virtual clock", "no 1 ms minimum", "at least 4 ms", "setInterval(changeTime)", "busy loop",
                  "2 s behind the wall clock", "rendered again from the start on the real clock",
                  "same kind of clock", "clock_fallback", "stopped by the watchdog"):
        assert topic in browser, topic


@pytest.mark.django_db
def test_the_metric_card_page_shows_the_variants(client):
    page = client.get(reverse("metric-card", args=["webui"])).content.decode()
    assert "Labelled variants (never the default)" in page and "webui_exclude_unchanged" in page
    assert "webui_viewport_937" in page
