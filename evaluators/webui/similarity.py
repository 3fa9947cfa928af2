"""Computed-CSS parsing, attribute similarities and pre-filters of the WebUI AES metric (reference §2.4).

All value-level functions take the *target* value first and the *generated* value second; the
order matters for px similarity (the error is relative to the target) and for text (the target's
word count picks the rule).

Whenever the release's own computation would raise (a keyword such as ``normal`` where a length is
expected, a shadow of the wrong shape, …) these functions raise :class:`UnavailableProperty`.
The scorer treats that as "this sub-property is not computed" (no contribution at all, neither
similarity nor weight) and the matcher as a filter exception (−0.01), exactly as the release does
with its blanket ``except``. Parsing is deliberately no more lenient than the release: a value it
cannot read must not start scoring here.
"""
from __future__ import annotations

import re

from evaluators.webui import weights
from evaluators.webui.elements import Element


class UnavailableProperty(ValueError):
    """The property cannot be compared for this pair (the release's computation raises)."""


class NoFilterFunction(LookupError):
    """The property has no pre-filter; targets filtering by it are dropped before matching."""


# ---------------------------------------------------------------------------------------------
# Parsing

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_COLOUR = re.compile(
    rf"rgba?\(\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*(?:,\s*({_NUMBER})\s*)?\)"
)
# The release finds shadow and gradient colours with these exact patterns: integer channels, one
# space after each comma, and (for rgba) an integer alpha, so "rgba(0, 0, 0, 0.5)" is not found.
_RGB_STOP = re.compile(r"rgb\(\d+, \d+, \d+\)")
_RGBA_INTEGER_ALPHA = re.compile(r"rgba\(\d+, \d+, \d+, \d+\)")


def parse_colour(value: str) -> tuple[float, float, float, float]:
    """(r, g, b, alpha) of a computed colour: ``rgb(r, g, b)``, ``rgba(r, g, b, a)`` (the form
    Selenium reports) or ``transparent``.

    Browsers serialise ``transparent`` as ``rgba(0, 0, 0, 0)`` in computed styles, so reading it as
    that keeps a hand-written value and a browser-reported one equivalent. Anything else (named
    colours, ``color(...)``, ``none``) raises, as in the release, which requires ``rgb``.
    """
    text = value.strip()
    if text == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    match = _COLOUR.fullmatch(text)
    if match is None:
        raise UnavailableProperty(f"not an rgb()/rgba() colour: {value!r}")
    r, g, b, alpha = match.groups()
    return (float(r), float(g), float(b), 1.0 if alpha is None else float(alpha))


def parse_px(value: str) -> float:
    """A computed length such as ``16px`` or ``12.5px``.

    Mirrors the release: leading/trailing ``p``/``x`` characters are stripped and the rest must be
    a float, so keywords (``normal``, ``auto``, ``none``) and other units raise while a bare number
    (``8``) is accepted.
    """
    try:
        return float(value.strip("px"))
    except ValueError:
        raise UnavailableProperty(f"not a px length: {value!r}") from None


# ---------------------------------------------------------------------------------------------
# Value similarities


def px_similarity(target: str, generated: str) -> float:
    """1 − |g − t|/t when that relative error is below 1, else 0; t = 0 gives 1 only for g = 0.

    The denominator is the signed target value, as in the release: for a negative target (a
    negative letter-spacing or shadow offset) the "error" is negative and the similarity can
    exceed 1. Identical values always give exactly 1.
    """
    t = parse_px(target)
    g = parse_px(generated)
    relative_error = abs(g - t) / t if t != 0 else float(g != 0)
    return 1 - relative_error if relative_error < 1.0 else 0.0


def colour_similarity(target: str, generated: str) -> float:
    """Mean over R, G, B of max(1 − |Δ|/256, 0); alpha is ignored."""
    t = parse_colour(target)
    g = parse_colour(generated)
    channels = [max(1 - abs(t[i] - g[i]) / 256, 0) for i in range(3)]
    return (channels[0] + channels[1] + channels[2]) / 3


