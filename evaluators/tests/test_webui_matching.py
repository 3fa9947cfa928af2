"""WebUI AES: GIoU, the match score and the assignment of targets to generated elements (reference §2.4)."""
from __future__ import annotations

import pytest

from evaluators.webui.elements import Element
from evaluators.webui.matching import (
    FILTER_ERROR,
    FILTER_FAIL,
    FILTER_PASS,
    PENALTY,
    cost_matrix,
    filter_value,
    giou,
    intersection_area,
    match_elements,
    match_score,
    pixel_area,
    position_similarity,
    select_targets,
)


def element(xpath: str, rect: tuple[float, float, float, float], text: str = "", *,
            filter_by: str | None = None, evalby: str = "", styles: dict[str, str] | None = None,
            descendants: int = 0) -> Element:
    attributes = {}
    if filter_by is not None:
        attributes["data-filter-by"] = filter_by
        attributes["data-evalby"] = evalby
    return Element(index=0, tag="div", rect=rect, text=text, attributes=attributes, styles=styles or {},
                   descendants=descendants, outer_html=f"<div>{text}</div>", xpath=xpath)


# --- geometry ----------------------------------------------------------------------------------


def test_box_areas_use_the_plus_one_pixel_convention():
    # (9 − 0 + 1) · (4 − 0 + 1) = 50
    assert pixel_area((0, 0, 9, 4)) == 50


def test_giou_of_identical_boxes_is_one():
    assert giou((0, 0, 9, 9), (0, 0, 9, 9)) == 1.0


def test_giou_of_overlapping_boxes_by_hand():
    # areas 10·10 = 100 each; intersection (9 − 5 + 1)² = 25; union 175; hull (0,0,14,14) = 15² = 225
    # 25/175 − (225 − 175)/225 = 1/7 − 2/9 = −5/63
    assert giou((0, 0, 9, 9), (5, 5, 14, 14)) == pytest.approx(-5 / 63)


def test_giou_of_disjoint_boxes_by_hand():
    # intersection 0; union 200; hull (0,0,29,9) = 30·10 = 300 → 0 − 100/300 = −1/3
    assert giou((0, 0, 9, 9), (20, 0, 29, 9)) == pytest.approx(-1 / 3)


def test_boxes_less_than_a_pixel_apart_still_intersect():
    # width 9 − 9.5 + 1 = 0.5, height 10 → 5
    assert intersection_area((0, 0, 9, 9), (9.5, 0, 19.5, 9)) == 5.0


def test_position_term_of_a_box_inside_another_is_one():
    # intersection = inner area 4·4 = 16 = min area → 0.5 + 0.5·1
    assert position_similarity((0, 0, 9, 9), (2, 2, 5, 5)) == 1.0


def test_position_term_of_partly_overlapping_boxes_is_relative_to_the_smaller_box():
    # intersection 5·10 = 50, min area 100 → 0.5 + 0.5·0.5 = 0.75
    assert position_similarity((0, 0, 9, 9), (5, 0, 14, 9)) == 0.75


def test_position_term_of_disjoint_boxes_is_the_rescaled_giou():
    # (−1/3 + 1)/2 = 1/3
    assert position_similarity((0, 0, 9, 9), (20, 0, 29, 9)) == pytest.approx(1 / 3)


# --- match score -------------------------------------------------------------------------------


def test_filter_value_is_zero_minus_one_or_minus_a_hundredth():
    target = element("/t", (0, 0, 10, 10), "Go", filter_by="text")
    assert filter_value(target, element("/g", (0, 0, 10, 10), "go")) == FILTER_PASS == 0
    assert filter_value(target, element("/g", (0, 0, 10, 10), "Stop")) == FILTER_FAIL == -1
    colour_target = element("/t", (0, 0, 10, 10), filter_by="color", styles={"color": "rgb(0, 0, 0)"})
    assert filter_value(colour_target, element("/g", (0, 0, 10, 10), styles={"color": "none"})) == FILTER_ERROR == -0.01


def test_match_score_subtracts_a_hundred_thousandth_per_descendant():
    target = element("/t", (0, 0, 10, 10), "Go", filter_by="text")
    generated = element("/g", (0, 0, 10, 10), "Go", descendants=3)
    # GIoU 1 + filter 0 − 3·1e-5
    assert match_score(target, generated) == pytest.approx(1 - 3e-5)


def test_scores_below_minus_one_cost_the_penalty():
    target = element("/t", (0, 0, 10, 10), "Go", filter_by="text")
    near_wrong = element("/a", (0, 0, 10, 10), "Stop")    # 1 − 1 = 0 → cost 0
    far_wrong = element("/b", (500, 500, 10, 10), "Stop")  # GIoU ≈ −0.99, − 1 → < −1 → penalty
    cost = cost_matrix([target], [near_wrong, far_wrong])
    assert cost[0, 0] == 0.0
    assert cost[0, 1] == PENALTY


# --- target selection ------------------------------------------------------------------------------


