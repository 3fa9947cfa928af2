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
OFFICIAL_REPORT = REPORT.with_name("webui_official_aes.md")


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
    assert "viewport 1920×937" in report.splitlines()[0]


def test_each_pages_change_quoted_by_the_exclusion_variant_is_a_row_of_the_fidelity_report():
    report = REPORT.read_text(encoding="utf-8")
    rows = set(re.findall(r"\| ([^|\n]+) \| ([\d.]+) \| ([\d.]+) \| [+-][\d.]+ \|", report))
    [exclusion] = [item for item in cast(list[str], METRIC_CARD["variants"]) if "webui_exclude_unchanged" in item]
    quoted = re.findall(r"\(([^()]+?) ([\d.]+) → ([\d.]+)\)", exclusion)
    assert len(quoted) == 3
    for page, official, exclude in quoted:
        assert (page, official, exclude) in rows, page


def test_the_card_gives_the_viewport_and_its_reason_and_lists_the_deviations_of_this_work():
    facts, deviations = text("facts"), text("deviations")
    assert "1920×937 viewport by default" in facts and "headless mode" in facts and "1920×1080 window" in facts
    for topic in ("'file not found' page", "layout sizes", "display:none", "regenerating up to 3 times",
                  "write_t", "Hoodie3"):
        assert topic in deviations, topic


def test_the_paper_era_1080_px_viewport_is_a_variant_whose_numbers_on_the_card_are_those_of_its_report():
    report = VIEWPORT_REPORT.read_text(encoding="utf-8")
    assert "| page | perfect 937 | perfect 1080 | degraded 937 | degraded 1080 |" in report
    rows = {page: values for page, *values in re.findall(
        r"\| ([^|\n]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| [+-][\d.]+ \|", report)}
    perfect_937, perfect_1080, degraded_937, degraded_1080 = rows["**mean**"]
    variants = text("variants")
    assert "webui_viewport_1080=true" in variants and "off by default" in variants
    assert perfect_937 == perfect_1080 == "100.00" and "a perfect copy scores 100 at both heights" in variants
    assert f"{degraded_937} at 937 vs {degraded_1080} at 1080" in variants
    [viewport] = [item for item in cast(list[str], METRIC_CARD["variants"]) if "webui_viewport_1080" in item]
    quoted = re.findall(r"\(([^()]+?) ([\d.]+) → ([\d.]+)\)", viewport)
    assert len(quoted) == 2
    for page, at_937, at_1080 in quoted:
        assert rows[page][2:] == [at_937, at_1080], page
    assert "webui_viewport_1080=true" in text("facts")


def test_the_official_evaluators_scores_on_the_card_are_those_of_its_report_and_equal_the_defaults():
    report = OFFICIAL_REPORT.read_text(encoding="utf-8")
    assert "window 1920×1080, page viewport 1920×937" in report
    rows = {(page, reply): (official, at_937, same_937, at_1080) for page, reply, official, at_937, same_937, at_1080
            in re.findall(r"\| ([^|\n]+) \| (degraded|no index) \| ([\d.]+) \| ([\d.]+) \| (yes|no) \| ([\d.]+) \|",
                          report)}
    [checked] = [fact for fact in cast(list[str], METRIC_CARD["facts"]) if fact.startswith("Checked against")]
    listing = re.search(r"\(all styles removed[^)]*\): (.*?); the same in both", checked)
    assert listing is not None
    quoted = [item.rsplit(" ", 1) for item in listing.group(1).split(", ")]
    assert len(quoted) >= 6
    for page, score in quoted:
        official, at_937, same, _ = rows[(page, "degraded")]
        assert score == official == at_937 and same == "yes", page
    # the paper-era viewport's scores beside the official ones, all from the report
    differ = sum(rows[(page, "degraded")][3] != score for page, score in quoted)
    assert f"{differ} of the {len(quoted)} differ" in checked
    official, _, _, at_1080 = rows[("star-rating", "degraded")]
    assert f"star-rating scores {at_1080} where the official evaluator gives {official}" in checked
    error_pages = sorted(float(official) for (_, reply), (official, *_) in rows.items() if reply == "no index")
    assert f"{error_pages[0]:.2f} to {error_pages[-1]:.2f} on {len(error_pages)} fixture pages" in text("deviations")


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
    assert "webui_viewport_1080" in page
