"""``selenium.webdriver.common.action_chains.ActionChains`` over Playwright's mouse and keyboard.

Semantics kept from Selenium 4 + chromedriver:

* builder methods queue steps; ``perform()`` empties the queue *before* running it, so a chain
  reused across loop iterations does not replay earlier steps, and a failing step does not
  linger in the queue;
* every pointer move is one ``mousemove`` followed by the move's duration (250 ms by default,
  as Selenium's ActionChains sends it); ``pause(s)`` waits ``s`` seconds;
* an element target is scrolled into view when needed and the move goes to the centre of its
  visible part; ``move_to_element_with_offset`` offsets from that centre (Selenium 4 / W3C, not
  Selenium 3's top-left corner); ``move_by_offset`` moves from the pointer position tracked on
  the driver, which persists across actions on the same page; a point outside the viewport
  raises ``MoveTargetOutOfBoundsException``;
* presses count as double clicks by chromedriver's rule (same button, ≤ 4 px, ≤ 500 ms).

One deliberate difference: ``drag_and_drop`` (and any press–move–release on a ``draggable``
element) performs a real HTML5 drag and drop, because Playwright's Chromium mouse drives the
browser's drag machinery. WebDriver's synthetic pointer events are reported not to start HTML5
drags in Chrome (w3c/webdriver#1488, SeleniumHQ/selenium#6235), so the reference run of the two
pages that use it (Drag-n-Drop, sortable-list) most likely saw no drop at all. The platform
follows Playwright here: both the target and the generated page are rendered the same way.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .driver import CompatDriver, CompatElement, keys_to_typing
from .errors import UnsupportedSeleniumCall
from .keys import is_key

LEFT, RIGHT = "left", "right"


class ActionChains:
    def __init__(self, driver: CompatDriver, duration: int = 250, devices: Any = None) -> None:
        if not isinstance(driver, CompatDriver):
            raise TypeError(f"ActionChains needs the driver passed to the action, not {driver!r}")
        if devices is not None:
            raise UnsupportedSeleniumCall("ActionChains(devices=...) is not supported")
        self._driver = driver
        self._duration = int(duration)
        self._queue: list[Callable[[], None]] = []

    def perform(self) -> None:
        steps, self._queue = self._queue, []
        self._driver._settle()
        for step in steps:
            step()

    def reset_actions(self) -> None:
        self._queue = []

    # --- pointer -----------------------------------------------------------------------------

    def _then(self, step: Callable[[], None]) -> ActionChains:
        self._queue.append(step)
        return self

    def _move_to(self, element: CompatElement, x_offset: int = 0, y_offset: int = 0) -> None:
        x, y = self._driver._element_point(element)
        self._driver._pointer_move(x + int(x_offset), y + int(y_offset), self._duration)

    def move_to_element(self, to_element: CompatElement) -> ActionChains:
        return self._then(lambda: self._move_to(to_element))

    def move_to_element_with_offset(self, to_element: CompatElement, xoffset: int, yoffset: int) -> ActionChains:
        return self._then(lambda: self._move_to(to_element, xoffset, yoffset))

    def move_by_offset(self, xoffset: int, yoffset: int) -> ActionChains:
        def step() -> None:
            x, y = self._driver.pointer
            self._driver._pointer_move(x + int(xoffset), y + int(yoffset), self._duration)
        return self._then(step)

    def click(self, on_element: CompatElement | None = None) -> ActionChains:
        if on_element is not None:
            self.move_to_element(on_element)
        self._then(lambda: self._driver._pointer_down(LEFT))
        return self._then(lambda: self._driver._pointer_up(LEFT))

    def click_and_hold(self, on_element: CompatElement | None = None) -> ActionChains:
        if on_element is not None:
            self.move_to_element(on_element)
        return self._then(lambda: self._driver._pointer_down(LEFT))

    def release(self, on_element: CompatElement | None = None) -> ActionChains:
        if on_element is not None:
            self.move_to_element(on_element)
        return self._then(lambda: self._driver._pointer_up(LEFT))

    def double_click(self, on_element: CompatElement | None = None) -> ActionChains:
        if on_element is not None:
            self.move_to_element(on_element)
        for _ in range(2):
            self._then(lambda: self._driver._pointer_down(LEFT))
            self._then(lambda: self._driver._pointer_up(LEFT))
        return self

    def context_click(self, on_element: CompatElement | None = None) -> ActionChains:
        if on_element is not None:
            self.move_to_element(on_element)
        self._then(lambda: self._driver._pointer_down(RIGHT))
        return self._then(lambda: self._driver._pointer_up(RIGHT))

    def drag_and_drop(self, source: CompatElement, target: CompatElement) -> ActionChains:
        self.click_and_hold(source)
        return self.release(target)

    def drag_and_drop_by_offset(self, source: CompatElement, xoffset: int, yoffset: int) -> ActionChains:
        self.click_and_hold(source)
        self.move_by_offset(xoffset, yoffset)
        return self.release()

    def pause(self, seconds: float) -> ActionChains:
        return self._then(lambda: self._driver.wait(float(seconds)))

    # --- keyboard ----------------------------------------------------------------------------

    def _key(self, value: str) -> str:
        if len(value) != 1:
            raise UnsupportedSeleniumCall(f"ActionChains key actions take one key, not {value!r}")
        return self._driver._key_name(value) if is_key(value) else value

    def key_down(self, value: str, element: CompatElement | None = None) -> ActionChains:
        if element is not None:
            self.click(element)
        return self._then(lambda: self._driver.page.keyboard.down(self._key(value)))

    def key_up(self, value: str, element: CompatElement | None = None) -> ActionChains:
        if element is not None:
            self.click(element)
        return self._then(lambda: self._driver.page.keyboard.up(self._key(value)))

    def send_keys(self, *keys_to_send: Any) -> ActionChains:
        """Each key pressed and released in turn on whatever has focus (the page if nothing does)."""
        text = keys_to_typing(keys_to_send)

        def step() -> None:
            for char in text:
                if is_key(char):
                    self._driver.page.keyboard.press(self._driver._key_name(char))
                else:
                    self._driver._press_char(char)
        return self._then(step)

    def send_keys_to_element(self, element: CompatElement, *keys_to_send: Any) -> ActionChains:
        self.click(element)
        return self.send_keys(*keys_to_send)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedSeleniumCall(f"ActionChains.{name} is not supported")
