"""WebUI AES: CSS parsing, attribute similarities, pre-filters and the property tables (reference §2.4).

Expected values are worked out by hand in the comments next to each assertion.
"""
from __future__ import annotations

import pytest

from evaluators.webui import weights
from evaluators.webui.elements import Element
from evaluators.webui.similarity import (
    NoFilterFunction,
    UnavailableProperty,
    background_size_similarity,
    box_shadow_similarity,
    choice_filter,
    choice_similarity,
    class_filter,
    colour_filter,
    colour_similarity,
    has_text_filter,
    has_text_similarity,
    linear_gradient_similarity,
    parse_colour,
    parse_px,
    property_filter,
    property_similarity,
    px_filter,
    px_similarity,
    text_filter,
    text_shadow_similarity,
    text_similarity,
)


def element(text: str = "", *, styles: dict[str, str] | None = None, attributes: dict[str, str] | None = None,
            rect: tuple[float, float, float, float] = (0, 0, 10, 10), xpath: str = "/html/body/div") -> Element:
    return Element(index=0, tag="div", rect=rect, text=text, attributes=attributes or {}, styles=styles or {},
                   descendants=0, outer_html=f"<div>{text}</div>", xpath=xpath)


# --- parsing ---------------------------------------------------------------------------------


def test_rgb_and_selenium_style_rgba_colours_parse_to_four_channels():
    assert parse_colour("rgb(255, 128, 0)") == (255.0, 128.0, 0.0, 1.0)
    assert parse_colour("rgba(10, 20, 30, 0.5)") == (10.0, 20.0, 30.0, 0.5)
    assert parse_colour("rgba(0, 0, 0, 0)") == (0.0, 0.0, 0.0, 0.0)


def test_transparent_reads_as_the_zero_alpha_black_browsers_report():
    assert parse_colour("transparent") == (0.0, 0.0, 0.0, 0.0)


@pytest.mark.parametrize("value", ["red", "none", "#ff0000", "", "color(srgb 1 0 0)", "rgb(0, 0)"])
def test_colours_other_than_rgb_raise(value):
    with pytest.raises(UnavailableProperty):
        parse_colour(value)


def test_px_lengths_parse_including_fractions_and_bare_numbers():
    assert parse_px("16px") == 16.0
    assert parse_px("12.5px") == 12.5
    assert parse_px("-2px") == -2.0
    # The release strips p/x characters and calls float(), so a unitless number passes.
    assert parse_px("8") == 8.0


@pytest.mark.parametrize("value", ["normal", "auto", "none", "50%", "1em", "", "px"])
def test_keywords_and_other_units_do_not_parse_as_px(value):
    with pytest.raises(UnavailableProperty):
        parse_px(value)


# --- px ----------------------------------------------------------------------------------------


def test_px_similarity_is_one_minus_the_error_relative_to_the_target():
    # |12 − 16| / 16 = 0.25 → 0.75
    assert px_similarity("16px", "12px") == 0.75
    # |20 − 16| / 16 = 0.25 → 0.75: the error is symmetric around the target
    assert px_similarity("16px", "20px") == 0.75
    assert px_similarity("12.5px", "12.5px") == 1.0


def test_px_similarity_is_zero_beyond_a_100_percent_error():
    # |32 − 16| / 16 = 1.0, not < 1 → 0
    assert px_similarity("16px", "32px") == 0.0
    assert px_similarity("16px", "40px") == 0.0
    # |0 − 16| / 16 = 1.0 → 0
    assert px_similarity("16px", "0px") == 0.0


def test_px_similarity_of_a_zero_target_needs_a_zero_generated_value():
    assert px_similarity("0px", "0px") == 1.0
    assert px_similarity("0px", "0.5px") == 0.0


def test_px_similarity_divides_by_the_signed_target_so_negative_targets_can_exceed_one():
    # |2 − (−2)| / (−2) = −2 < 1 → 1 − (−2) = 3 (release behaviour)
    assert px_similarity("-2px", "2px") == 3.0
    assert px_similarity("-2px", "-2px") == 1.0