def text_similarity(target: str, generated: str) -> float:
    """Short targets (< 10 words) need an exact case-insensitive match of the stripped texts;
    longer ones score the Jaccard index of their word sets (case-sensitive).

    Words are separated by single spaces, as in the release: newlines do not split and runs of
    spaces produce empty "words".
    """
    target_words = target.strip().split(" ")
    if len(target_words) < 10:
        return 1.0 if target.strip().lower() == generated.strip().lower() else 0.0
    generated_words = generated.strip().split(" ")
    union = set(target_words) | set(generated_words)
    common = {word for word in target_words if word in generated_words}
    return len(common) / len(union)


def choice_similarity(target: str, generated: str) -> float:
    return 1.0 if target == generated else 0.0


def _shadow_parts(value: str) -> tuple[str, list[str]]:
    # The last four space-separated tokens are read as the lengths and everything before them as
    # the colour, except that for rgba one more token is dropped (meant to drop the alpha). That
    # leaves "rgba(0, 0, 0," which no colour parser accepts: in the release a box-shadow with an
    # rgba colour never scores, and neither does "none" (too few tokens).
    tokens = value.split(" ")
    if len(tokens) < 4:
        raise UnavailableProperty(f"not a single box-shadow: {value!r}")
    colour_tokens = tokens[:-5] if "rgba(" in value else tokens[:-4]
    return " ".join(colour_tokens), tokens[-4:]


def box_shadow_similarity(target: str, generated: str) -> float:
    """(2·colour + the four length similarities) / 6."""
    t_colour, t_lengths = _shadow_parts(target)
    g_colour, g_lengths = _shadow_parts(generated)
    colour = colour_similarity(t_colour, g_colour)
    lengths = [px_similarity(t, g) for t, g in zip(t_lengths, g_lengths)]
    return (colour * 2 + lengths[0] + lengths[1] + lengths[2] + lengths[3]) / 6.0


def background_size_similarity(target: str, generated: str) -> float:
    """Mean of the width and height px similarities; needs exactly two lengths on both sides
    (``auto``, ``cover`` and single values raise)."""
    t_parts = target.split(" ")
    g_parts = generated.split(" ")
    if len(t_parts) != 2 or len(g_parts) != 2:
        raise UnavailableProperty(f"background-size is not two lengths: {target!r} / {generated!r}")
    width = px_similarity(t_parts[0], g_parts[0])
    height = px_similarity(t_parts[1], g_parts[1])
    return (width + height) / 2


def linear_gradient_similarity(target: str, generated: str) -> float:
    """Mean colour similarity over the ``rgb(...)`` stops paired in order (extra stops on either
    side are ignored; ``rgba`` stops are not seen). No pair at all raises."""
    pairs = list(zip(_RGB_STOP.findall(target), _RGB_STOP.findall(generated)))
    if not pairs:
        raise UnavailableProperty("no rgb() gradient stops to compare")
    total = 0.0
    for t, g in pairs:
        total += colour_similarity(t, g)
    return total / len(pairs)


def text_shadow_similarity(target: str, generated: str) -> float:
    """Weighted mean of a colour part (weight 2) and px parts (weight 1 each).

    The colour part exists only when the target's value mentions ``rgb``; it scores 0 when the two
    sides list different numbers of colours, else compares the first colours. The px parts pair
    the space-separated tokens ending in ``px`` in order. As in the release, colours are found
    with integer-alpha patterns, so when both sides only have fractional-alpha colours the colour
    lists are both empty and the comparison raises.
    """
    score = 0.0
    weight = 0.0
    if "rgb" in target:
        t_colours = _RGBA_INTEGER_ALPHA.findall(target) + _RGB_STOP.findall(target)
        g_colours = _RGBA_INTEGER_ALPHA.findall(generated) + _RGB_STOP.findall(generated)
        if len(t_colours) != len(g_colours):
            weight += 2
        else:
            if not t_colours:
                raise UnavailableProperty("no integer-alpha shadow colour on either side")
            score += colour_similarity(t_colours[0], g_colours[0]) * 2
            weight += 2
    t_lengths = [token for token in target.split(" ") if token.endswith("px")]
    g_lengths = [token for token in generated.split(" ") if token.endswith("px")]
    for t, g in zip(t_lengths, g_lengths):
        score += px_similarity(t, g) * 1
        weight += 1
    if weight == 0:
        raise UnavailableProperty("nothing comparable in the text-shadows")
    return score / weight


# ---------------------------------------------------------------------------------------------
# Value filters (thresholds of the pre-filter, reference §2.4 "Filter rules")


