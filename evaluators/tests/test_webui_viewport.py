"""The viewport: 1920×937 by default (the official harness's today), 1920×1080 on request (the paper's)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from evaluators.runner import effective_settings
from evaluators.settings import EvaluationSettings, SettingsError, validated_values
from evaluators.webui.options import WebUIOptions
from evaluators.webui.render import PageRenderer

SIZE_JS = "() => [innerWidth, innerHeight, screen.width, screen.height]"


def test_the_official_viewport_is_the_default_and_the_paper_era_1080_px_one_a_labelled_variant():
    for flow in ("global", "online"):
        default = effective_settings("webui", flow)
        assert WebUIOptions.of(default).viewport_height == 937
        assert default.variant_names() == []
    asked = validated_values({"webui_viewport_1080": "true"})
    assert asked == {"webui_viewport_1080": True}
    settings = effective_settings("webui", "global", asked)
    assert WebUIOptions.of(settings).viewport_height == 1080
    assert settings.variant_names() == ["webui_viewport_1080"]


def test_every_webui_submission_records_its_viewport_so_a_later_default_relabels_none():
    for flow in ("global", "online"):
        assert EvaluationSettings.defaults("webui", flow).to_dict()["webui_viewport_1080"] is False
    stored = EvaluationSettings.from_mapping({"webui_viewport_1080": True}, "webui", "global").to_dict()
    again = EvaluationSettings.from_mapping(stored, "webui", "global", platform=True)
    assert WebUIOptions.of(again).viewport_height == 1080 and again.variant_names() == ["webui_viewport_1080"]


def test_the_old_937_px_setting_is_no_longer_a_setting_937_being_the_default():
    with pytest.raises(SettingsError, match="webui_viewport_937"):
        validated_values({"webui_viewport_937": "true"})


@pytest.mark.integration
def test_a_page_renders_937_px_high_by_default_and_1080_px_high_when_asked(tmp_path: Path):
    (tmp_path / "index.html").write_text("<!doctype html><p id='p' style='height:3000px'>tall</p>", encoding="utf-8")
    with pytest.raises(ValueError):
        PageRenderer(viewport_height=1000)
    with PageRenderer(load_timeout=5.0) as renderer:
        with renderer.open_page(tmp_path) as live:
            # the window the official harness asks for is 1920×1080: the screen holds it
            assert live.page.evaluate(SIZE_JS) == [1920, 937, 1920, 1080]
        with renderer.open_page(tmp_path, viewport_height=1080) as live:
            assert live.page.evaluate(SIZE_JS) == [1920, 1080, 1920, 1080]
        result = renderer.render_states(tmp_path, [])
        assert result.viewport_height == 937
        with Image.open(io.BytesIO(result.states[0].screenshot)) as shot:
            assert shot.size == (1920, 937)
        assert renderer.render_states(tmp_path, [], screenshots=False, viewport_height=1080).viewport_height == 1080


@pytest.mark.integration
def test_an_episode_renders_its_target_and_its_page_937_px_high_and_1080_px_with_the_variant(tmp_path: Path):
    from evaluators.base import ScenarioSpec
    from evaluators.webui.env import WebUIEpisode
    from evaluators.webui.parsing import CodeWrite

    html = "<!doctype html><h1 data-filter-by='text' data-evalby='text|color'>Hello</h1>"
    (tmp_path / "index.html").write_text(html, encoding="utf-8")
    spec = ScenarioSpec(env="webui", key="viewport", data={}, resource_path=tmp_path)
    for asked, height in (({}, 937), ({"webui_viewport_1080": True}, 1080)):
        episode = WebUIEpisode(spec, effective_settings("webui", "global", asked))
        try:
            episode.step(CodeWrite(kind="html", code=html))
            details = episode.score_details()
            assert details["viewport"] == [1920, height] and details["aes"] == pytest.approx(1.0)
            assert episode._target.viewport_height == episode._generated.viewport_height == height
            assert episode.render().size == (1920, height)
        finally:
            episode.close()
