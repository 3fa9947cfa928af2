"""One WebUI episode: the model's code written into a copy of the page folder, rendered and scored.

As in the official environment, the episode starts from a copy of the whole page folder with the
target's index.html, style.css and script.js removed (assets stay available to the generated page);
each code block overwrites one of those three files. Scoring renders the target and the generated
page through the same scripted actions and computes AES (``evaluators.webui.aes``).
"""
from __future__ import annotations

import atexit
import io
import shutil
import tempfile
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PIL import Image

from evaluators.base import Episode, Observation, ScenarioSpec, StepResult
from evaluators.settings import EvaluationSettings
from evaluators.webui import target_store
from evaluators.webui.aes import score_page
from evaluators.webui.options import OFFICIAL_VIEWPORT_HEIGHT, WebUIOptions
from evaluators.webui.parsing import CodeWrite
from evaluators.webui.tasks import task_parts
from evaluators.webui.trace import write_public_trace

TARGET_FILES = ("index.html", "style.css", "script.js")
BREAKDOWN_KEYS = ("aes", "parse", "render", "interaction", "unmatched", "attribute")

_renderer = None
_renderer_lock = threading.Lock()
_target_cache: OrderedDict[tuple[str, str, int], Any] = OrderedDict()  # per worker process
#: Targets kept per worker process: a mini set's 20 pages and a few more.
TARGET_CACHE_SIZE = 24


class RendererThread:
    """A PageRenderer living on its own thread.

    Playwright's sync API keeps an event loop on the thread that started it, and Django refuses
    database calls from a thread with a running loop; so the browser never touches the thread
    that runs attempts and writes their results.
    """

    def __init__(self) -> None:
        from evaluators.webui.render import PageRenderer

        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="webui-browser")
        self._renderer = self._executor.submit(PageRenderer).result()

    def render_states(self, *args: Any, **kwargs: Any) -> Any:
        return self._executor.submit(self._renderer.render_states, *args, **kwargs).result()

    def browser_version(self) -> str:
        return self._executor.submit(self._renderer.launched_browser_version).result()

    def close(self) -> None:
        try:
            future = self._executor.submit(self._renderer.close)
        except RuntimeError:
            return  # interpreter exit already stopped the thread; Chromium goes with this process
        try:
            future.result(timeout=60)
        finally:
            self._executor.shutdown(wait=False)


def renderer() -> RendererThread:
    """One browser per worker process, reused across pages (each page gets a fresh context)."""
    global _renderer
    with _renderer_lock:
        if _renderer is None:
            _renderer = RendererThread()
            atexit.register(_renderer.close)
        return _renderer


def load_page_actions(page_dir: Path) -> list[Any]:
    from evaluators.webui.selenium_compat import load_actions

    return load_actions(page_dir / "actions.py")


def render_target(page_dir: Path, clock: str = "virtual", viewport_height: int = OFFICIAL_VIEWPORT_HEIGHT) -> Any:
    """The target's states are the same for every attempt: rendered once per process at most.

    Imported pages are stored under their content hash, so the folder path identifies the content.
    The import's page check stores its render of the target beside the folder
    (``evaluators.webui.target_store``): a worker that runs the same browser reads it instead of
    rendering the target, so a first attempt at a page renders only the attempt's own page.
    ``clock`` is the time the page is rendered in (``evaluators.webui.clock``); an attempt renders
    its target in the time it renders its own page in. A target that left the virtual clock comes
    back rendered on the real one (``clock`` "real", ``clock_fallback`` saying why).
    """
    key = (str(page_dir.resolve()), clock, viewport_height)
    cached = _target_cache.get(key)
    if cached is not None:
        _target_cache.move_to_end(key)
        return cached
    result = target_store.load(page_dir, clock, viewport_height, renderer().browser_version())
    if result is None:
        result = renderer().render_states(page_dir, load_page_actions(page_dir), screenshots=True, clock=clock,
                                          viewport_height=viewport_height)
    if result.load_error:
        raise RuntimeError(f"the target page does not load: {result.load_error}")
    failed = [s.name for s in result.states if s.action_error]
    if failed:
        # The official evaluator aborts when an action fails on the target: that is a broken scenario.
        raise RuntimeError(f"scripted action(s) {', '.join(failed)} fail on the target page itself")
    _target_cache[key] = result
    while len(_target_cache) > TARGET_CACHE_SIZE:
        _target_cache.popitem(last=False)
    return result


