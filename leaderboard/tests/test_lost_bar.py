"""The WebUI lost-score bar's segments and labels (leaderboard/templatetags/bars.py)."""
from __future__ import annotations

from django.template import Context, Template

from leaderboard.templatetags.bars import LABEL_WIDTH, attempt_loss, lost_bar

PARTS = ("parse", "render", "interaction", "unmatched", "attribute")


def _parts(**values: float) -> dict[str, float]:
    return {key: values.get(key, 0.0) for key in PARTS}


def _render(aes: float, parts: dict[str, float]) -> str:
    return Template('{% include "leaderboard/_lost_bar.html" %}').render(Context({"aes": aes, "parts": parts}))


def test_a_perfect_page_reads_nothing_lost_and_has_no_part_labels():
    bar = lost_bar(100.0, _parts())
    assert bar.nothing_lost and bar.labels == []
    html = _render(100.0, _parts())
    assert "nothing lost" in html and "parse" not in html.split('title="')[1].split('"', 1)[1]
    assert 'class="seg aes"' in html and 'class="seg parse"' not in html


def test_a_part_that_lost_nothing_has_no_label_and_no_segment():
    bar = lost_bar(70.0, _parts(unmatched=30.0))
    assert [label.text for label in bar.labels] == ["unmatched 30.0%"] and not bar.nothing_lost
    html = _render(70.0, _parts(unmatched=30.0))
    assert 'class="seg unmatched"' in html
    assert all(f'class="seg {key}"' not in html for key in ("parse", "render", "interaction", "attribute"))
    assert "nothing lost" not in html


def test_each_label_is_centred_under_its_own_segment():
    # AES 20 | interaction 40 | unmatched 40 on a 220-unit strip: centres at 40 % (88) and 80 % (176);
    # "interaction 40.0%" (17 characters, 85 units) ends at 130.5, "unmatched 40.0%" (75) starts at 138.5.
    bar = lost_bar(20.0, _parts(interaction=40.0, unmatched=40.0))
    assert [(label.name, label.x, label.y) for label in bar.labels] == [
        ("interaction", "88.0", "9"), ("unmatched", "176.0", "9")]
    assert bar.rows == 1


def test_a_label_at_the_bars_end_stays_inside_it_and_still_covers_its_segments_centre():
    # unmatched is the last 4 %: centred, its label would run past the bar's right end.
    bar = lost_bar(96.0, _parts(unmatched=4.0))
    (label,) = bar.labels
    half = len(label.text) * 5.0 / 2
    assert float(label.x) == LABEL_WIDTH - half
    assert float(label.x) - half <= 0.98 * LABEL_WIDTH <= float(label.x) + half


def test_labels_that_would_overlap_go_to_the_next_row():
    # Two narrow neighbours: the second label moves down a row instead of covering the first.
    bar = lost_bar(80.0, _parts(interaction=10.0, unmatched=10.0))
    assert [label.y for label in bar.labels] == ["9", "20"] and bar.rows == 2


def test_an_attempts_breakdown_is_shown_in_percent_in_the_environments_order():
    loss = attempt_loss({"aes": 0.4, "unmatched": 0.1, "parse": 0.0, "interaction": 0.5}, "webui")
    assert loss.aes == 40.0 and list(loss.parts) == ["parse", "interaction", "unmatched"]
    assert loss.parts["interaction"] == 50.0
