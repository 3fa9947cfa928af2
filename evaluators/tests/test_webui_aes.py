"""WebUI AES: element scores, state scores, the interaction rule and the lost-score breakdown (reference §2.4)."""
from __future__ import annotations

import json
import random

import pytest

from evaluators.webui.aes import element_score, score_page, score_state
from evaluators.webui.elements import CSS_PROPERTIES, Element, PageState

BETA = 0.8987018465995789


def element(xpath: str, rect: tuple[float, float, float, float], text: str = "", *,
            filter_by: str | None = None, evalby: str = "", styles: dict[str, str] | None = None,
            descendants: int = 0, attributes: dict[str, str] | None = None, outer_html: str | None = None) -> Element:
    attrs = dict(attributes or {})
    if filter_by is not None:
        attrs["data-filter-by"] = filter_by
        attrs["data-evalby"] = evalby
    return Element(index=0, tag="div", rect=rect, text=text, attributes=attrs, styles=styles or {},
                   descendants=descendants, outer_html=outer_html or f"<div>{text}</div>", xpath=xpath)


# --- element score -----------------------------------------------------------------------------


def test_element_score_of_a_two_property_element_by_hand():
    target = element("/t", (0, 0, 100, 50), "x", filter_by="text", evalby="color|font-size",
                     styles={"color": "rgb(255, 0, 0)", "font-size": "16px"})
    generated = element("/g", (0, 0, 100, 50), "x", styles={"color": "rgb(0, 0, 0)", "font-size": "12px"})
    scored = element_score(target, generated)
    # color: (1/256 + 1 + 1)/3 = 513/768 = 0.66796875, α 30 → 20.0390625
    # font-size: 1 − 4/16 = 0.75, α 9.8 → 7.35
    # position: same box → P = 1, weight 46 → 46
    # (20.0390625 + 7.35 + 46) / (30 + 9.8 + 46) = 73.3890625 / 85.8
    assert scored.position == 1.0
    assert scored.numerator == pytest.approx(73.3890625)
    assert scored.denominator == pytest.approx(85.8)
    assert scored.score == pytest.approx(73.3890625 / 85.8)
    assert [(r.entry, r.name, r.similarity, r.weight) for r in scored.rows] == [
        ("color", "color", 0.66796875, 30.0), ("font-size", "font-size", 0.75, 9.8)]


def test_a_shorthand_entry_counts_as_the_mean_of_its_sub_properties():
    corners = ("top-left", "top-right", "bottom-right", "bottom-left")
    target = element("/t", (0, 0, 10, 10), filter_by="has_text", evalby="border-radius",
                     styles={f"border-{c}-radius": "10px" for c in corners})
    generated = element("/g", (0, 0, 10, 10), styles=dict(zip(
        (f"border-{c}-radius" for c in corners), ("10px", "10px", "5px", "0px"))))
    # similarities 1, 1, 0.5, 0 (α 100 each) → mean α·sim = 250/4 = 62.5, mean α = 100
    # (62.5 + 46) / (100 + 46) = 108.5 / 146
    scored = element_score(target, generated)
    assert scored.score == pytest.approx(108.5 / 146)
    assert [r.effective_weight for r in scored.rows] == [25.0] * 4


def test_sub_properties_that_cannot_be_computed_contribute_nothing():
    target = element("/t", (0, 0, 10, 10), "Hi", filter_by="text",
                     evalby="letter-spacing|padding|line-height|class|background|box-shadow",
                     styles={"letter-spacing": "normal", "background-image": "none", "box-shadow": "none"},
                     attributes={"class": "a"})
    generated = element("/g", (0, 0, 10, 10), "Hi", styles={"letter-spacing": "1px", "box-shadow": "none"},
                        attributes={"class": "b"})
    scored = element_score(target, generated)
    # nothing computable: only the position term is left → 46·1/46
    assert scored.score == 1.0
    assert scored.denominator == 46.0
    notes = {r.entry: r.note for r in scored.rows}
    assert notes["padding"] == "ignored"
    assert notes["line-height"] == "unknown property"
    assert notes["background"] == "no linear-gradient on the target"
    assert all(r.similarity is None for r in scored.rows)


def test_has_text_scores_full_marks_even_on_an_empty_generated_element():
    target = element("/t", (0, 0, 10, 10), "Hello", filter_by="has_text", evalby="has_text")
    # has_text 1 (α 44) and P = 1 → (44 + 46) / (44 + 46)
    assert element_score(target, element("/g", (0, 0, 10, 10), "")).score == 1.0


