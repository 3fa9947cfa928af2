"""Can a WebUI page be evaluated as the benchmark intends? One run of every target page.

For each page the check renders the target through its scripted actions (origin state, then one
state per action) and a perfect copy of it from another folder, exactly as an attempt that wrote
the page's own index.html, style.css and script.js would be rendered, and scores the copy with the
official metric. It reports:

* the page does not load, or scripted actions raise on the target itself (the official evaluator
  aborts the whole evaluation then) or call Selenium features the platform does not serve;
* the annotated elements have zero total weight (the page scores 0 whatever is generated);
* files the page refers to that are not in its folder, and requests the sandbox blocks (anything
  outside the folder: the official run fetched CDN fonts and scripts, here they never load);
* whether the perfect copy scores 100, and if not, which states, elements and properties lose;
* targets whose compared property holds a ``url(...)``: computed values are absolute URLs, so a
  page rendered from another folder never equals the target (the official behaviour, kept).

A page with any of these is *flagged*. The check needs a browser but no database; storing the
results with the scenarios is the import command's job.
"""
from __future__ import annotations

import queue
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from evaluators.webui import target_store, weights
from evaluators.webui.aes import AesResult, StateScore, score_page
from evaluators.webui.elements import Element, PageState

#: Bumped whenever what the check looks at or leaves behind changes, so stored results are redone
#: (2: the target renders stored for the workers).
CHECK_VERSION = 2
#: How many losing elements/properties a perfect-copy explanation lists before summarising.
MAX_REASONS = 8
#: A perfect copy "scores 100" within this many points (sums of float weights).
FULL_SCORE_TOLERANCE = 1e-6

STATUS_OK = "ok"
STATUS_FLAGGED = "flagged"


@dataclass
class PageCheck:
    """What one run of a page found. ``problems`` is the flag: empty means the page is fine."""

    page: str
    content_hash: str = ""
    version: int = CHECK_VERSION
    browser: str = ""
    load_error: str | None = None
    #: "name: error" for each scripted action that raises on the target itself.
    failed_actions: list[str] = field(default_factory=list)
    unsupported_calls: list[str] = field(default_factory=list)
    #: Σ W over all states of the target scored against itself.
    total_weight: float = 0.0
    #: Paths (relative to the page folder) the page refers to or requests that do not exist.
    missing_files: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    #: AES × 100 of the perfect copy; None when the target could not be rendered.
    perfect_copy_score: float | None = None
    #: Why the perfect copy loses points (state: element property similarity), capped.
    perfect_copy_losses: list[str] = field(default_factory=list)
    #: "xpath property" of targets compared on a url(...) value.
    url_properties: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def zero_weight(self) -> bool:
        return self.load_error is None and self.total_weight <= 0.0

    @property
    def copy_below_full_score(self) -> bool:
        """The perfect copy loses points (a page with no weight at all is reported as such instead)."""
        return (not self.zero_weight and self.perfect_copy_score is not None
                and self.perfect_copy_score < 100.0 - FULL_SCORE_TOLERANCE)

    @property
    def problems(self) -> list[str]:
        found: list[str] = []
        if self.load_error:
            found.append(f"the page does not load: {self.load_error}")
        if self.failed_actions:
            found.append("scripted action(s) fail on the target page: " + "; ".join(self.failed_actions))
        if self.unsupported_calls:
            found.append("Selenium call(s) the platform does not serve: " + "; ".join(self.unsupported_calls))
        if self.zero_weight:
            found.append("the annotated elements have zero total weight (every reply scores 0)")
        if self.missing_files:
            found.append("missing file(s): " + ", ".join(self.missing_files))
        if self.blocked_requests:
            found.append("request(s) blocked by the sandbox: " + ", ".join(self.blocked_requests))
        if self.url_properties:
            found.append("compared on absolute url(...) values, which differ in any other folder: "
                         + ", ".join(self.url_properties))
        if self.copy_below_full_score:
            found.append(f"a perfect copy scores {self.perfect_copy_score:.2f}, not 100: "
                         + "; ".join(self.perfect_copy_losses))
        return found

    @property
    def status(self) -> str:
        return STATUS_FLAGGED if self.problems else STATUS_OK

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status
        data["problems"] = self.problems
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageCheck:
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{key: value for key, value in data.items() if key in known})