def test_px_similarity_raises_on_keywords():
    with pytest.raises(UnavailableProperty):
        px_similarity("normal", "1px")


# --- colour ------------------------------------------------------------------------------------


def test_colour_similarity_averages_channel_closeness_over_256():
    # R: 1 − 255/256 = 1/256, G: 1, B: 1 → (2 + 1/256) / 3 = 513/768 = 0.66796875
    assert colour_similarity("rgb(255, 0, 0)", "rgb(0, 0, 0)") == 0.66796875
    # R: 1 − 64/256 = 0.75, G: 1 − 128/256 = 0.5, B: 1 → 2.25 / 3 = 0.75
    assert colour_similarity("rgb(64, 128, 0)", "rgba(0, 0, 0, 1)") == 0.75


def test_colour_similarity_ignores_alpha():
    assert colour_similarity("rgba(10, 20, 30, 0)", "rgb(10, 20, 30)") == 1.0


def test_colour_similarity_raises_on_non_rgb_values():
    with pytest.raises(UnavailableProperty):
        colour_similarity("rgb(0, 0, 0)", "none")


# --- text and choice -----------------------------------------------------------------------------


def test_short_texts_need_an_exact_case_insensitive_stripped_match():
    assert text_similarity("Step Counter", "  step counter \n") == 1.0
    assert text_similarity("Step Counter", "Step counter!") == 0.0
    assert text_similarity("", "") == 1.0
    assert text_similarity("", "x") == 0.0


def test_long_texts_score_the_jaccard_index_of_their_word_sets():
    target = "a b c d e f g h i j"           # 10 words → Jaccard rule
    # common {a..i} = 9, union {a..k} = 11 → 9/11
    assert text_similarity(target, "a b c d e f g h i k") == 9 / 11
    # Jaccard is case-sensitive: only "b".."j" (9) are common, union has 11 words → 9/11
    assert text_similarity(target, "A b c d e f g h i j") == 9 / 11


def test_the_target_word_count_picks_the_rule():
    # 9 target words → exact rule, even against a long generated text with all of them
    assert text_similarity("a b c d e f g h i", "a b c d e f g h i j k") == 0.0


def test_words_are_split_on_single_spaces_only():
    # "a\nb c d e f g h i j" has 9 space-separated "words" → exact rule → different texts → 0
    assert text_similarity("a\nb c d e f g h i j", "a b c d e f g h i j") == 0.0


def test_choice_similarity_is_equality():
    assert choice_similarity("flex", "flex") == 1.0
    assert choice_similarity("flex", "block") == 0.0


# --- composite values ----------------------------------------------------------------------------


def test_box_shadow_weights_colour_twice_and_the_four_lengths_once():
    # colour: R 1 − 128/256 = 0.5, G 1, B 1 → 2.5/3 = 5/6
    # lengths: 1 − |1 − 2|/2 = 0.5, 1, 1, 0 vs 0 → 1
    # (2·5/6 + 0.5 + 1 + 1 + 1) / 6 = (5/3 + 7/2) / 6 = (31/6) / 6 = 31/36
    value = box_shadow_similarity("rgb(0, 0, 0) 2px 4px 8px 0px", "rgb(128, 0, 0) 1px 4px 8px 0px")
    assert value == pytest.approx(31 / 36)


def test_box_shadow_with_an_rgba_colour_never_scores():
    # The release drops one token too many before the colour, leaving "rgba(0, 0, 0," behind.
    with pytest.raises(UnavailableProperty):
        box_shadow_similarity("rgba(0, 0, 0, 0.2) 0px 4px 8px 0px", "rgba(0, 0, 0, 0.2) 0px 4px 8px 0px")


def test_box_shadow_none_on_either_side_is_not_comparable():
    with pytest.raises(UnavailableProperty):
        box_shadow_similarity("rgb(0, 0, 0) 2px 4px 8px 0px", "none")


def test_background_size_is_the_mean_of_width_and_height():
    # w: 1 − 20/100 = 0.8, h: 1 → 0.9
    assert background_size_similarity("100px 50px", "80px 50px") == pytest.approx(0.9)


