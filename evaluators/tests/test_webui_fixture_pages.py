"""Measuring must not change what is measured: every fixture page reads and scores the same on the
virtual clock and in real time, and with or without screenshots."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.tests.webui_pages import ALL_PAGES, PAGES, aes, reply_folder
from evaluators.webui.baselines import page_files
from evaluators.webui.clock import CLOCKS
from evaluators.webui.render import PageRenderer
from evaluators.webui.results import RenderResult
from evaluators.webui.selenium_compat import load_actions

pytestmark = pytest.mark.integration



@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    """A renderer with the limits evaluation runs with; every page opens in a fresh context of it."""
    with PageRenderer() as shared:
        yield shared


def candidate_replies(page: Path) -> dict[str, dict[str, str]]:
    """The replies scored besides a perfect copy (whose folder would hold the target's own files, so
    the target's renders stand for it): the degraded baseline, and a copy whose renamed ids make the
    scripted actions fail."""
    perfect = page_files(page, degrade=False)
    renamed = dict(perfect, html=perfect["html"].replace(' id="', ' id="renamed-'))
    return {"degraded": page_files(page, degrade=True), "renamed ids": renamed}


def what_was_read(result: RenderResult) -> list[tuple[Any, ...]]:
    """Everything a state holds that scoring reads (screenshots aside), state by state."""
    return [(state.name, state.action_error, state.elements, state.dom) for state in result.states]


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_fixture_page_scores_the_same_on_either_clock_and_with_or_without_screenshots(
        page: str, renderer: PageRenderer, tmp_path: Path):
    folder = PAGES / page
    actions = load_actions(folder / "actions.py")
    folders = {"perfect": folder, **{reply: reply_folder(folder, files, tmp_path / reply.replace(" ", "-"))
                                     for reply, files in candidate_replies(folder).items()}}
    # Renders by reply and clock, without screenshots; the perfect reply's are the target's.
    renders = {(reply, clock): renderer.render_states(path, actions, screenshots=False, clock=clock)
               for reply, path in folders.items() for clock in CLOCKS}
    for reply in folders:
        assert what_was_read(renders[reply, "virtual"]) == what_was_read(renders[reply, "real"]), reply
        for exclude in (False, True):
            scores = {clock: aes(renders["perfect", clock], renders[reply, clock], exclude) for clock in CLOCKS}
            assert scores["virtual"] == scores["real"], (reply, exclude)

    # Screenshots, on the clock evaluation runs on, change nothing that is read or scored.
    clock = renderer.clock
    shot = {reply: renderer.render_states(folders[reply], actions, screenshots=True, clock=clock)
            for reply in ("perfect", "degraded")}
    assert all(state.screenshot for state in shot["perfect"].states)
    for reply, result in shot.items():
        assert [s.dom for s in result.states] == [s.dom for s in renders[reply, clock].states], reply
        for exclude in (False, True):
            with_shots = aes(shot["perfect"], result, exclude)
            assert with_shots == aes(renders["perfect", clock], renders[reply, clock], exclude)
            if reply == "perfect":
                assert with_shots == pytest.approx(1.0)
            else:
                assert 0.0 < with_shots < 1.0
