"""Page folders the WebUI tests render: a fixture page with a reply's files in place of its own."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import cast

from conftest import FIXTURE_RESOURCES
from evaluators.webui.aes import score_page
from evaluators.webui.elements import PageState
from evaluators.webui.parsing import FILENAMES, CodeKind
from evaluators.webui.results import RenderResult

#: The project's own WebUI fixture pages, one folder each.
PAGES = FIXTURE_RESOURCES / "WebUI"
ALL_PAGES = sorted(p.name for p in PAGES.iterdir() if (p / "index.html").exists())


def reply_folder(page: Path, files: dict[str, str], into: Path) -> Path:
    """The page folder an attempt writes its reply into (the target's three files replaced)."""
    folder = into / "page"
    shutil.copytree(page, folder)
    for name in FILENAMES.values():
        (folder / name).unlink(missing_ok=True)
    for kind, code in files.items():
        (folder / FILENAMES[cast(CodeKind, kind)]).write_text(code, encoding="utf-8")
    return folder


def aes(target: RenderResult, generated: RenderResult, exclude: bool) -> float:
    """The page's AES from two renders, as an episode scores it (missing generated states score 0)."""
    states: list[PageState] = list(generated.states)
    states += [PageState(name=s.name, elements=[]) for s in target.states[len(states):]]
    doms = [state.dom for state in target.states]
    return score_page(target.states, states, target_dom=doms, exclude_unchanged=exclude).aes