@pytest.mark.parametrize("value", ["auto", "cover", "auto auto", "100px"])
def test_background_size_needs_two_lengths(value):
    with pytest.raises(UnavailableProperty):
        background_size_similarity(value, "100px 50px")


def test_linear_gradient_averages_colour_similarity_over_paired_rgb_stops():
    target = "linear-gradient(90deg, rgb(255, 0, 0), rgb(0, 0, 255))"
    generated = "linear-gradient(rgb(255, 0, 0), rgb(0, 0, 127), rgb(1, 1, 1))"
    # pairs: (red, red) → 1; (rgb(0,0,255), rgb(0,0,127)) → B 1 − 128/256 = 0.5 → 2.5/3 = 5/6
    # the third generated stop has no partner → (1 + 5/6) / 2 = 11/12
    assert linear_gradient_similarity(target, generated) == pytest.approx(11 / 12)


def test_linear_gradient_without_rgb_stops_is_not_comparable():
    with pytest.raises(UnavailableProperty):
        linear_gradient_similarity("linear-gradient(rgba(0, 0, 0, 0.5), rgba(1, 1, 1, 0.5))",
                                   "linear-gradient(rgb(0, 0, 0), rgb(1, 1, 1))")


def test_text_shadow_weights_colour_two_and_each_length_one():
    # colour identical → 2·1; lengths: 1 − |2 − 1|/1 = 0, 1, 1 → (2 + 0 + 1 + 1) / (2 + 3) = 0.8
    assert text_shadow_similarity("rgb(255, 0, 0) 1px 1px 2px", "rgb(255, 0, 0) 2px 1px 2px") == 0.8


def test_text_shadow_colour_part_is_zero_when_the_colour_counts_differ():
    # 1 colour vs 0 → colour 0 with weight 2; lengths 1 − 1/1 = 0, 1 − 1/1 = 0, 1 → (0 + 0 + 0 + 1) / 5
    assert text_shadow_similarity("rgb(0, 0, 0) 1px 1px 2px", "2px 2px 2px") == 0.2


def test_text_shadow_without_a_target_colour_compares_lengths_only():
    # no "rgb" in the target → lengths only: 1, 1 − 1/2 = 0.5 → 1.5 / 2
    assert text_shadow_similarity("1px 2px", "rgb(0, 0, 0) 1px 3px") == 0.75


def test_text_shadow_with_fractional_alpha_colours_on_both_sides_is_not_comparable():
    with pytest.raises(UnavailableProperty):
        text_shadow_similarity("rgba(0, 0, 0, 0.5) 1px 1px 2px", "rgba(0, 0, 0, 0.5) 1px 1px 2px")


def test_text_shadow_none_is_not_comparable():
    with pytest.raises(UnavailableProperty):
        text_shadow_similarity("none", "none")


# --- filters -----------------------------------------------------------------------------------


def test_text_filter_needs_a_similarity_above_0_6():
    assert text_filter("Hello", "hello ")
    assert not text_filter("Hello", "Hello!")
    # 9/11 ≈ 0.82 > 0.6
    assert text_filter("a b c d e f g h i j", "a b c d e f g h i k")
    # common {a..f} = 6, union {a..j, w..z} = 14 → 6/14 ≈ 0.43
    assert not text_filter("a b c d e f g h i j", "a b c d e f w x y z")


def test_colour_filter_needs_a_similarity_above_0_01():
    # white vs black: each channel 1 − 255/256 = 1/256 ≈ 0.0039 → fails
    assert not colour_filter("rgb(255, 255, 255)", "rgb(0, 0, 0)")
    # each channel 1 − 250/256 = 6/256 ≈ 0.023 → passes
    assert colour_filter("rgb(250, 250, 250)", "rgb(0, 0, 0)")


def test_px_filter_needs_a_similarity_above_0_01():
    # 1 − 98.5/100 = 0.015 → passes; 1 − 99.5/100 = 0.005 → fails
    assert px_filter("100px", "198.5px")
    assert not px_filter("100px", "199.5px")


def test_choice_filter_is_equality():
    assert choice_filter("solid", "solid")
    assert not choice_filter("solid", "dashed")


