"""The Football metric card states every rule the code applies, the non-default variant and the
remaining deviations from the official code, each with its measured effect."""
from typing import Any, cast

from evaluators.football.card import METRIC_CARD
from evaluators.football.options import SHOT_HELD_SETTING


def _text(section: str) -> str:
    return " ".join(item if isinstance(item, str) else " ".join(item) for item in cast(list[Any], METRIC_CARD[section]))


def test_the_card_states_the_step_order_the_shot_samples_and_the_auto_rendering_rules():
    terms, facts = _text("terms"), _text("facts")
    assert "first step on which the ball is loose" in terms and "save or catch" in terms
    assert "k/100" in terms and "k = 1 … 100" in terms and "not a sample" in terms
    assert "1 − ball.x < 0.3" in terms
    assert "S_stolen (tested with the shot flag as the previous step left it)" in facts
    assert "third decision at the earliest" in facts and "right at first" in facts
    assert "only after each pair" in facts
    assert "red and blue swapped" in facts


def test_the_card_lists_the_variant_and_every_known_deviation_with_its_measured_effect():
    quirks, deviations = _text("quirks"), _text("deviations")
    assert SHOT_HELD_SETTING in deviations and "off by default" in deviations and "never ranked" in deviations
    assert "27 of 120" in quirks and "27 of 120" in deviations
    assert "mean absolute difference" in deviations  # rendering only the frames the model sees
    assert "gfootball 2.10.2" in deviations and "Mesa" in deviations
    assert "rounded to 6 decimals" in deviations
    assert "57 of 120" in _text("facts")  # the previous platform rules, for older attempts