def test_a_distant_generated_element_loses_the_position_term():
    target = element("/t", (0, 0, 9, 9), "x", filter_by="text", evalby="")
    generated = element("/g", (20, 0, 9, 9), "x")
    # boxes (0,0,9,9) and (20,0,29,9): GIoU = −1/3 → P = 1/3; score = 46·(1/3) / 46
    assert element_score(target, generated).score == pytest.approx(1 / 3)


def test_the_border_top_width_quirk_reaches_the_element_score():
    styles_t = {"border-top-width": "2px", "border-left-width": "4px"}
    styles_g = {"border-top-width": "2px", "border-left-width": "2px"}
    target = element("/t", (0, 0, 10, 10), filter_by="has_text", evalby="border-top-width", styles=styles_t)
    generated = element("/g", (0, 0, 10, 10), styles=styles_g)
    # quirk: left widths 4 vs 2 → 0.5 → (2.1·0.5 + 46) / (2.1 + 46); fixed: (2.1 + 46) / (2.1 + 46)
    assert element_score(target, generated).score == pytest.approx((1.05 + 46) / 48.1)
    assert element_score(target, generated, official_quirks=False).score == 1.0


# --- state score -------------------------------------------------------------------------------


def test_state_score_weights_element_scores_by_area_and_counts_unmatched_weight():
    targets = [element("/a", (0, 0, 100, 10), "A", filter_by="text", evalby="text"),
               element("/b", (0, 20, 10, 10), "B", filter_by="text", evalby="text")]
    generated = [element("/ga", (0, 0, 100, 10), "a")]
    state = score_state(targets, generated)
    # /a matches (text equal ignoring case → score 1), weight 1000^β; /b is unmatched, weight 100^β
    assert state.score_sum == pytest.approx(1000 ** BETA)
    assert state.weight_sum == pytest.approx(1000 ** BETA + 100 ** BETA)
    assert [t.xpath for t in state.unmatched] == ["/b"]


def test_a_penalty_only_target_counts_in_neither_sum():
    targets = [element("/a", (0, 0, 100, 10), "A", filter_by="text", evalby="text"),
               element("/far", (900, 900, 10, 10), "Z", filter_by="text", evalby="text")]
    generated = [element("/ga", (0, 0, 100, 10), "A"), element("/gb", (0, 20, 10, 10), "B")]
    state = score_state(targets, generated)
    assert state.score_sum == pytest.approx(1000 ** BETA)
    assert state.weight_sum == pytest.approx(1000 ** BETA)
    assert [(d.xpath, d.reason) for d in state.dropped] == [("/far", "penalty-only assignment")]


def test_a_failed_action_scores_zero_with_the_weight_of_the_target_against_itself():
    targets = [element("/a", (0, 0, 100, 10), "A", filter_by="text", evalby="text"),
               element("/b", (0, 20, 10, 10), "B", filter_by="has_text", evalby="text"),
               element("/plain", (0, 40, 10, 10), "not a target")]
    state = score_state(targets, None)
    assert state.action_failed
    assert state.score_sum == 0.0
    assert state.weight_sum == pytest.approx(1000 ** BETA + 100 ** BETA)
    assert [t.xpath for t in state.failed_targets] == ["/a", "/b"]
    assert state.matched == [] and state.unmatched == []
    assert state.interaction_loss == state.weight_sum


def test_considered_limits_the_state_to_the_given_targets():
    targets = [element("/a", (0, 0, 100, 10), "A", filter_by="text", evalby="text"),
               element("/b", (0, 20, 10, 10), "B", filter_by="text", evalby="text")]
    state = score_state(targets, targets, considered={"/b"})
    assert state.weight_sum == pytest.approx(100 ** BETA)
    assert state.excluded == ["/a"]


# --- page score --------------------------------------------------------------------------------

TITLE = element("/html/body/h1", (0, 0, 100, 10), "Title", filter_by="text", evalby="text")


def value_element(text: str) -> Element:
    return element("/html/body/div", (0, 20, 10, 10), text, filter_by="has_text", evalby="text")


DONE = element("/html/body/p", (0, 40, 50, 10), "Done", filter_by="text", evalby="text")


def three_state_page() -> tuple[list[PageState], list[PageState]]:
    target = [PageState("origin", [TITLE, value_element("0")]),
              PageState("increment", [TITLE, value_element("1"), DONE]),
              PageState("reset", [TITLE, value_element("0")])]
    generated = [
        PageState("origin", [element("/g/h1", (0, 0, 100, 10), "Title"), element("/g/div", (0, 20, 10, 10), "1")]),
        PageState("increment", [element("/g/div", (0, 20, 10, 10), "1")]),
        PageState("reset", [], action_error="NoSuchElementException: #reset"),
    ]
    return target, generated


