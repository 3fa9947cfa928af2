"""The viewport: 1920×1080 by default (the paper's), 1920×937 on request (today's official harness)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from evaluators.runner import effective_settings
from evaluators.settings import validated_values
from evaluators.webui.options import WebUIOptions
from evaluators.webui.render import PageRenderer

SIZE_JS = "() => [innerWidth, innerHeight, screen.width, screen.height]"


def test_the_paper_viewport_is_the_default_and_the_937_px_one_a_labelled_variant():
    for flow in ("global", "online"):
        assert WebUIOptions.of(effective_settings("webui", flow)).viewport_height == 1080
    asked = validated_values({"webui_viewport_937": "true"})
    assert asked == {"webui_viewport_937": True}
    settings = effective_settings("webui", "global", asked)
    assert WebUIOptions.of(settings).viewport_height == 937
    assert settings.variant_names() == ["webui_viewport_937"]
    assert effective_settings("webui", "global").variant_names() == []


@pytest.mark.integration
def test_a_page_rendered_with_the_937_option_has_a_937_px_high_viewport_and_the_default_stays_1080(
        tmp_path: Path):
    (tmp_path / "index.html").write_text("<!doctype html><p id='p' style='height:3000px'>tall</p>", encoding="utf-8")
    with pytest.raises(ValueError):
        PageRenderer(viewport_height=1000)
    with PageRenderer(load_timeout=5.0) as renderer:
        with renderer.open_page(tmp_path) as live:
            assert live.page.evaluate(SIZE_JS) == [1920, 1080, 1920, 1080]
        with renderer.open_page(tmp_path, viewport_height=937) as live:
            # the window the official harness asks for is 1920×1080: the screen holds it
            assert live.page.evaluate(SIZE_JS) == [1920, 937, 1920, 1080]
        result = renderer.render_states(tmp_path, [], viewport_height=937)
        assert result.viewport_height == 937
        with Image.open(io.BytesIO(result.states[0].screenshot)) as shot:
            assert shot.size == (1920, 937)
        assert renderer.render_states(tmp_path, [], screenshots=False).viewport_height == 1080


@pytest.mark.integration
def test_an_episode_with_the_937_option_renders_its_target_and_its_page_937_px_high(tmp_path: Path):
    from evaluators.base import ScenarioSpec
    from evaluators.webui.env import WebUIEpisode
    from evaluators.webui.parsing import CodeWrite

    html = "<!doctype html><h1 data-filter-by='text' data-evalby='text|color'>Hello</h1>"
    (tmp_path / "index.html").write_text(html, encoding="utf-8")
    spec = ScenarioSpec(env="webui", key="viewport", data={}, resource_path=tmp_path)
    for asked, height in (({}, 1080), ({"webui_viewport_937": True}, 937)):
        episode = WebUIEpisode(spec, effective_settings("webui", "global", asked))
        try:
            episode.step(CodeWrite(kind="html", code=html))
            details = episode.score_details()
            assert details["viewport"] == [1920, height] and details["aes"] == pytest.approx(1.0)
            assert episode._target.viewport_height == episode._generated.viewport_height == height
            assert episode.render().size == (1920, height)
        finally:
            episode.close()
