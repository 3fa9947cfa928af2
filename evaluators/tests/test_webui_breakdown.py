"""The lost-score composition adds up to 100% with AES, whatever went wrong."""
from types import SimpleNamespace

import pytest

from evaluators.webui.env import breakdown


def _aes(aes, attribute, unmatched, interaction, weight=10.0):
    return SimpleNamespace(aes=aes, attribute_loss=attribute, unmatched_loss=unmatched,
                           interaction_loss=interaction, weight_sum=weight)


def test_a_parse_error_loses_everything_to_parsing():
    assert breakdown(None, parse_error=True, render_error=False) == {
        "aes": 0.0, "parse": 1.0, "render": 0.0, "interaction": 0.0, "unmatched": 0.0, "attribute": 0.0}


def test_a_rendered_page_splits_its_loss_by_cause():
    result = breakdown(_aes(0.5, 0.2, 0.1, 0.2), parse_error=False, render_error=False)
    assert result == {"aes": 0.5, "parse": 0.0, "render": 0.0, "interaction": 0.2, "unmatched": 0.1,
                      "attribute": 0.2}
    assert sum(result.values()) == pytest.approx(1.0)


def test_a_page_broken_on_load_counts_everything_but_failed_actions_as_render():
    result = breakdown(_aes(0.5, 0.2, 0.1, 0.2), parse_error=False, render_error=True)
    assert result["render"] == pytest.approx(0.3) and result["interaction"] == 0.2
    assert result["unmatched"] == result["attribute"] == 0.0
    assert sum(result.values()) == pytest.approx(1.0)


def test_a_page_with_no_scorable_weight_loses_everything_to_its_cause():
    assert breakdown(_aes(0.0, 0.0, 0.0, 0.0, weight=0.0), parse_error=False, render_error=True)["render"] == 1.0
    assert breakdown(_aes(0.0, 0.0, 0.0, 0.0, weight=0.0), parse_error=False, render_error=False)["unmatched"] == 1.0