def test_it_scores_every_target_element_in_every_state_by_default():
    # The release's unchanged-element test never succeeds (its dict is keyed by element wrappers
    # without __eq__/__hash__), so the unchanged title counts in all three states.
    result = score_page(*three_state_page())
    w_title, w_value, w_done = 1000 ** BETA, 100 ** BETA, 500 ** BETA
    origin, increment, reset = result.states
    assert all(state.excluded == [] for state in result.states)
    # origin: title 1; value "0" vs "1" → text 0 → 46/(6.8 + 46) = 46/52.8
    assert origin.score_sum == pytest.approx(w_title + w_value * 46 / 52.8)
    assert origin.weight_sum == pytest.approx(w_title + w_value)
    # increment: the only generated element takes the value target (s = 1); the title and "Done"
    # could only pair with it at penalty cost, and with one column to give they stay unassigned
    assert increment.score_sum == pytest.approx(w_value)
    assert increment.weight_sum == pytest.approx(w_title + w_value + w_done)
    assert [t.xpath for t in increment.unmatched] == ["/html/body/h1", "/html/body/p"]
    # reset: the generated action failed → S = 0, W = both targets against themselves
    assert reset.action_failed and reset.score_sum == 0.0
    assert reset.weight_sum == pytest.approx(w_title + w_value)
    expected = (w_title + w_value * 46 / 52.8 + w_value) / (3 * w_title + 3 * w_value + w_done)
    assert result.aes == pytest.approx(expected)
    assert result.aes == pytest.approx(0.31577, abs=1e-5)


def test_the_exclusion_variant_leaves_unchanged_elements_out_of_later_states():
    result = score_page(*three_state_page(), exclude_unchanged=True)
    w_title, w_value, w_done = 1000 ** BETA, 100 ** BETA, 500 ** BETA
    origin, increment, reset = result.states
    # origin: nothing to compare with, so everything counts
    assert origin.excluded == []
    assert origin.score_sum == pytest.approx(w_title + w_value * 46 / 52.8)
    # increment: the title did not change → excluded; value "1" vs "1" → 1; "Done" is new and has no partner
    assert increment.excluded == ["/html/body/h1"]
    assert increment.score_sum == pytest.approx(w_value)
    assert increment.weight_sum == pytest.approx(w_value + w_done)
    assert [t.xpath for t in increment.unmatched] == ["/html/body/p"]
    # reset: the generated action failed → 0, with the changed value element's weight
    assert reset.action_failed and reset.action_error.startswith("NoSuchElement")
    assert reset.excluded == ["/html/body/h1"]
    assert reset.score_sum == 0.0
    assert reset.weight_sum == pytest.approx(w_value)
    expected = (w_title + w_value * 46 / 52.8 + w_value) / (w_title + w_value + w_value + w_done + w_value)
    assert result.aes == pytest.approx(expected)
    assert result.aes == pytest.approx(0.64552, abs=1e-5)


def test_the_lost_score_splits_into_attribute_unmatched_and_interaction_parts():
    result = score_page(*three_state_page())
    w_title, w_value, w_done = 1000 ** BETA, 100 ** BETA, 500 ** BETA
    total = 3 * w_title + 3 * w_value + w_done
    assert result.attribute_loss == pytest.approx(w_value * (1 - 46 / 52.8) / total)
    assert result.unmatched_loss == pytest.approx((w_title + w_done) / total)
    assert result.interaction_loss == pytest.approx((w_title + w_value) / total)
    assert result.aes + result.attribute_loss + result.unmatched_loss + result.interaction_loss == pytest.approx(1.0)


def test_the_exclusion_variant_leaves_out_an_element_identical_to_an_unchanged_one():
    first = element("/ul/li[1]", (0, 0, 50, 10), "item", filter_by="text", evalby="text", outer_html="<li>item</li>")
    second = element("/ul/li[2]", (0, 20, 50, 10), "item", filter_by="text", evalby="text", outer_html="<li>item</li>")
    target = [PageState("origin", [first]), PageState("add", [first, second])]
    result = score_page(target, target, exclude_unchanged=True)
    # li[2] is new, but its outerHTML equals that of the unchanged li[1]
    assert result.states[1].excluded == ["/ul/li[1]", "/ul/li[2]"]
    assert result.states[1].weight_sum == 0.0


