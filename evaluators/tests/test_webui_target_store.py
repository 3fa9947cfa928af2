"""Target renders stored by the import's page check and read by attempts instead of rendering the target."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import cast

import pytest

from evaluators.base import ScenarioCheck, ScenarioSpec, StoredScenario, get_plugin
from evaluators.runner import effective_settings
from evaluators.tests.webui_pages import PAGES
from evaluators.webui import env, target_store
from evaluators.webui.baselines import page_files
from evaluators.webui.elements import Element
from evaluators.webui.parsing import CodeKind, CodeWrite
from evaluators.webui.resources import folder_hash
from evaluators.webui.results import RenderedState, RenderResult

PAGE = "star-rating"


def _element(index: int) -> Element:
    return Element(index=index, tag="div", rect=(1.0, 2.0, 30.0, 4.5), text="Rate", attributes={"class": "a"},
                   styles={"color": "rgba(0, 0, 0, 1)"}, descendants=0, outer_html="<div class=\"a\">Rate</div>",
                   xpath="/html/body/div[1]")


def _result(**changes) -> RenderResult:
    states = [RenderedState(name="origin", elements=[_element(0)], screenshot=b"\x89PNG1",
                            dom={"/html/body/div[1]": "x"}),
              RenderedState(name="click", elements=[_element(0), _element(1)], console_errors=["Uncaught E"])]
    return RenderResult(**{"states": states, "isolation": "own network namespace", "seconds": 1.5, **changes})


def test_it_reads_back_the_render_it_stored_beside_the_page_folder(tmp_path):
    page = tmp_path / "0123-page"
    page.mkdir()
    path = target_store.save(page, _result(), "156.0")
    assert path == tmp_path / "0123-page.targets" / "937-virtual.json"
    assert list(page.iterdir()) == []  # nothing inside the folder a page is rendered from
    loaded = target_store.load(page, "virtual", 937, "156.0")
    assert loaded is not None
    assert loaded.states == _result().states
    assert (loaded.isolation, loaded.clock, loaded.viewport_height, loaded.seconds) == (
        "own network namespace", "virtual", 937, 1.5)


def test_it_ignores_a_render_stored_by_another_browser_reader_or_viewport(tmp_path, monkeypatch):
    page = tmp_path / "page"
    target_store.save(page, _result(), "156.0")
    assert target_store.load(page, "virtual", 937, "157.0") is None
    assert target_store.load(page, "virtual", 1080, "156.0") is None
    assert target_store.load(page, "real", 937, "156.0") is None
    monkeypatch.setattr(target_store, "reader_digest", lambda: "another reader")
    assert target_store.load(page, "virtual", 937, "156.0") is None


def test_it_ignores_a_stored_file_it_cannot_read(tmp_path):
    page = tmp_path / "page"
    path = target_store.stored_path(page, "virtual", 937)
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert target_store.load(page, "virtual", 937, "156.0") is None
    path.write_text(json.dumps({"format": target_store.FORMAT, "browser": "156.0",
                                "reader": target_store.reader_digest(), "states": [{"name": "origin"}]}),
                    encoding="utf-8")
    assert target_store.load(page, "virtual", 937, "156.0") is None


@pytest.mark.parametrize("changes", [
    {"clock": "real", "clock_fallback": "the page waits for its clock in a busy loop"},
    {"load_error": "navigation failed"},
    {"unresponsive": True},
    {"states": [RenderedState(name="origin", elements=[]), RenderedState(name="click", elements=[],
                                                                          action_error="TimeoutException: x")]},
    {"states": []},
])
def test_it_stores_no_render_that_left_the_virtual_clock_or_failed(tmp_path, changes):
    assert target_store.save(tmp_path / "page", _result(**changes), "156.0") is None
    assert not (tmp_path / "page.targets").exists()


def test_it_stores_nothing_without_a_browser_version(tmp_path):
    assert target_store.save(tmp_path / "page", _result(), "") is None


@pytest.mark.parametrize(("name", "code"), [
    ("script.js", "document.querySelector('#today').textContent = new Date().toDateString();"),
    ("index.html", "<footer><script>document.write(document.lastModified)</script></footer>"),
    ("lib/clock.mjs", "export const now = () => Date.now();"),
])
def test_it_stores_no_render_of_a_page_that_may_show_the_date(tmp_path, name, code):
    page = tmp_path / "page"
    (page / name).parent.mkdir(parents=True)
    (page / name).write_text(code, encoding="utf-8")
    (page / "style.css").write_text(".Date { color: red }", encoding="utf-8")  # not a script
    assert target_store.save(page, _result(), "156.0") is None
    (page / name).write_text("document.body.dataset.ready = 'yes';", encoding="utf-8")
    assert target_store.save(page, _result(), "156.0") is not None


@pytest.fixture
def stored_page(tmp_path):
    """A copy of a fixture page as the import stores it, through the plug-in's import-time check."""
    page = tmp_path / "scenarios" / f"abcdef-{PAGE}"
    shutil.copytree(PAGES / PAGE, page)
    before = folder_hash(page)
    checks: list[ScenarioCheck] = []
    get_plugin("webui").check_scenarios(
        [StoredScenario(key=PAGE, path=page, content_hash=before, data={}, tags={})],
        workers=2, recheck=False, store=checks.append)
    assert [check.status for check in checks] == ["ok"]
    assert folder_hash(page) == before  # the stored page itself is left as it was
    return page


@pytest.mark.integration
def test_the_page_check_stores_the_target_as_an_attempt_renders_it(stored_page):
    fresh = env.renderer().render_states(stored_page, env.load_page_actions(stored_page), screenshots=True)
    stored = target_store.load(stored_page, "virtual", 937, env.renderer().browser_version())
    assert stored is not None
    assert [s.name for s in stored.states] == [s.name for s in fresh.states] == [
        "origin", "hover_fourth_star", "rate_three_stars", "post_review"]
    assert [s.elements for s in stored.states] == [s.elements for s in fresh.states]
    assert [s.dom for s in stored.states] == [s.dom for s in fresh.states]
    assert all(s.screenshot for s in stored.states)


@pytest.mark.integration
def test_an_attempt_scores_against_the_stored_target_without_rendering_it(stored_page, monkeypatch):
    rendered: list[Path] = []
    real = env.RendererThread.render_states

    def counting(self, page_dir, *args, **kwargs):
        rendered.append(Path(page_dir))
        return real(self, page_dir, *args, **kwargs)

    monkeypatch.setattr(env.RendererThread, "render_states", counting)
    scores = []
    for stored in (True, False):
        if not stored:
            shutil.rmtree(stored_page.with_name(f"{stored_page.name}.targets"))
        env._target_cache.clear()
        episode = env.WebUIEpisode(ScenarioSpec(env="webui", key=PAGE, data={}, resource_path=stored_page),
                                   effective_settings("webui", "global"))
        for kind, code in page_files(stored_page, degrade=True).items():
            episode.step(CodeWrite(kind=cast(CodeKind, kind), code=code))
        scores.append(episode.score())
        episode.close()
    env._target_cache.clear()
    # with the stored target, only the attempt's own page is rendered; without, the target as well
    assert [path == stored_page for path in rendered] == [False, True, False]
    assert scores[0] == scores[1] == pytest.approx(39.32, abs=0.005)
