"""The official harness's four WebUI Online flows (evaluators.webui.online_variants): each read from an
official checkout as data, chosen by the labelled setting ``webui_online_flow``, and composed as the
official flow composes its requests.

The checkout is fixtures/official-checkout (the official layout, the project's own sentences); its
texts are written out below character for character. The requests are played against a recording
endpoint as in test_official_requests.py, whose helpers and page this file shares.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from evaluators.agents.checkout import OfficialCheckout
from evaluators.agents.official_source import CheckoutError
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, ScenarioSpec, get_plugin
from evaluators.settings import EvaluationSettings, SettingsError
from evaluators.tests.test_official_requests import (
    CSS,
    CUT,
    FIRST_PAGE,
    HTML,
    LINKS,
    OFFICIAL_LABEL,
    PAGE,
    PAGE_SPEC,
    REST,
    SCREENSHOT_NATIVE,
    WEBUI_RESOLUTION,
    Played,
    Shown,
    assistant,
    decoded,
    described,
    official_size,
    page_pictures,
    play,
    prompt_sets,
    system,
    text,
    user,
    wire,
)
from evaluators.webui.official import official_prompt_set
from evaluators.webui.online_variants import ROUND_TEXTS, VARIANTS

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "official-checkout"
PAGES = ROOT / "fixtures" / "magebench" / "resources" / "WebUI"
SOURCES = ("checkout", "platform")

NATURAL_TEXTS = {
    "code_html": "Fixture page so far (files {{index.html}} and more):\n```html\n{html}\n```\n\n",
    "code_css": "```css\n{css}\n```\n\n",
    "code_javascript": "```javascript\n{javascript}\n```\n\n",
    "refine": ("Fixture: the picture above is your page as it renders now.\n"
               "Say what differs from the description, then rewrite the files that must change.\n"),
    "no_code": "Fixture: nothing is written yet, write every file.",
    "continuation": "Fixture: the reply stopped inside a block, go on from there.",
}
#: What each other flow of the stand-in checkout says in its own words (the rest is Natural's).
OWN_TEXTS = {
    "nocot_refine": "\nFixture (no steps): fix the page after the picture above, then give the new files.\n",
    "noimg_refine": ("Fixture: above is your code only.\n"
                     "Check it against each point of the description, then rewrite the files that fall short.\n"),
    "mergenodes_system": ("\nFixture rules of the stacked flow: make your page look like the target picture.\n"
                          "Each round shows your code and one picture, the target above your page.\n"),
    "mergenodes_refine": ("Fixture: the picture above is the target (top) and your page (bottom).\n"
                          "Say how the bottom differs from the top, then rewrite the files that must change.\n"),
    "mergenodes_no_code": "Fixture: no page yet, write every file for the target.",
}


def test_every_official_online_flow_is_read_from_the_checkout_each_under_its_own_name() -> None:
    prompts = official_prompt_set(OfficialCheckout(FIXTURE), FLOW_ONLINE)
    assert dict(prompts.extra) == {**NATURAL_TEXTS, **OWN_TEXTS}
    # A flow's round texts are its own where it has them, Natural's elsewhere.
    assert VARIANTS["mergenodes"].texts(prompts) == {
        **NATURAL_TEXTS, "refine": OWN_TEXTS["mergenodes_refine"], "no_code": OWN_TEXTS["mergenodes_no_code"],
        "system": OWN_TEXTS["mergenodes_system"]}
    assert VARIANTS["noimg"].texts(prompts) == {**NATURAL_TEXTS, "refine": OWN_TEXTS["noimg_refine"],
                                                "system": prompts.system}
    assert VARIANTS["natural"].texts(prompts) == {**NATURAL_TEXTS, "system": prompts.system}


def test_the_platforms_own_wording_has_every_flows_texts() -> None:
    own = get_plugin("webui").prompts(FLOW_ONLINE)
    for variant in VARIANTS.values():
        texts = variant.texts(own)
        assert set(texts) == {*ROUND_TEXTS, "system"} and all(texts.values())
    assert len({VARIANTS[name].texts(own)["refine"] for name in VARIANTS}) == len(VARIANTS)


def edited(tmp_path: Path, flow_file: str, old: str, new: str) -> OfficialCheckout:
    copied = tmp_path / "checkout"
    shutil.copytree(FIXTURE, copied)
    path = copied / flow_file
    source = path.read_text(encoding="utf-8")
    assert old in source
    path.write_text(source.replace(old, new), encoding="utf-8")
    return OfficialCheckout(copied)


def test_a_merged_flow_that_no_longer_shows_the_description_image_is_refused(tmp_path: Path) -> None:
    checkout = edited(tmp_path, VARIANTS["mergenodes"].flow_file, 'self.env.task_prompt[1]["image_url"]["url"]',
                      "page")
    with pytest.raises(CheckoutError, match="Online_Web_CoT_MergeNoDes.py line .*no longer stacks the description"):
        official_prompt_set(checkout, FLOW_ONLINE)


def test_a_flow_without_pictures_that_starts_showing_one_is_refused(tmp_path: Path) -> None:
    checkout = edited(tmp_path, VARIANTS["noimg"].flow_file, "                # Fixture: this flow shows no picture "
                      "of the page.\n", '                turn_parts.append({"type": "image_url", "image_url": '
                      '{"url": "x"}})\n')
    with pytest.raises(CheckoutError, match="Online_Web_CoT_NoImg.py line .*the code and one text, without a picture"):
        official_prompt_set(checkout, FLOW_ONLINE)


def test_a_flow_missing_from_the_checkout_is_named(tmp_path: Path) -> None:
    copied = tmp_path / "checkout"
    shutil.copytree(FIXTURE, copied)
    (copied / VARIANTS["nocot"].flow_file).unlink()
    with pytest.raises(CheckoutError, match="Flow/Online_Web_NoCoT.py: missing from the official checkout"):
        official_prompt_set(OfficialCheckout(copied), FLOW_ONLINE)


# --- the setting ---------------------------------------------------------------------------------


def test_an_unknown_online_flow_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(SettingsError, match="webui_online_flow must be one of natural, nocot, noimg, mergenodes, "
                                            "not 'NoCoT'"):
        EvaluationSettings.from_mapping({"webui_online_flow": "NoCoT"}, "webui", FLOW_ONLINE)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_online_flow_but_natural_is_a_labelled_variant(name: str) -> None:
    settings = EvaluationSettings.from_mapping({"webui_online_flow": name}, "webui", FLOW_ONLINE)
    assert settings.to_dict()["webui_online_flow"] == name
    assert settings.variant_names() == ([] if name == "natural" else ["webui_online_flow"])


def test_natural_is_the_default() -> None:
    assert EvaluationSettings.defaults("webui", FLOW_ONLINE).options["webui_online_flow"] == "natural"


def test_a_global_run_refuses_any_online_flow_but_natural() -> None:
    plugin = get_plugin("webui")
    pages = [ScenarioSpec(env="webui", key="step-counter", data={"page": "step-counter"}, resource_path=PAGE)]
    for name in VARIANTS:
        settings = EvaluationSettings.from_mapping({"webui_online_flow": name}, "webui", FLOW_GLOBAL)
        refusal = plugin.settings_refusal(FLOW_GLOBAL, settings, pages)
        assert (refusal is None) == (name == "natural")
    assert refusal == "webui_online_flow picks an Online flow; a global submission takes only webui_online_flow=natural"


# --- pages without a description image ------------------------------------------------------------


def page_copy(tmp_path: Path, name: str, tasks: str) -> ScenarioSpec:
    """The step-counter page under another name, with ``tasks`` as its description."""
    folder = tmp_path / name
    shutil.copytree(PAGE, folder)
    (folder / "tasks.md").write_text(tasks, encoding="utf-8")
    return ScenarioSpec(env="webui", key=name, data={"page": name}, resource_path=folder)


def test_it_refuses_mergenodes_on_pages_without_a_description_image(tmp_path: Path) -> None:
    pages = [ScenarioSpec(env="webui", key=folder.name, data={"page": folder.name}, resource_path=folder)
             for folder in sorted(PAGES.iterdir())]
    no_image = page_copy(tmp_path, "plain words", "# A page\n\nOnly words describe it.\n")
    image_first = page_copy(tmp_path, "picture first", "![The page](./_images/origin.png)\n\nThen words.\n")
    missing = page_copy(tmp_path, "lost picture", "# A page\n\n![The page](./_images/nowhere.png)\n")
    plugin = get_plugin("webui")
    merged = EvaluationSettings.from_mapping({"webui_online_flow": "mergenodes"}, "webui", FLOW_ONLINE)

    assert plugin.settings_refusal(FLOW_ONLINE, merged, pages) is None
    refusal = plugin.settings_refusal(FLOW_ONLINE, merged, [*pages, no_image, image_first, missing])
    assert refusal is not None
    assert "3 page(s) of this board have none: lost picture, picture first, plain words;" in refusal
    assert refusal.startswith("webui_online_flow=mergenodes shows each page's description image")
    # Every other flow shows the description itself, and runs on any page.
    for name in ("natural", "nocot", "noimg"):
        other = EvaluationSettings.from_mapping({"webui_online_flow": name}, "webui", FLOW_ONLINE)
        assert plugin.settings_refusal(FLOW_ONLINE, other, [no_image]) is None


# --- the requests of each flow --------------------------------------------------------------------


def play_flow(name: str, source: str, replies: list[str], out: Path) -> Played:
    _, given = prompt_sets("webui", source, FLOW_GLOBAL, FLOW_ONLINE)
    return play("webui", FLOW_ONLINE, PAGE_SPEC, replies, out, prompts=given, resolution=WEBUI_RESOLUTION,
                max_image=2, max_loop=1, webui_online_flow=name)


def round_zero(source: str) -> list[dict[str, Any]]:
    """The Global generation every flow starts from: max_image 2 turns the last two images into texts."""
    opening = prompt_sets("webui", source, FLOW_GLOBAL)[0][FLOW_GLOBAL]
    return [system(opening.system),
            user([*described(2, opening.unavailable_image), text(opening.format_instruction)])]


def stacked_size() -> tuple[int, int]:
    """The description's first image over the screenshot, each resized as officially."""
    with Image.open(PAGE / "_images" / LINKS[0][1]) as image:
        top = official_size(image.size, WEBUI_RESOLUTION)
    bottom = official_size(SCREENSHOT_NATIVE, WEBUI_RESOLUTION)
    return max(top[0], bottom[0]), top[1] + bottom[1]