# ---------------------------------------------------------------------------------------------
# Files a page refers to


_CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)""", re.IGNORECASE)
_CSS_IMPORT = re.compile(r"""@import\s+(['"])([^'"]+)\1""", re.IGNORECASE)
#: Attributes that make the browser fetch a file when the element is in the page.
_FETCHED = {("img", "src"), ("script", "src"), ("link", "href"), ("source", "src"), ("video", "src"),
            ("video", "poster"), ("audio", "src"), ("iframe", "src"), ("embed", "src"), ("object", "data"),
            ("input", "src"), ("track", "src")}


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        for name, value in values.items():
            if (tag, name) in _FETCHED and value and (
                tag != "link" or "stylesheet" in values.get("rel", "").lower() or "icon" in values.get("rel", "")
            ):
                self.urls.append(value)
            if name == "style":
                self.css.append(value)
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.css.append(data)


def _css_references(css: str) -> list[str]:
    return [m.group(2) for m in _CSS_URL.finditer(css)] + [m.group(2) for m in _CSS_IMPORT.finditer(css)]


def _local_path(reference: str, base: Path) -> Path | None:
    """The file a relative reference names, or None for anything that is not a local file."""
    text = reference.strip()
    parts = urlsplit(text)
    if parts.scheme or parts.netloc or text.startswith(("#", "//")) or not parts.path:
        return None
    return base / url2pathname(unquote(parts.path))


def missing_references(page_dir: Path) -> list[str]:
    """Local files that index.html and its local stylesheets refer to and that are not there.

    Static, so it also finds assets of states no scripted action reaches (a hover image, say).
    """
    page_dir = Path(page_dir)
    index = page_dir / "index.html"
    if not index.is_file():
        return []
    parser = _References()
    parser.feed(index.read_text(encoding="utf-8", errors="replace"))
    references: list[tuple[str, Path]] = [(url, page_dir) for url in parser.urls]
    references += [(url, page_dir) for chunk in parser.css for url in _css_references(chunk)]
    for url in list(parser.urls):
        path = _local_path(url, page_dir)
        if path is not None and path.suffix.lower() == ".css" and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            references += [(ref, path.parent) for ref in _css_references(text)]
    missing: list[str] = []
    for url, base in references:
        path = _local_path(url, base)
        if path is None or path.exists():
            continue
        try:
            shown = str(path.resolve().relative_to(page_dir.resolve()))
        except ValueError:
            shown = url
        if shown not in missing:
            missing.append(shown)
    return missing


def _relative(url: str, page_dir: Path) -> str:
    try:
        return str(Path(url2pathname(urlsplit(url).path)).resolve().relative_to(page_dir.resolve()))
    except ValueError:
        return url


# ---------------------------------------------------------------------------------------------
# What a state says


def _scored_names(element: Element) -> list[str]:
    names = [element.filter_by] if element.filter_by else []
    for entry in element.eval_by:
        if entry in weights.IGNORED_NAMES:
            continue
        names.extend(weights.expand(entry, element))
    return [name for name in dict.fromkeys(names) if weights.is_known(name)]


def url_valued_targets(states: Iterable[PageState]) -> list[str]:
    """"xpath property" of every target compared for equality on a computed value holding url(...)."""
    found: list[str] = []
    for state in states:
        for element in state.elements:
            if not element.filter_by:
                continue
            for name in _scored_names(element):
                key = weights.style_key(name)
                if key is None or weights.KIND[name] != "choice":
                    continue
                if "url(" in element.styles.get(key, "") and f"{element.xpath} {name}" not in found:
                    found.append(f"{element.xpath} {name}")
    return found


def _state_losses(state: StateScore) -> list[str]:
    if state.action_failed:
        return [f"{state.name}: the action fails on the copy ({state.action_error})"]
    losses = [f"{state.name}: {target.xpath} has no counterpart" for target in state.unmatched]
    for match in state.matched:
        if match.score >= 1.0 - 1e-12:
            continue
        parts = [f"{row.name} {row.similarity:.2f}" for row in match.rows
                 if row.similarity is not None and row.similarity < 1.0]
        if match.position < 1.0:
            parts.append(f"position {match.position:.2f}")
        losses.append(f"{state.name}: {match.target_xpath} " + (", ".join(parts) or f"score {match.score:.3f}"))
    return losses


def perfect_copy_losses(result: AesResult, limit: int = MAX_REASONS) -> list[str]:
    losses = [loss for state in result.states for loss in _state_losses(state)]
    if len(losses) > limit:
        losses = losses[:limit] + [f"… and {len(losses) - limit} more"]
    return losses


# ---------------------------------------------------------------------------------------------
# Running pages


RenderFunction = Callable[[Path, Sequence[Any]], Any]


def _pad(target: Sequence[PageState], generated: Sequence[PageState]) -> list[PageState]:
    padded = list(generated)
    for state in target[len(padded):]:
        padded.append(PageState(name=state.name, elements=[]))
    return padded


def assess(name: str, page_dir: Path, target: Any, copy: Any, *, content_hash: str = "",
           browser: str = "", seconds: float = 0.0) -> PageCheck:
    """Turn a target render and a perfect-copy render (``RenderResult``s) into a :class:`PageCheck`."""
    check = PageCheck(page=name, content_hash=content_hash, browser=browser, seconds=seconds)
    check.missing_files = missing_references(page_dir)
    for url in target.missing_files:
        relative = _relative(url, page_dir)
        if relative not in check.missing_files:
            check.missing_files.append(relative)
    check.blocked_requests = list(dict.fromkeys(target.blocked_urls))
    check.unsupported_calls = list(dict.fromkeys(target.unsupported_calls))
    check.page_errors = list(target.page_errors)[:10]
    if target.load_error:
        check.load_error = target.load_error
        return check
    check.failed_actions = [f"{state.name}: {state.action_error}" for state in target.states[1:] if state.action_error]
    doms = [getattr(state, "dom", None) for state in target.states]
    check.total_weight = score_page(target.states, target.states).weight_sum
    check.url_properties = url_valued_targets(target.states)
    copy_states = [] if copy is None or copy.load_error else copy.states
    result = score_page(target.states, _pad(target.states, copy_states),
                        target_dom=cast(list[Mapping[str, str]], doms) if all(d is not None for d in doms) else None)
    check.perfect_copy_score = 100.0 * result.aes
    if copy is not None and copy.load_error:
        check.perfect_copy_losses = [f"the copy does not load: {copy.load_error}"]
    elif check.perfect_copy_score < 100.0 - FULL_SCORE_TOLERANCE:
        check.perfect_copy_losses = perfect_copy_losses(result)
    return check


def perfect_copy(page_dir: Path, into: Path) -> Path:
    """The page as an attempt that wrote its three files back would have it, in another folder."""
    copy = into / "page"
    shutil.copytree(page_dir, copy)
    return copy


class _Worker(threading.Thread):
    """One renderer on its own thread (Playwright's sync API keeps to the thread that started it).

    Takes ``(key, folder, actions file)`` jobs until it meets None; answers ``(key, RenderResult or
    the exception that stopped the render, browser version)``. With ``store_targets``, a target's
    render is taken with its screenshots and stored beside its folder for the workers
    (``evaluators.webui.target_store``).
    """

    def __init__(self, jobs: queue.Queue[tuple[Any, Path, Path] | None],
                 done: queue.Queue[tuple[Any, Any, str]], make_renderer: Callable[[], Any], *,
                 store_targets: bool = False) -> None:
        super().__init__(daemon=True, name="webui-page-check")
        self.jobs, self.done, self.make_renderer = jobs, done, make_renderer
        self.store_targets = store_targets

    def run(self) -> None:
        from evaluators.webui.selenium_compat import load_actions

        try:
            renderer = self.make_renderer()
        except Exception as exc:  # noqa: BLE001 - reported per page below
            while (job := self.jobs.get()) is not None:
                self.done.put((job[0], exc, ""))
            return
        try:
            while (job := self.jobs.get()) is not None:
                key, folder, actions_file = job
                stored = self.store_targets and key[1] == "target"
                try:
                    actions = load_actions(actions_file) if actions_file.exists() else []
                    result: Any = renderer.render_states(folder, actions, screenshots=stored)
                    if stored:
                        target_store.save(folder, result, renderer.browser_version)
                except Exception as exc:  # noqa: BLE001 - one broken page must not stop the others
                    result = exc
                self.done.put((key, result, getattr(renderer, "browser_version", "")))
        finally:
            renderer.close()


def check_pages(pages: Sequence[tuple[str, Path, str]], *, workers: int = 2,
                make_renderer: Callable[[], Any] | None = None,
                progress: Callable[[PageCheck], None] | None = None,
                store_targets: bool = False) -> list[PageCheck]:
    """Check ``(name, folder, content_hash)`` pages, ``workers`` renders at a time; results in page order.

    Each page needs two renders (target and copy), so two workers check a page in about the time
    of one render: the scripted sleeps, not the CPU, set the pace. ``store_targets``: each target's
    render is stored beside its folder, for the attempts at the page (the import's stored pages).
    """
    if make_renderer is None:
        from evaluators.webui.render import PageRenderer

        make_renderer = PageRenderer
    if not pages:
        return []
    jobs: queue.Queue[tuple[Any, Path, Path] | None] = queue.Queue()
    done: queue.Queue[tuple[Any, Any, str]] = queue.Queue()
    scratch = Path(tempfile.mkdtemp(prefix="magebench-page-check-"))
    try:
        for index, (_, folder, _) in enumerate(pages):
            folder = Path(folder)
            copy = perfect_copy(folder, scratch / str(index))
            jobs.put(((index, "target"), folder, folder / "actions.py"))
            jobs.put(((index, "copy"), copy, folder / "actions.py"))
        pool = [_Worker(jobs, done, make_renderer, store_targets=store_targets)
                for _ in range(max(1, min(workers, 2 * len(pages))))]
        for worker in pool:
            jobs.put(None)
            worker.start()
        renders: dict[tuple[int, str], Any] = {}
        checks: dict[int, PageCheck] = {}
        browser = ""
        while len(checks) < len(pages):
            (index, kind), result, version = done.get()
            renders[(index, kind)] = result
            browser = browser or version
            if (index, "target") not in renders or (index, "copy") not in renders:
                continue
            name, folder, content_hash = pages[index]
            target, copy = renders.pop((index, "target")), renders.pop((index, "copy"))
            if isinstance(target, Exception):
                check = PageCheck(page=name, content_hash=content_hash, browser=browser,
                                  load_error=f"the check could not render the page: {type(target).__name__}: {target}")
            else:
                copy_render = None if isinstance(copy, Exception) else copy
                seconds = target.seconds + (copy_render.seconds if copy_render is not None else 0.0)
                check = assess(name, Path(folder), target, copy_render, content_hash=content_hash,
                               browser=browser, seconds=round(seconds, 2))
                if copy_render is None:
                    check.perfect_copy_losses = [f"the copy could not be rendered: {copy!r}"]
            checks[index] = check
            if progress is not None:
                progress(check)
        for worker in pool:
            worker.join()
        return [checks[index] for index in range(len(pages))]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def summary_lines(checks: Sequence[PageCheck], *, reused: int = 0) -> list[str]:
    """The import report's page-check section: one line per flagged page, then the counts."""
    flagged = [check for check in checks if check.problems]
    lines = []
    for check in flagged:
        lines.append(f"webui page {check.page!r} flagged:")
        lines.extend(f"  - {problem}" for problem in check.problems)
    counts = {
        "target actions failing": sum(1 for c in checks if c.failed_actions),
        "zero total weight": sum(1 for c in checks if c.zero_weight),
        "missing files": sum(1 for c in checks if c.missing_files),
        "blocked requests": sum(1 for c in checks if c.blocked_requests),
        "url(...) values compared": sum(1 for c in checks if c.url_properties),
        "perfect copy below 100": sum(1 for c in checks if c.copy_below_full_score),
        "not loading": sum(1 for c in checks if c.load_error),
    }
    detail = ", ".join(f"{label} {n}" for label, n in counts.items() if n)
    lines.append(f"webui page check: {len(checks)} page(s), {len(flagged)} flagged"
                 + (f" ({detail})" if detail else "")
                 + (f"; {reused} unchanged page(s) kept their earlier check" if reused else ""))
    return lines
