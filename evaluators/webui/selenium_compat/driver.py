"""A Selenium WebDriver / WebElement facade over one Playwright page.

The facade reproduces what chromedriver (the driver behind the official MageBench run) does for
the calls that official actions.py files make, not what Playwright would do by default:

* lookups never wait (implicit wait 0): one immediate query, ``NoSuchElementException`` at once;
* ``click()`` scrolls the element into view if needed, takes the centre of its visible part, and
  raises ``ElementClickInterceptedException`` when another element is on top there for 1 s (the
  retry window chromedriver gives); an ``<option>`` click selects it on its ``<select>``;
* ``send_keys`` focuses the element (caret at the end of text fields) and types keystrokes; a
  ``<color>`` input gets its value assigned without events (chromedriver treats only ``color`` as
  non-typeable, see ``NONTYPEABLE_INPUT_TYPES``); range and date inputs receive keystrokes; a
  closed ``<select>`` gets Chrome's type-ahead, emulated in the page so that non-ASCII text works;
* ``clear()`` and ``submit()`` follow Selenium's atoms (focus, empty, ``change``, blur; a
  cancelable ``submit`` event, then ``form.submit()``);
* dialogs (alert, confirm, prompt) are accepted, as the official harness's listener does.

The pointer position is tracked here (Playwright does not expose it) and persists across
actions on the same page; see :mod:`.action_chains`.
"""
from __future__ import annotations

import re
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Dialog, ElementHandle, Page
from playwright.sync_api import Error as PlaywrightError

from . import _dom
from .by import By, to_w3c_locator
from .errors import (
    ElementClickInterceptedException,
    ElementNotInteractableException,
    InvalidElementStateException,
    InvalidSelectorException,
    JavascriptException,
    MoveTargetOutOfBoundsException,
    NoSuchElementException,
    StaleElementReferenceException,
    UnsupportedSeleniumCall,
    WebDriverException,
)
from .keys import MODIFIERS, PLAYWRIGHT_KEYS, Keys, is_key

#: Input types whose value chromedriver assigns instead of typing (its kNontypeableControlTypes).
NONTYPEABLE_INPUT_TYPES = frozenset({"color"})
#: chromedriver assigns ``element.value`` and fires nothing; the W3C text would fire input+change.
NONTYPEABLE_FIRES_EVENTS = False
#: Input types for which send_keys moves the caret to the end first (chromedriver's list).
TEXT_CONTROL_TYPES = frozenset({"text", "search", "tel", "url", "password"})
#: How long chromedriver keeps retrying a click whose target is covered by another element.
CLICK_RETRY_SECONDS = 1.0
CLICK_RETRY_STEP_SECONDS = 0.05
#: chromedriver's rule for counting presses as a double (or triple) click.
MULTI_CLICK_SECONDS = 0.5
MULTI_CLICK_RANGE = 4

LOCATOR_STRATEGIES = frozenset({"css selector", "tag name", "xpath", "link text", "partial link text"})

_ERROR_CODES: dict[str, type[Exception]] = {
    "stale": StaleElementReferenceException,
    "notinteractable": ElementNotInteractableException,
    "invalidstate": InvalidElementStateException,
    "selector": InvalidSelectorException,
    "noform": WebDriverException,
    "unsupported": UnsupportedSeleniumCall,
}
_PAGE_ERROR = re.compile(r"MB:(\w+):([^\n]*)")
_STALE_MARKERS = ("Execution context was destroyed", "Cannot find context", "not attached to the DOM",
                  "JSHandle is disposed", "Element is not attached")
_FATAL_MARKERS = ("Target crashed", "Target closed", "has been closed", "Browser closed", "Connection closed")

_pages_with_dialog_handler: weakref.WeakSet[Page] = weakref.WeakSet()


def accept_dialogs(page: Page) -> None:
    """Accept every alert, confirm and prompt on ``page`` (prompts get their default text).

    Playwright dismisses dialogs when no handler is registered; the official harness accepts them,
    and pages such as note-app delete an item only when ``confirm()`` returns true.
    """
    if page in _pages_with_dialog_handler:
        return
    page.on("dialog", _accept_dialog)
    _pages_with_dialog_handler.add(page)


def _accept_dialog(dialog: Dialog) -> None:
    try:
        if dialog.type == "prompt":
            dialog.accept(dialog.default_value)
        else:
            dialog.accept()
    except PlaywrightError:
        pass  # the page closed or the dialog went away on its own


def is_fatal(exc: BaseException) -> bool:
    """Whether a Playwright error means the page itself is gone (crashed, killed or closed)."""
    return isinstance(exc, PlaywrightError) and any(m in exc.message for m in _FATAL_MARKERS)


