"""Measuring must not change what is measured: every fixture page scores the same with or without screenshots."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluators.tests.webui_pages import aes, reply_folder
from evaluators.webui.baselines import page_files
from evaluators.webui.render import PageRenderer
from evaluators.webui.selenium_compat import load_actions

pytestmark = pytest.mark.integration

PAGES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources" / "WebUI"
ALL_PAGES = sorted(p.name for p in PAGES.iterdir() if (p / "index.html").exists())


@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    with PageRenderer() as shared:
        yield shared


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_fixture_page_scores_the_same_with_and_without_screenshots(page: str, renderer: PageRenderer,
                                                                         tmp_path: Path):
    folder = PAGES / page
    actions = load_actions(folder / "actions.py")
    targets = {shots: renderer.render_states(folder, actions, screenshots=shots) for shots in (True, False)}
    assert all(state.screenshot for state in targets[True].states)
    assert [s.dom for s in targets[True].states] == [s.dom for s in targets[False].states]
    # A perfect reply's folder would hold the target's own files: the target's renders stand for it.
    generated_dir = reply_folder(folder, page_files(folder, degrade=True), tmp_path / "degraded")
    degraded = {shots: renderer.render_states(generated_dir, actions, screenshots=shots) for shots in (True, False)}
    assert [s.dom for s in degraded[True].states] == [s.dom for s in degraded[False].states]
    for reply, generated in (("perfect", targets), ("degraded", degraded)):
        for exclude in (False, True):
            with_shots = aes(targets[True], generated[True], exclude)
            without = aes(targets[False], generated[False], exclude)
            assert with_shots == without, (reply, exclude)
            if reply == "perfect":
                assert with_shots == pytest.approx(1.0)
            else:
                assert 0.0 < with_shots < 1.0