def test_only_elements_with_a_usable_filter_become_target_candidates():
    plain = element("/plain", (0, 0, 10, 10), "x")
    good = element("/good", (0, 0, 10, 10), "x", filter_by="text")
    unknown = element("/unknown", (0, 0, 10, 10), "x", filter_by="background")
    shadow = element("/shadow", (0, 0, 10, 10), "x", filter_by="box-shadow")
    selection = select_targets([plain, good, unknown, shadow])
    assert selection.candidates == [good]
    assert [(d.element.xpath, d.reason) for d in selection.dropped] == [
        ("/unknown", "unknown filter method"), ("/shadow", "no filter function")]


@pytest.mark.parametrize("name", ["text-shadow", "background-size", "background-linear-gradient", "box-shadow"])
def test_targets_filtering_by_a_property_without_filter_function_are_dropped(name):
    selection = select_targets([element("/t", (0, 0, 10, 10), filter_by=name)])
    assert selection.candidates == []
    assert selection.dropped[0].reason == "no filter function"


def test_targets_outside_the_considered_xpaths_are_excluded():
    a = element("/a", (0, 0, 10, 10), "a", filter_by="text")
    b = element("/b", (0, 20, 10, 10), "b", filter_by="text")
    selection = select_targets([a, b], considered={"/b"})
    assert selection.candidates == [b]
    assert selection.excluded == [a]


# --- assignment --------------------------------------------------------------------------------


def test_every_target_finds_its_counterpart_on_an_identical_page():
    targets = [element(f"/t{i}", (0, 20 * i, 50, 10), f"item {i}", filter_by="text") for i in range(3)]
    generated = [element(f"/g{i}", (0, 20 * i, 50, 10), f"item {i}") for i in range(3)]
    matching = match_elements(targets, generated)
    pairs = [(m.target.xpath, m.generated.xpath) for m in matching.matches]
    assert pairs == [("/t0", "/g0"), ("/t1", "/g1"), ("/t2", "/g2")]
    assert matching.unmatched == [] and matching.dropped == []


def test_with_more_targets_than_generated_elements_the_leftovers_are_unmatched():
    targets = [element("/t0", (0, 0, 50, 10), "one", filter_by="text"),
               element("/t1", (0, 20, 50, 10), "two", filter_by="text")]
    generated = [element("/g", (0, 20, 50, 10), "two")]
    matching = match_elements(targets, generated)
    assert [(m.target.xpath, m.generated.xpath) for m in matching.matches] == [("/t1", "/g")]
    assert [t.xpath for t in matching.unmatched] == ["/t0"]


def test_a_target_assignable_only_at_penalty_cost_is_dropped():
    targets = [element("/near", (0, 0, 50, 10), "Title", filter_by="text"),
               element("/far", (900, 900, 50, 10), "Footer", filter_by="text")]
    generated = [element("/g0", (0, 0, 50, 10), "Title"), element("/g1", (0, 20, 50, 10), "Other")]
    # /far against either generated element: GIoU ≈ −0.99 plus a failed filter → below −1 → penalty
    matching = match_elements(targets, generated)
    assert [m.target.xpath for m in matching.matches] == ["/near"]
    assert matching.unmatched == []
    assert [(d.element.xpath, d.reason) for d in matching.dropped] == [("/far", "penalty-only assignment")]


def test_a_failing_filter_still_matches_a_perfectly_overlapping_element():
    target = element("/t", (0, 0, 50, 10), "Hello", filter_by="text")
    generated = element("/g", (0, 0, 50, 10), "Bye")
    # s = 1 − 1 = 0 ≥ −1 → cost 0 ≤ 1 → a match (scored on its attributes later)
    matching = match_elements([target], [generated])
    assert len(matching.matches) == 1
    assert matching.matches[0].filter == FILTER_FAIL
    assert matching.matches[0].score == 0.0


def test_nested_elements_sharing_a_box_go_to_the_one_with_fewer_descendants():
    target = element("/t", (0, 0, 100, 40), "Go", filter_by="text")
    outer = element("/div", (0, 0, 100, 40), "Go", descendants=2)
    middle = element("/div/a", (0, 0, 100, 40), "Go", descendants=1)
    inner = element("/div/a/span", (0, 0, 100, 40), "Go", descendants=0)
    matching = match_elements([target], [outer, middle, inner])
    assert matching.matches[0].generated.xpath == "/div/a/span"
    # s = 1 + 0 − 0·1e-5
    assert matching.matches[0].score == 1.0


def test_the_assignment_minimises_the_total_cost_rather_than_matching_greedily():
    # t0 fits g0 slightly better than g1, but t1 only fits g0; the optimum gives g0 to t1.
    t0 = element("/t0", (0, 0, 100, 10), "x", filter_by="has_text")
    t1 = element("/t1", (0, 0, 100, 10), "y", filter_by="text")
    g0 = element("/g0", (0, 0, 100, 10), "y")
    g1 = element("/g1", (0, 0, 100, 11), "z")
    matching = match_elements([t0, t1], [g0, g1])
    assert {(m.target.xpath, m.generated.xpath) for m in matching.matches} == {("/t0", "/g1"), ("/t1", "/g0")}


def test_no_generated_elements_leaves_every_target_unmatched():
    targets = [element("/t", (0, 0, 10, 10), "x", filter_by="text")]
    matching = match_elements(targets, [])
    assert matching.matches == [] and [t.xpath for t in matching.unmatched] == ["/t"]
