"""Exceptions raised through the Selenium facade, named as Selenium names them.

Scripted actions never catch exceptions (no actions.py has a try block), so these only need the
right names and messages for the "action failed" record. ``UnsupportedSeleniumCall`` is kept apart
from ``WebDriverException`` on purpose: it means the platform cannot run the call at all, which is
not the generated page's fault.
"""
from __future__ import annotations


class WebDriverException(Exception):
    def __init__(self, msg: str = "") -> None:
        super().__init__(msg)
        self.msg = msg

    def __str__(self) -> str:
        return self.msg


class NoSuchElementException(WebDriverException):
    pass


class StaleElementReferenceException(WebDriverException):
    pass


class ElementNotInteractableException(WebDriverException):
    pass


class ElementClickInterceptedException(WebDriverException):
    pass


class InvalidElementStateException(WebDriverException):
    pass


class InvalidSelectorException(WebDriverException):
    pass


class JavascriptException(WebDriverException):
    pass


class MoveTargetOutOfBoundsException(WebDriverException):
    pass


class UnsupportedSeleniumCall(NotImplementedError):
    """A Selenium method or argument outside the surface that official actions.py files use."""


class ActionsFileError(Exception):
    """An actions.py that cannot be loaded: bad syntax, a forbidden import, no ``actions`` list."""