def test_class_filter_needs_identical_class_attributes():
    assert class_filter(element(attributes={"class": "btn big"}), element(attributes={"class": "btn big"}))
    assert not class_filter(element(attributes={"class": "btn big"}), element(attributes={"class": "big btn"}))
    # a missing attribute reads as "" (Selenium's get_attribute for HTML elements)
    assert class_filter(element(attributes={"class": ""}), element())


def test_has_text_filter_always_passes_even_for_an_empty_element():
    # "".strip().split(" ") == [""], whose length 1 satisfies ">= 1"
    assert has_text_filter(element("Hi"), element(""))
    assert has_text_similarity(element("Hi"), element("   ")) == 1.0


# --- element-level dispatch ----------------------------------------------------------------------


def test_placeholder_and_value_compare_the_element_text_not_the_attribute():
    target = element("", attributes={"placeholder": "Search"})
    generated = element("", attributes={"placeholder": "Find"})
    # both texts are "" → equal → 1, although the placeholders differ
    assert property_similarity("placeholder", target, generated) == 1.0
    assert property_similarity("value", target, generated) == 1.0
    assert property_filter("placeholder", target, generated)


def test_border_top_width_reads_border_left_width_by_default():
    target = element(styles={"border-top-width": "2px", "border-left-width": "4px"})
    generated = element(styles={"border-top-width": "2px", "border-left-width": "2px"})
    # quirk: left widths 4 vs 2 → 1 − 2/4 = 0.5
    assert property_similarity("border-top-width", target, generated) == 0.5
    assert property_similarity("border-top-width", target, generated, official_quirks=True) == 0.5
    # fixed: top widths 2 vs 2 → 1
    assert property_similarity("border-top-width", target, generated, official_quirks=False) == 1.0


def test_the_module_flag_switches_the_border_top_width_quirk(monkeypatch):
    monkeypatch.setattr(weights, "OFFICIAL_QUIRKS", False)
    assert weights.style_key("border-top-width") == "border-top-width"
    monkeypatch.setattr(weights, "OFFICIAL_QUIRKS", True)
    assert weights.style_key("border-top-width") == "border-left-width"


def test_the_border_top_width_filter_reads_border_left_width_too():
    target = element(styles={"border-top-width": "1px", "border-left-width": "100px"})
    generated = element(styles={"border-top-width": "1px", "border-left-width": "300px"})
    # left widths: |300 − 100|/100 = 2 ≥ 1 → similarity 0 → filter fails
    assert not property_filter("border-top-width", target, generated)


def test_class_can_filter_but_not_be_scored():
    with pytest.raises(UnavailableProperty):
        property_similarity("class", element(), element())


def test_properties_without_a_filter_function_refuse_to_filter():
    for name in ("text-shadow", "background-size", "background-linear-gradient", "box-shadow"):
        with pytest.raises(NoFilterFunction):
            property_filter(name, element(), element())


def test_src_and_type_are_read_as_css_properties_and_always_match():
    # Selenium reports "" for names that are not CSS properties, so both sides always agree.
    target = element(attributes={"src": "a.png"}, styles={"src": "", "type": ""})
    generated = element(attributes={"src": "b.png"}, styles={"src": "", "type": ""})
    assert property_similarity("src", target, generated) == 1.0
    assert property_similarity("type", target, generated) == 1.0


def test_outline_width_is_compared_as_a_keyword():
    # 2px vs 3px would be 0.5 as lengths; as a choice it is 0
    target = element(styles={"outline-width": "2px"})
    assert property_similarity("outline-width", target, element(styles={"outline-width": "3px"})) == 0.0


def test_background_linear_gradient_prefers_the_recorded_background_shorthand():
    target = element(styles={"background": "rgb(0, 0, 0) linear-gradient(rgb(255, 0, 0), rgb(0, 0, 255))",
                             "background-image": "linear-gradient(rgb(255, 0, 0), rgb(0, 0, 255))"})
    generated = element(styles={"background-image": "linear-gradient(rgb(255, 0, 0), rgb(0, 0, 255))"})
    # shorthand stops: black, red, blue vs red, blue → (black, red): R 1/256, G 1, B 1 → 513/768;
    # (red, blue): R 1/256, G 1, B 1/256 → 258/768; mean (513 + 258) / 1536 = 771/1536
    assert property_similarity("background-linear-gradient", target, generated) == pytest.approx(771 / 1536)


