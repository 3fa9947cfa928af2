"""The WebUI metric card states the official rules, the labelled variant and every known deviation."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import pytest
from django.urls import reverse

from evaluators.webui.card import METRIC_CARD

REPORT = Path(__file__).resolve().parents[2] / "bench" / "reports" / "webui_fidelity.md"


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


@pytest.mark.django_db
def test_the_metric_card_page_shows_the_variants(client):
    page = client.get(reverse("metric-card", args=["webui"])).content.decode()
    assert "Labelled variants (never the default)" in page and "webui_exclude_unchanged" in page