def test_with_a_full_dom_snapshot_the_exclusion_variant_leaves_out_an_element_that_only_became_visible():
    panel_hidden = element("/div", (0, 0, 100, 100), "", outer_html='<div class="">…</div>')
    panel_shown = element("/div", (0, 0, 100, 100), "", outer_html='<div class="open">…</div>')
    note = element("/div/p", (0, 0, 50, 10), "Note", filter_by="text", evalby="text", outer_html="<p>Note</p>")
    target = [PageState("origin", [panel_hidden]), PageState("open", [panel_shown, note])]
    # From the extracted (displayed) elements alone the note looks new and counts.
    assert score_page(target, target, exclude_unchanged=True).states[1].weight_sum == pytest.approx(500 ** BETA)
    # The full DOM holds every body descendant: the hidden note was already there, unchanged.
    dom = [{"/div": '<div class="">…</div>', "/div/p": "<p>Note</p>"},
           {"/div": '<div class="open">…</div>', "/div/p": "<p>Note</p>"}]
    assert score_page(target, target, target_dom=dom, exclude_unchanged=True).states[1].weight_sum == 0.0
    # The official metric leaves nothing out, DOM snapshot or not.
    assert score_page(target, target, target_dom=dom).states[1].weight_sum == pytest.approx(500 ** BETA)


def test_a_page_without_targets_scores_zero():
    plain = [PageState("origin", [element("/div", (0, 0, 10, 10), "x")])]
    result = score_page(plain, plain)
    assert result.aes == 0.0 and result.weight_sum == 0.0


def test_state_lists_of_different_lengths_are_refused():
    target, generated = three_state_page()
    with pytest.raises(ValueError):
        score_page(target, generated[:2])


def test_results_serialise_to_json_with_the_per_element_table():
    data = json.loads(json.dumps(score_page(*three_state_page()).as_dict()))
    origin = data["states"][0]
    assert set(data["breakdown"]) == {"aes", "attribute_loss", "unmatched_loss", "interaction_loss"}
    row = origin["matched"][1]
    assert (row["target_xpath"], row["generated_xpath"]) == ("/html/body/div", "/g/div")
    assert row["properties"] == [{"entry": "text", "name": "text", "similarity": 0.0, "weight": 6.8,
                                  "effective_weight": 6.8, "note": None}]
    assert row["position"] == 1.0 and row["position_weight"] == 46.0
    assert data["states"][2]["action_failed"] is True
    assert [t["xpath"] for t in data["states"][1]["unmatched"]] == ["/html/body/h1", "/html/body/p"]
    assert data["states"][1]["excluded"] == []


# --- whole pages -------------------------------------------------------------------------------

FILTERS = ["text", "has_text", "color", "background-color", "font-size", "width", "display", "class",
           "border-top-width", "outline-width", "font-family"]
EVALBY = ["text", "has_text", "color", "background-color", "font-size", "width", "height", "display",
          "font-family", "letter-spacing", "box-shadow", "text-shadow", "background-size", "background",
          "border", "border-radius", "border-top", "border-bottom", "outline", "class", "placeholder",
          "padding", "line-height", "src", "tab-size"]
WORDS = ["alpha", "beta", "gamma", "delta", "Echo", "fox", "golf", "hotel"]


def random_styles(rng: random.Random) -> dict[str, str]:
    def colour() -> str:
        r, g, b = (rng.randrange(256) for _ in range(3))
        return f"rgb({r}, {g}, {b})" if rng.random() < 0.7 else f"rgba({r}, {g}, {b}, {rng.choice(['0', '0.5', '1'])})"

    def px() -> str:
        return rng.choice([f"{rng.randrange(-5, 300)}px", f"{rng.uniform(0, 50):.2f}px", "0px", "normal", "auto"])

    styles: dict[str, str] = {}
    for name in CSS_PROPERTIES:
        if name.endswith("color"):
            styles[name] = colour()
        elif name.endswith(("width", "radius")) or name in ("font-size", "height", "letter-spacing"):
            styles[name] = px()
        else:
            styles[name] = rng.choice(["none", "block", "flex", "solid", "Arial", "700", "8", ""])
    styles["box-shadow"] = rng.choice(["none", f"{colour()} 1px 2px {rng.randrange(9)}px 0px"])
    styles["text-shadow"] = rng.choice(["none", f"{colour()} {rng.randrange(-3, 4)}px 1px 2px"])
    styles["background-size"] = rng.choice(["auto", f"{rng.randrange(1, 99)}px {rng.randrange(1, 99)}px"])
    styles["background-image"] = rng.choice(["none", f"linear-gradient(90deg, {colour()}, {colour()})"])
    return styles