def test_unknown_properties_raise_key_error():
    with pytest.raises(KeyError):
        property_similarity("line-height", element(), element())


# --- tables and shorthands -----------------------------------------------------------------------


def test_weights_match_the_reference_table():
    assert weights.BETA == 0.8987018465995789
    assert weights.POSITION_WEIGHT == 46
    expected = {"has_text": 44, "text": 6.8, "placeholder": 6.8, "value": 6.8, "text-shadow": 83,
                "color": 30, "background-color": 59, "background-image": 12.6, "background-repeat": 24.5,
                "background-size": 14.3, "background-linear-gradient": 18, "src": 12.6, "type": 18.9,
                "outline-style": 79.2, "outline-width": 2.1, "outline-color": 16.9, "font-family": 94.6,
                "font-size": 9.8, "font-style": 94.6, "font-weight": 2.1, "height": 31.92, "width": 31.92,
                "tab-size": 50.8, "letter-spacing": 67, "box-shadow": 56.7, "display": 51, "class": 66.6}
    for side in ("top", "right", "bottom", "left"):
        expected.update({f"border-{side}-color": 16.9, f"border-{side}-width": 2.1, f"border-{side}-style": 79.2})
    for corner in ("top-left", "top-right", "bottom-left", "bottom-right"):
        expected[f"border-{corner}-radius"] = 100
    assert weights.ALPHA == expected
    assert set(weights.KIND) == set(weights.ALPHA)


def test_ignored_names_are_the_layout_properties_of_the_reference():
    assert weights.IGNORED_NAMES == {
        "padding", "margin", "left", "top", "position", "transition", "z-index", "flex-wrap",
        "justify-content", "text-transform", "transform", "cursor", "align-items", "overflow",
        "margin-top", "margin-right", "margin-bottom", "margin-left",
        "padding-top", "padding-right", "padding-bottom", "padding-left",
    }


def test_background_expands_only_when_the_target_has_a_linear_gradient():
    with_gradient = element(styles={"background-image": "linear-gradient(rgb(0, 0, 0), rgb(1, 1, 1))"})
    plain = element(styles={"background-image": "none"})
    assert weights.expand("background", with_gradient) == [
        "background-linear-gradient", "background-color", "background-repeat"]
    assert weights.expand("background", plain) == []


def test_box_shorthands_expand_into_their_sides_and_corners():
    target = element()
    assert sorted(weights.expand("border-radius", target)) == sorted([
        "border-top-left-radius", "border-top-right-radius", "border-bottom-right-radius", "border-bottom-left-radius"])
    assert sorted(weights.expand("border", target)) == sorted([
        "border-top-width", "border-right-width", "border-bottom-width", "border-left-width"])
    assert weights.expand("border-top", target) == ["border-top-width", "border-top-color"]
    assert weights.expand("border-left", target) == ["border-left-width", "border-left-color"]
    assert weights.expand("border-right", target) == ["border-right-width", "border-right-color"]
    assert weights.expand("outline", target) == ["outline-style", "outline-width", "outline-color"]
    assert weights.expand("color", target) == ["color"]


def test_border_bottom_is_not_expanded_unless_quirks_are_off():
    target = element()
    assert weights.expand("border-bottom", target) == ["border-bottom"]
    assert not weights.is_known("border-bottom")
    assert weights.expand("border-bottom", target, official_quirks=False) == [
        "border-bottom-width", "border-bottom-color"]


def test_element_weight_is_the_target_area_to_the_power_beta():
    # rect 100 × 50 → area 5000 (no "+1 pixel") → 5000 ** β
    assert weights.element_weight(element(rect=(3, 4, 100, 50))) == pytest.approx(5000 ** 0.8987018465995789, rel=1e-15)