def breakdown(aes_result: Any | None, *, parse_error: bool, render_error: bool) -> dict[str, float]:
    """Where the score went: AES plus the lost share by cause, adding up to 1.

    A reply with no usable code loses everything to ``parse``. A generated page that failed to
    load or threw while loading has all its loss outside failed actions counted as ``render``:
    whatever it left unmatched or styled wrongly follows from the broken load. Otherwise unmatched
    targets and attribute mismatches (including position) split the loss with failed actions.
    """
    result = dict.fromkeys(BREAKDOWN_KEYS, 0.0)
    if parse_error or aes_result is None:
        result["parse"] = 1.0
        return result
    result["aes"] = aes_result.aes
    result["interaction"] = aes_result.interaction_loss
    if aes_result.weight_sum <= 0:
        result["render" if render_error else "unmatched"] = 1.0
    elif render_error:
        result["render"] = aes_result.unmatched_loss + aes_result.attribute_loss
    else:
        result["unmatched"] = aes_result.unmatched_loss
        result["attribute"] = aes_result.attribute_loss
    return result


class WebUIEpisode(Episode):
    def __init__(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> None:
        if scenario.resource_path is None or not scenario.resource_path.is_dir():
            raise FileNotFoundError(f"the page folder of {scenario.key} is missing")
        self.scenario = scenario
        self.source = scenario.resource_path
        self.resolution = settings.resolution
        self.trace = settings.trace
        options = WebUIOptions.of(settings)
        self.exclude_unchanged = options.exclude_unchanged
        self.clock = options.clock
        self.viewport_height = options.viewport_height
        self._tmp = Path(tempfile.mkdtemp(prefix="magebench-webui-"))
        self.work = self._tmp / "page"
        shutil.copytree(self.source, self.work)
        for name in TARGET_FILES:
            (self.work / name).unlink(missing_ok=True)
        self.files: dict[str, str] = {}
        self.writes = 0
        self._evaluation: dict[str, Any] | None = None
        self._generated: Any = None
        self._target: Any = None
        self._aes: Any = None
        self.done = False

    # --- Episode interface -------------------------------------------------------------------

    def reset(self) -> Observation:
        return Observation(text="", parts=task_parts(self.source, self.resolution))

    def step(self, action: Any) -> StepResult:
        if not isinstance(action, CodeWrite):
            raise TypeError(f"a WebUI action is a code block, not {action!r}")
        (self.work / action.filename).write_text(action.code, encoding="utf-8")
        self.files[action.kind] = action.code
        self.writes += 1
        self._evaluation = None
        return StepResult(observation=Observation(text=""), reward=0.0, done=False,
                          info={"wrote": action.filename, "characters": len(action.code), "changed": True})

    def render(self) -> Image.Image:
        """A screenshot of the generated page as first loaded (what Online rounds show the model)."""
        self.evaluate()
        shot = self._generated.states[0].screenshot if self._generated and self._generated.states else None
        if not shot:
            return Image.new("RGB", (1920, self.viewport_height), "white")
        with Image.open(io.BytesIO(shot)) as image:
            return image.convert("RGB")

    def score(self) -> float:
        return 100.0 * self.evaluate()["aes"]

    def score_details(self) -> dict[str, Any]:
        evaluation = dict(self.evaluate())
        evaluation.pop("states", None)  # per-element tables go to the trajectory artefacts only
        return evaluation

    # --- evaluation --------------------------------------------------------------------------

    def evaluate(self) -> dict[str, Any]:
        if self._evaluation is not None:
            return self._evaluation
        self._target = render_target(self.source, self.clock, self.viewport_height)
        if "html" not in self.files:
            # No index.html was written. The official run then loads the missing file anyway and
            # scores the browser's own "file not found" page, whose elements do match some targets
            # (a small score that depends on the browser build); here the attempt scores 0 and its
            # loss is the parse error's (a deviation listed on the metric card).
            self._generated, self._aes = None, None
            self._evaluation = {"aes": 0.0, "outcome": "parse_error", "exclude_unchanged": self.exclude_unchanged,
                                "breakdown": breakdown(None, parse_error=True, render_error=False),
                                "load_error": None, "page_errors": [], "blocked_urls": [], "state_scores": [],
                                **self._clock_details(self._target, None)}
            return self._evaluation
        actions = load_page_actions(self.source)
        # the generated page runs on the clock its target ran on (the real one if the target fell back)
        generated = self._render_generated(actions, self._target.clock)
        if generated.clock != self._target.clock:
            # the generated page left the virtual clock: its target is read on the real clock too
            self._target = render_target(self.source, generated.clock, self.viewport_height)
        self._generated = generated
        states = generated.states
        if generated.load_error or not states:
            states = []
        doms = [state.dom for state in self._target.states]
        aes_result = score_page(self._target.states, _pad_states(self._target.states, states),
                                target_dom=doms if all(d is not None for d in doms) else None,
                                exclude_unchanged=self.exclude_unchanged)
        self._aes = aes_result
        render_error = bool(generated.load_error or generated.page_errors_on_load)
        failed = [s.name for s in states if s.action_error]
        outcome = "render_error" if render_error else ("interaction_error" if failed else "rendered")
        self._evaluation = {
            "aes": aes_result.aes,
            "outcome": outcome,
            "exclude_unchanged": self.exclude_unchanged,
            "breakdown": breakdown(aes_result, parse_error=False, render_error=render_error),
            "load_error": generated.load_error,
            "page_errors": list(generated.page_errors)[:20],
            "blocked_urls": list(generated.blocked_urls)[:50],
            "resource_error": generated.resource_error,
            "browser_isolation": generated.isolation,
            **self._clock_details(self._target, generated),
            "failed_actions": failed,
            "state_scores": [{"name": s.name, "S": s.score_sum, "W": s.weight_sum, "score": s.score}
                             for s in aes_result.states],
            "states": aes_result.as_dict()["states"],
        }
        return self._evaluation

    def _render_generated(self, actions: list[Any], clock: str) -> Any:
        return renderer().render_states(self.work, actions, screenshots=True, clock=clock,
                                        viewport_height=self.viewport_height,
                                        trace_path=self._tmp / "trace.zip" if self.trace else None)

    def _clock_details(self, target: Any, generated: Any | None) -> dict[str, Any]:
        """The time and viewport both pages were rendered in, and why they left the virtual clock if they did.

        Both pages of an evaluation always run on the same kind of clock: when either falls back to
        the real clock (``evaluators.webui.clock``), the other is rendered on the real clock too.
        """
        fallback = None
        for page, result in (("target", target), ("generated", generated)):
            if result is not None and result.clock_fallback:
                fallback = {"page": page, "reason": result.clock_fallback}
                break
        note = None
        if fallback is not None:
            whose = "the target page" if fallback["page"] == "target" else "the generated page"
            note = (f"Both pages ran on the real clock because {whose} could not run on the virtual clock: "
                    f"{fallback['reason']}.")
        return {"clock": target.clock, "clock_asked": self.clock, "clock_fallback": fallback, "clock_note": note,
                "viewport": [1920, self.viewport_height]}

    def save_artifacts(self, directory: Path) -> dict[str, Any]:
        """Screenshots per state (target and generated), the AES tables, the code and the trace."""
        evaluation = self.evaluate()
        directory.mkdir(parents=True, exist_ok=True)
        states = []
        target_states = self._target.states if self._target else []
        generated_states = self._generated.states if self._generated else []
        for index, target_state in enumerate(target_states):
            entry: dict[str, Any] = {"name": target_state.name, "target_frame": None, "generated_frame": None}
            if target_state.screenshot:
                entry["target_frame"] = _write(directory, f"state{index:02d}_target.png", target_state.screenshot)
            if index < len(generated_states) and generated_states[index].screenshot:
                entry["generated_frame"] = _write(directory, f"state{index:02d}_generated.png",
                                                  generated_states[index].screenshot)
                entry["action_error"] = generated_states[index].action_error
            if index < len(evaluation.get("states", [])):
                entry["score"] = evaluation["states"][index]  # matched/unmatched elements with their boxes
            states.append(entry)
        trace = None
        if (self._tmp / "trace.zip").exists():
            write_public_trace(self._tmp / "trace.zip", directory / "trace.zip")
            trace = "trace.zip"
        return {"kind": "webui", "states": states, "code": dict(self.files), "trace": trace}

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __del__(self) -> None:
        self.close()


def _pad_states(target_states: list[Any], generated: list[Any]) -> list[Any]:
    """A generated page that did not load has no states: each is scored as a page with no elements."""
    from evaluators.webui.elements import PageState

    padded = list(generated)
    for state in target_states[len(padded):]:
        padded.append(PageState(name=state.name, elements=[]))
    return padded


def _write(directory: Path, name: str, data: bytes) -> str:
    (directory / name).write_bytes(data)
    return name