def expected_round(name: str, source: str) -> list[dict[str, Any]]:
    prompts = prompt_sets("webui", source, FLOW_GLOBAL, FLOW_ONLINE)[0][FLOW_ONLINE]
    texts = VARIANTS[name].texts(prompts)
    code = text(texts["code_html"].format(html=HTML) + texts["code_css"].format(css=CSS))
    if name == "mergenodes":
        # Its own rules alone, no description; one picture: the target page over the current render.
        return [system([text(texts["system"])]), user([code, Shown("stacked"), text(texts["refine"])])]
    picture = [Shown("screenshot")] if name == "nocot" else []
    return [system([text(prompts.system)]),
            user([*described(None, prompts.unavailable_image), code, *picture, text(texts["refine"])])]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", ["nocot", "noimg", "mergenodes"])
def test_each_online_flow_composes_its_rounds_as_the_official_flow_does(name: str, source: str,
                                                                          tmp_path: Path) -> None:
    played = play_flow(name, source, [FIRST_PAGE, CUT, REST], tmp_path)
    pictures, sizes = page_pictures()
    # The one picture a round shows that no known picture equals: the render, or the target over it.
    if name == "mergenodes":
        sizes["stacked"] = stacked_size()
        del sizes["screenshot"]
    sent = [wire(body, max_tokens=4000, pictures=pictures, sizes=sizes) for body in played.bodies]
    refinement = expected_round(name, source)
    continuation = VARIANTS[name].texts(prompt_sets("webui", source, FLOW_ONLINE)[0][FLOW_ONLINE])["continuation"]
    assert sent == [
        round_zero(source),
        refinement,
        # The reply stopped inside a code block: once more, with the reply and the flow's request for the rest.
        [*refinement, assistant(CUT), user(continuation)],
    ]
    if name == "mergenodes":
        [stacked] = [part for part in played.bodies[1]["messages"][1]["content"] if part["type"] == "image_url"]
        image = decoded(stacked["image_url"]["url"], OFFICIAL_LABEL)[1]
        target = pictures[LINKS[0][1]]
        # The target fills the top, pixel for pixel; the page round 0 wrote, as first loaded, is below it.
        assert image.crop((0, 0, *target.size)).tobytes() == target.tobytes()
        assert image.getpixel((0, target.height)) == (0xEE, 0xF2, 0xF7)


@pytest.mark.parametrize("source", SOURCES)
def test_a_merged_round_without_code_sends_the_flows_own_no_code_text(source: str, tmp_path: Path) -> None:
    played = play_flow("mergenodes", source, ["No code at all.", FIRST_PAGE], tmp_path)
    prompts = prompt_sets("webui", source, FLOW_ONLINE)[0][FLOW_ONLINE]
    texts = VARIANTS["mergenodes"].texts(prompts)
    assert played.bodies[1]["messages"] == [system([text(texts["system"])]), user([text(texts["no_code"])])]
    if source == "checkout":
        assert texts["no_code"] == OWN_TEXTS["mergenodes_no_code"]
