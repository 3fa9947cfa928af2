"""Target renders stored beside an imported page, so that no worker renders a target the import did.

A page's target states are the same for every attempt at it, and the import's page check
(``evaluators.webui.page_check``) renders every target anyway: it writes that render next to the
page's stored folder, as ``<folder>.targets/<viewport height>-<clock>.json``. Outside the folder,
so no page rendered from the folder (the target, or an attempt's copy of it) can load the file.

An attempt reads a stored render instead of rendering its target when everything that makes the
states is what made the stored ones: the same Chromium version, the same state reader, clock and
Selenium facade (a digest of their sources), the same format. Otherwise it renders the target
itself, as it always did. Only renders that stayed on the virtual clock and ran every scripted
action are stored: on the virtual clock a page renders the same states whenever it is rendered
(tests compare a stored render with a fresh one), and a target that fails is rendered again so
that the attempt reports the failure as it happens. Except for the date: the virtual clock starts
at the moment the page is opened, so a page that shows the date or time would show the import's
in a stored render; a page whose files name ``Date`` (or ``document.lastModified``) is never
stored, and its target is rendered beside the attempt's page, the same day.

Workers only read the files: the import writes them, once per page content (the folder is named
by its content hash) and browser.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
from dataclasses import asdict, fields
from functools import cache
from pathlib import Path
from typing import Any

from evaluators.webui.elements import Element
from evaluators.webui.results import RenderedState, RenderResult

log = logging.getLogger(__name__)

#: Bumped whenever what is written changes shape.
FORMAT = 1
#: The sources whose code decides what a state holds: a change to any makes stored renders stale.
_READER_SOURCES = ("js/extract_state.js", "js/webrtc_guard.js", "clock.py", "live_page.py", "render.py",
                   "elements.py", "selenium_compat")
_HERE = Path(__file__).resolve().parent
#: What a page's files say when the page may read the date (a false alarm only costs a render).
_READS_THE_DATE = re.compile(rb"\bDate\b|lastModified")
_PAGE_SOURCES = (".html", ".htm", ".js", ".mjs")
#: The result fields stored besides the states (``trace_path`` is the attempt's own, never stored).
_RESULT_FIELDS = tuple(f.name for f in fields(RenderResult) if f.name not in ("states", "trace_path"))


@cache
def reader_digest() -> str:
    """A digest of the code that reads a page's states."""
    digest = hashlib.sha256()
    for name in _READER_SOURCES:
        path = _HERE / name
        for source in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(source.relative_to(_HERE)).encode())
            digest.update(source.read_bytes())
    return digest.hexdigest()


def stored_path(page_dir: Path, clock: str, viewport_height: int) -> Path:
    page_dir = Path(page_dir).resolve()
    return page_dir.with_name(f"{page_dir.name}.targets") / f"{viewport_height}-{clock}.json"


def storable(result: RenderResult) -> bool:
    """A render on the virtual clock that loaded and ran every scripted action."""
    return (result.clock == "virtual" and result.clock_fallback is None and not result.load_error
            and not result.unresponsive and bool(result.states)
            and not any(state.action_error for state in result.states))


def reads_the_date(page_dir: Path) -> bool:
    """Whether the page's markup or scripts may read the date, so that its states depend on the day."""
    return any(_READS_THE_DATE.search(path.read_bytes()) for path in Path(page_dir).rglob("*")
               if path.suffix.lower() in _PAGE_SOURCES and path.is_file())


def _header(browser: str) -> dict[str, Any]:
    return {"format": FORMAT, "browser": browser, "reader": reader_digest()}


def save(page_dir: Path, result: RenderResult, browser: str) -> Path | None:
    """Store ``result`` as the target render of ``page_dir``; the file, or None when the render is
    not one to store (see :func:`storable`), the page may read the date or the folder beside the
    page cannot be written."""
    if not browser or not storable(result) or reads_the_date(page_dir):
        return None
    path = stored_path(page_dir, result.clock, result.viewport_height)
    payload = {**_header(browser), **{name: getattr(result, name) for name in _RESULT_FIELDS},
               "states": [_state_data(state) for state in result.states]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # written whole, then renamed: a worker reading meanwhile sees the old file or the new one
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(payload, out, ensure_ascii=False)
        os.replace(temporary, path)
    except OSError as exc:
        log.warning("could not store the target render of %s: %s", page_dir, exc)
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)
        return None
    return path


def load(page_dir: Path, clock: str, viewport_height: int, browser: str) -> RenderResult | None:
    """The stored target render of ``page_dir`` if one was made as ``browser`` would make it now."""
    path = stored_path(page_dir, clock, viewport_height)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("ignoring the stored target render %s: %s", path, exc)
        return None
    if not isinstance(payload, dict) or any(payload.get(key) != value for key, value in _header(browser).items()):
        return None  # made by another browser or reader: the attempt renders its target itself
    try:
        result = RenderResult(states=[_state(data) for data in payload["states"]],
                              **{name: payload[name] for name in _RESULT_FIELDS})
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("ignoring the stored target render %s: %s", path, exc)
        return None
    return result if storable(result) and result.viewport_height == viewport_height else None


def _state_data(state: RenderedState) -> dict[str, Any]:
    data = asdict(state)
    data["screenshot"] = base64.b64encode(state.screenshot).decode("ascii") if state.screenshot else None
    return data


def _state(data: dict[str, Any]) -> RenderedState:
    shot = data["screenshot"]
    elements = [Element(**{**element, "rect": tuple(element["rect"])}) for element in data["elements"]]
    return RenderedState(name=data["name"], elements=elements, action_error=data["action_error"],
                         screenshot=base64.b64decode(shot) if shot else None,
                         console_errors=list(data["console_errors"]), dom=data["dom"])