def text_filter(target: str, generated: str) -> bool:
    return text_similarity(target, generated) > 0.6


def colour_filter(target: str, generated: str) -> bool:
    return colour_similarity(target, generated) > 0.01


def px_filter(target: str, generated: str) -> bool:
    return px_similarity(target, generated) > 0.01


def choice_filter(target: str, generated: str) -> bool:
    return target == generated


def class_filter(target: Element, generated: Element) -> bool:
    """Identical ``class`` attributes. A missing attribute counts as the empty string, which is what
    Selenium's ``get_attribute("class")`` reports for HTML elements without one."""
    return target.attributes.get("class", "") == generated.attributes.get("class", "")


def has_text_filter(target: Element, generated: Element) -> bool:
    """Meant to require text on the generated element; always passes.

    The release tests ``len(text.strip().split(" ")) >= 1``, but splitting on an explicit separator
    never yields an empty list (``"".split(" ") == [""]``), so the test holds for every element.
    The same expression is kept here so that the bug is reproduced rather than hard-coded.
    """
    return len(generated.text.strip().split(" ")) >= 1


def has_text_similarity(target: Element, generated: Element) -> float:
    """The scored counterpart of :func:`has_text_filter`, carrying the same bug: always 1."""
    return 1.0 if len(generated.text.strip().split(" ")) >= 1 else 0.0


# ---------------------------------------------------------------------------------------------
# Element-level dispatch


def style(element: Element, key: str) -> str:
    """A computed-style value; names the browser layer did not record read as "" (what Selenium
    returns for names that are not CSS properties)."""
    if key == "background":
        return weights.background_value(element)
    return element.styles.get(key, "")


_VALUE_SIMILARITY = {
    "px": px_similarity,
    "colour": colour_similarity,
    "choice": choice_similarity,
}
_VALUE_FILTER = {
    "px": px_filter,
    "colour": colour_filter,
    "choice": choice_filter,
}
_SPECIAL_SIMILARITY = {
    "text-shadow": text_shadow_similarity,
    "box-shadow": box_shadow_similarity,
    "background-size": background_size_similarity,
    "background-linear-gradient": linear_gradient_similarity,
}


def property_similarity(name: str, target: Element, generated: Element, *,
                        official_quirks: bool | None = None) -> float:
    """Similarity of one (already expanded) property between a target and a generated element.

    Raises KeyError for names outside the table and :class:`UnavailableProperty` when the pair
    cannot be compared, including ``class``, which the release can only filter on.
    """
    spec = weights.property_spec(name, official_quirks)
    if not spec.scored:
        raise UnavailableProperty(f"{name!r} has no similarity function, only a filter")
    if spec.kind == "text":
        # placeholder and value compare the rendered text, not the attributes (as in the release).
        return text_similarity(target.text, generated.text)
    if spec.kind in _VALUE_SIMILARITY:
        assert spec.style_key is not None
        return _VALUE_SIMILARITY[spec.kind](style(target, spec.style_key), style(generated, spec.style_key))
    if name == "has_text":
        return has_text_similarity(target, generated)
    assert spec.style_key is not None
    return _SPECIAL_SIMILARITY[name](style(target, spec.style_key), style(generated, spec.style_key))


def property_filter(name: str, target: Element, generated: Element, *,
                    official_quirks: bool | None = None) -> bool:
    """Whether the pair passes the pre-filter named by the target's ``data-filter-by``.

    Raises KeyError for unknown names, :class:`UnavailableProperty` when the values cannot be
    compared (the matcher scores that −0.01) and :class:`NoFilterFunction` for properties without
    a filter (callers drop such targets before matching).
    """
    spec = weights.property_spec(name, official_quirks)
    if not spec.has_filter:
        raise NoFilterFunction(f"{name!r} has no filter function")
    if spec.kind == "text":
        return text_filter(target.text, generated.text)
    if spec.kind in _VALUE_FILTER:
        assert spec.style_key is not None
        return _VALUE_FILTER[spec.kind](style(target, spec.style_key), style(generated, spec.style_key))
    if name == "class":
        return class_filter(target, generated)
    if name == "has_text":
        return has_text_filter(target, generated)
    raise NoFilterFunction(f"{name!r} has no filter function")