def random_element(rng: random.Random, xpath: str, taken: set[tuple[float, float, float, float]]) -> Element:
    while True:
        rect = (rng.randrange(0, 1500), rng.randrange(0, 3000), rng.randrange(5, 400), rng.randrange(5, 200))
        if rect not in taken:
            taken.add(rect)
            break
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 14)))
    styles = random_styles(rng)
    attributes = {"class": rng.choice(["", "btn", "card big"])}
    if rng.random() < 0.7:
        attributes["data-filter-by"] = rng.choice(FILTERS)
        attributes["data-evalby"] = "|".join(rng.sample(EVALBY, rng.randrange(0, 6)))
        # The target must pass its own filter for the self-match to be the best one, as on real
        # pages where the annotated property has a proper value.
        styles["font-size"] = styles["width"] = styles["border-left-width"] = "12px"
    return Element(index=0, tag="div", rect=rect, text=text, attributes=attributes, styles=styles,
                   descendants=0, outer_html=f"<div {attributes}>{text}</div>", xpath=xpath)


def random_page(seed: int) -> list[PageState]:
    rng = random.Random(seed)
    taken: set[tuple[float, float, float, float]] = set()
    elements = [random_element(rng, f"/html/body/div[{i}]", taken) for i in range(rng.randrange(1, 12))]
    states = [PageState("origin", list(elements))]
    for k in range(rng.randrange(0, 4)):
        # an action rewrites some elements and adds others
        elements = [random_element(rng, e.xpath, taken) if rng.random() < 0.4 else e for e in elements]
        elements += [random_element(rng, f"/html/body/section[{k}]/div[{i}]", taken)
                     for i in range(rng.randrange(0, 3))]
        states.append(PageState(f"action_{k}", list(elements)))
    return states


@pytest.mark.parametrize("seed", range(40))
def test_a_page_scored_against_itself_gets_exactly_one(seed):
    page = random_page(seed)
    result = score_page(page, page)
    if result.weight_sum > 0:
        assert result.aes == 1.0
        assert result.attribute_loss == 0.0 and result.unmatched_loss == 0.0 and result.interaction_loss == 0.0


def perturbed(page: list[PageState], rng: random.Random) -> list[PageState]:
    states = []
    for k, state in enumerate(page):
        if k > 0 and rng.random() < 0.3:
            states.append(PageState(state.name, [], action_error="action failed"))
            continue
        elements = []
        # Sometimes most elements vanish, leaving more targets than generated elements.
        drop = rng.choice([0.2, 0.9])
        for e in state.elements:
            if rng.random() < drop:
                continue
            x, y, w, h = e.rect
            rect = (x + rng.randrange(-30, 30), y + rng.randrange(-30, 30), w, h) if rng.random() < 0.5 else e.rect
            styles = random_styles(rng) if rng.random() < 0.5 else e.styles
            elements.append(Element(index=0, tag="div", rect=rect, text=e.text if rng.random() < 0.7 else "x",
                                    attributes={}, styles=styles, descendants=rng.randrange(3),
                                    outer_html=e.outer_html, xpath=e.xpath + "-g"))
        states.append(PageState(state.name, elements))
    return states


@pytest.mark.parametrize("seed", range(40))
def test_aes_and_the_three_losses_add_up_to_one(seed):
    page = random_page(seed)
    result = score_page(page, perturbed(page, random.Random(1000 + seed)))
    if result.weight_sum > 0:
        total = result.aes + result.attribute_loss + result.unmatched_loss + result.interaction_loss
        assert total == pytest.approx(1.0, abs=1e-9)


def test_a_child_filling_its_annotated_parent_takes_the_parents_match():
    # Release behaviour worth knowing: against itself, the link matches its own span (same box,
    # same text, one descendant fewer) and is scored on the span's background, so AES < 1.
    link = element("/a", (0, 0, 100, 20), "Go", filter_by="text", evalby="background-color", descendants=1,
                   styles={"background-color": "rgb(0, 0, 255)"})
    span = element("/a/span", (0, 0, 100, 20), "Go", styles={"background-color": "rgba(0, 0, 0, 0)"})
    page = [PageState("origin", [link, span])]
    result = score_page(page, page)
    assert result.states[0].matched[0].generated_xpath == "/a/span"
    # background: (1 + 1 + 1/256)/3 = 513/768; (59·513/768 + 46) / (59 + 46)
    assert result.aes == pytest.approx((59 * 513 / 768 + 46) / 105)