def translate_error(exc: PlaywrightError, *, script: bool = False) -> Exception:
    """The Selenium exception a Playwright error stands for; fatal errors are returned unchanged."""
    message = exc.message
    tagged = _PAGE_ERROR.search(message)
    if tagged:
        return _ERROR_CODES.get(tagged[1], WebDriverException)(tagged[2].strip())
    if is_fatal(exc):
        return exc
    first_line = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    if any(marker in message for marker in _STALE_MARKERS):
        return StaleElementReferenceException(f"stale element reference: {first_line}")
    if script:
        return JavascriptException(f"javascript error: {first_line}")
    return WebDriverException(first_line)


def keys_to_typing(values: tuple[Any, ...]) -> str:
    """Selenium's flattening of send_keys arguments: strings as they are, numbers as text."""
    parts: list[str] = []
    for value in values:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            parts.append(str(value))
        elif isinstance(value, str):
            parts.append(value)
        else:
            parts.extend(str(item) for item in value)
    return "".join(parts)


class CompatDriver:
    """What an actions.py function receives as ``driver``."""

    def __init__(self, page: Page) -> None:
        self.page = page
        #: Pointer position in viewport pixels; WebDriver starts it at the top-left corner.
        self.pointer: tuple[int, int] = (0, 0)
        #: Called with the number of seconds before every deliberate wait (sleeps, pauses,
        #: pointer-move durations), so a watchdog can tell waiting from hanging.
        self.on_wait: Callable[[float], None] | None = None
        #: Called before every command; the renderer waits there for a pending reload to finish,
        #: as chromedriver waits for pending navigations before it runs a command.
        self.before_command: Callable[[], None] | None = None
        #: Called when a command has started a navigation (a native form submit): the browser
        #: requests the new document a moment later, and a read in between must wait for it.
        self.on_navigation_started: Callable[[], None] | None = None
        #: How a wait passes: the page's clock when the renderer gives one (a virtual clock makes
        #: waits cost no wall time); Playwright's wall-clock wait otherwise.
        self.sleeper: Callable[[float], None] | None = None
        #: Seconds that waits stood for but did not take in wall time (see :meth:`clock`).
        self._skipped = 0.0
        self._last_press: tuple[float, int, int, str, int] | None = None
        accept_dialogs(page)

    # --- Selenium WebDriver surface ----------------------------------------------------------

    def find_element(self, by: str = By.ID, value: str | None = None) -> CompatElement:
        return _first(self._find(None, by, value), by, value)

    def find_elements(self, by: str = By.ID, value: str | None = None) -> list[CompatElement]:
        return self._find(None, by, value)

    def execute_script(self, script: str, *args: Any) -> Any:
        """Run ``script`` as a function body with ``arguments``, like WebDriver's Execute Script."""
        source = "(args) => (function () {\n" + script + "\n}).apply(window, args)"
        self._settle()
        try:
            handle = self.page.evaluate_handle(source, [_to_js(arg) for arg in args])
        except PlaywrightError as exc:
            raise _raise_translated(exc, script=True) from exc
        element = handle.as_element()
        if element is not None:
            return CompatElement(self, element)
        try:
            return handle.json_value()
        except PlaywrightError:
            return None  # values JSON cannot carry (nodes in arrays, functions) come back as None
        finally:
            handle.dispose()

    def save_screenshot(self, filename: str | Path) -> bool:
        self.page.screenshot(path=str(filename), caret="initial")
        return True

    def get_screenshot_as_png(self) -> bytes:
        # caret="initial" as in the renderer: hiding the caret would leave style="" on inputs
        return self.page.screenshot(caret="initial")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedSeleniumCall(f"WebDriver.{name} is not supported")

    # --- waiting -----------------------------------------------------------------------------

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` of the page's time pass while Playwright keeps dispatching events
        (dialogs are accepted meanwhile); on a virtual clock that takes almost no wall time."""
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        if self.on_wait is not None:
            self.on_wait(seconds)
        started = time.monotonic()
        if self.sleeper is not None:
            self.sleeper(seconds)
        else:
            self.page.wait_for_timeout(seconds * 1000)
        self._skipped += max(0.0, seconds - (time.monotonic() - started))

    def clock(self) -> float:
        """Seconds on the session's clock: wall time, each wait counted for its full length.

        chromedriver's timing rules (a double click within 500 ms, a covered click retried for 1 s)
        are about the page's time; with a virtual clock a wait takes almost no wall time, and a
        click, a 0.5 s sleep and another click must still be two single clicks.
        """
        return time.monotonic() + self._skipped

    def _settle(self) -> None:
        if self.before_command is not None:
            self.before_command()

    # --- lookups -----------------------------------------------------------------------------

    def _find(self, root: ElementHandle | None, by: str, value: Any) -> list[CompatElement]:
        if not isinstance(value, str):
            raise WebDriverException(f"invalid argument: the locator value must be a string, not {value!r}")
        using, target = to_w3c_locator(by, value)
        if using not in LOCATOR_STRATEGIES:
            raise InvalidSelectorException(f"invalid locator: {by!r}")
        self._settle()
        try:
            array = self.page.evaluate_handle(_dom.FIND_CALL, [root, using, target])
        except PlaywrightError as exc:
            raise _raise_translated(exc) from exc
        try:
            properties = array.get_properties()
        finally:
            array.dispose()
        found: list[CompatElement] = []
        for key in sorted((k for k in properties if k.isdigit()), key=int):
            element = properties[key].as_element()
            if element is not None:
                found.append(CompatElement(self, element))
        return found

    def _call(self, handle: ElementHandle, name: str, *args: Any) -> Any:
        self._settle()
        try:
            return handle.evaluate(_dom.ELEMENT_CALL, [name, list(args)])
        except PlaywrightError as exc:
            raise _raise_translated(exc) from exc

    # --- pointer -----------------------------------------------------------------------------

    def _viewport(self) -> tuple[int, int]:
        size = self.page.viewport_size
        if size:
            return size["width"], size["height"]
        width, height = self.page.evaluate("() => [Math.floor(innerWidth), Math.floor(innerHeight)]")
        return int(width), int(height)

    def _element_point(self, element: CompatElement) -> tuple[int, int]:
        point = self._call(element.handle, "pointerPoint")
        return int(point["x"]), int(point["y"])

    def _pointer_move(self, x: int, y: int, duration_ms: int) -> None:
        width, height = self._viewport()
        if x < 0 or y < 0 or x > width or y > height:
            raise MoveTargetOutOfBoundsException(
                f"move target out of bounds: ({x}, {y}) is outside the {width}x{height} viewport")
        self.page.mouse.move(x, y)
        self.pointer = (x, y)
        if duration_ms > 0:
            # chromedriver dispatches one mousemove, then sleeps for the tick's duration.
            self.wait(duration_ms / 1000)

    def _pointer_down(self, button: str) -> None:
        x, y = self.pointer
        now = self.clock()
        count = 1
        if self._last_press is not None:
            when, last_x, last_y, last_button, last_count = self._last_press
            if (last_button == button and now - when <= MULTI_CLICK_SECONDS
                    and abs(x - last_x) <= MULTI_CLICK_RANGE and abs(y - last_y) <= MULTI_CLICK_RANGE):
                count = last_count + 1
        self._last_press = (now, x, y, button, count)
        self.page.mouse.down(button=button, click_count=count)  # type: ignore[arg-type]

    def _pointer_up(self, button: str) -> None:
        count = self._last_press[4] if self._last_press and self._last_press[3] == button else 1
        self.page.mouse.up(button=button, click_count=count)  # type: ignore[arg-type]

    # --- keyboard ----------------------------------------------------------------------------

    def _press_char(self, char: str) -> None:
        try:
            self.page.keyboard.press(char)
        except PlaywrightError as exc:
            if is_fatal(exc):
                raise
            self.page.keyboard.insert_text(char)  # not on a US keyboard (CJK text): insert it

    def _key_name(self, char: str) -> str:
        name = PLAYWRIGHT_KEYS.get(char) or {"\n": "Enter", "\r": "Enter", "\t": "Tab"}.get(char)
        if name is None:
            raise UnsupportedSeleniumCall(f"the WebDriver key U+{ord(char):04X} is not supported")
        return name

    def _type(self, text: str, *, select: ElementHandle | None = None) -> None:
        """Type into the focused element; modifier keys stay down until NULL or the end."""
        keyboard = self.page.keyboard
        held: list[str] = []
        run: list[str] = []

        def flush() -> None:
            if not run:
                return
            chunk = "".join(run)
            run.clear()
            if select is not None:
                self._call(select, "typeAhead", chunk)
            else:
                keyboard.type(chunk)

        for char in text:
            if is_key(char) or (select is not None and char in "\n\r\t"):
                flush()
                if char == Keys.NULL:
                    while held:
                        keyboard.up(held.pop())
                    continue
                name = self._key_name(char)
                if name in MODIFIERS:
                    if name in held:
                        held.remove(name)
                        keyboard.up(name)
                    else:
                        held.append(name)
                        keyboard.down(name)
                else:
                    keyboard.press(name)
            elif held:
                flush()
                self._press_char(char)
            else:
                run.append(char)
        flush()
        while held:
            keyboard.up(held.pop())


class CompatElement:
    """A WebElement: a Playwright element handle plus the driver it came from."""

    def __init__(self, driver: CompatDriver, handle: ElementHandle) -> None:
        self._driver = driver
        self.handle = handle

    def __repr__(self) -> str:
        return f"<CompatElement {self.handle!r}>"

    @property
    def parent(self) -> CompatDriver:
        return self._driver

    # --- lookups -----------------------------------------------------------------------------

    def find_element(self, by: str = By.ID, value: str | None = None) -> CompatElement:
        return _first(self._driver._find(self.handle, by, value), by, value)

    def find_elements(self, by: str = By.ID, value: str | None = None) -> list[CompatElement]:
        return self._driver._find(self.handle, by, value)

    # --- reading -----------------------------------------------------------------------------

    def _info(self, what: str, arg: str | None = None) -> Any:
        return self._driver._call(self.handle, "info", what, arg)

    @property
    def tag_name(self) -> str:
        return str(self._info("tag"))

    @property
    def text(self) -> str:
        """Rendered text (``innerText``, trimmed); empty for an element that is not displayed."""
        return str(self._info("text"))

    @property
    def rect(self) -> dict[str, float]:
        """getBoundingClientRect in document coordinates (scroll offsets added), as WebDriver's."""
        return dict(self._info("rect"))

    @property
    def location(self) -> dict[str, int]:
        rect = self.rect
        return {"x": round(rect["x"]), "y": round(rect["y"])}

    @property
    def size(self) -> dict[str, float]:
        rect = self.rect
        return {"height": rect["height"], "width": rect["width"]}

    def is_displayed(self) -> bool:
        return bool(self._info("displayed"))

    def is_enabled(self) -> bool:
        return bool(self._info("enabled"))

    def is_selected(self) -> bool:
        return bool(self._info("selected"))

    def get_attribute(self, name: str) -> str | None:
        return self._info("attribute", name)

    def get_dom_attribute(self, name: str) -> str | None:
        return self._info("dom_attribute", name)

    def get_property(self, name: str) -> Any:
        return self._info("property", name)

    def value_of_css_property(self, property_name: str) -> str:
        return str(self._info("css", property_name))

    # --- interacting -------------------------------------------------------------------------

    def click(self) -> None:
        kind = self._driver._call(self.handle, "kind")
        if kind["tag"] == "option":
            self._driver._call(self.handle, "clickOption")
            return
        if kind["tag"] == "input" and kind["type"] == "file":
            raise WebDriverException("invalid argument: a file input cannot be clicked through WebDriver")
        # The retry is counted in the page's time (the waits), not the session clock: on a virtual
        # clock a busy host's slow calls would otherwise cut the page's second short.
        waited = 0.0
        point = self._driver._call(self.handle, "clickPoint")
        while point["blocker"] is not None:
            if waited >= CLICK_RETRY_SECONDS - 1e-9:
                raise ElementClickInterceptedException(
                    f"element click intercepted: Element {point['target']} is not clickable at point "
                    f"({point['x']}, {point['y']}). Other element would receive the click: {point['blocker']}")
            self._driver.wait(CLICK_RETRY_STEP_SECONDS)
            waited += CLICK_RETRY_STEP_SECONDS
            point = self._driver._call(self.handle, "clickPoint")
        x, y = int(point["x"]), int(point["y"])
        mouse = self._driver.page.mouse
        mouse.move(x, y)
        mouse.down()
        mouse.up()
        self._driver.pointer = (x, y)

    def send_keys(self, *value: Any) -> None:
        text = keys_to_typing(value)
        kind = self._driver._call(self.handle, "kind")
        tag, input_type = kind["tag"], kind["type"]
        if tag == "input" and input_type == "file":
            raise UnsupportedSeleniumCall("WebElement.send_keys on a file input is not supported")
        if tag == "input" and input_type in NONTYPEABLE_INPUT_TYPES:
            self._driver._call(self.handle, "setValue", text, NONTYPEABLE_FIRES_EVENTS)
            return
        is_text = (tag == "input" and input_type in TEXT_CONTROL_TYPES) or tag == "textarea"
        self._driver._call(self.handle, "focusForKeys", is_text)
        self._driver._type(text, select=self.handle if tag == "select" else None)

    def clear(self) -> None:
        self._driver._call(self.handle, "clear")

    def submit(self) -> None:
        if self._driver._call(self.handle, "submit") and self._driver.on_navigation_started is not None:
            self._driver.on_navigation_started()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedSeleniumCall(f"WebElement.{name} is not supported")


def _first(found: list[CompatElement], by: str, value: Any) -> CompatElement:
    if not found:
        raise NoSuchElementException(
            f'no such element: Unable to locate element: {{"method":"{by}","selector":"{value}"}}')
    return found[0]


def _to_js(value: Any) -> Any:
    if isinstance(value, CompatElement):
        return value.handle
    if isinstance(value, (list, tuple)):
        return [_to_js(item) for item in value]
    if isinstance(value, dict):
        return {key: _to_js(item) for key, item in value.items()}
    return value


def _raise_translated(exc: PlaywrightError, *, script: bool = False) -> Exception:
    translated = translate_error(exc, script=script)
    if translated is exc:
        raise exc
    return translated
