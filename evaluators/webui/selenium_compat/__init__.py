"""Run official MageBench WebUI ``actions.py`` files, written for Selenium, on a Playwright page.

``load_actions(path)`` returns the file's ``actions`` list with ``selenium.webdriver.common.by``,
``.action_chains`` and ``.keys`` served by this package; each function is then called with a
:class:`CompatDriver` wrapping the page. See :mod:`.driver` and :mod:`.action_chains` for where
the facade follows chromedriver and where it follows Playwright.
"""
from .action_chains import ActionChains
from .by import By
from .driver import CompatDriver, CompatElement, accept_dialogs, is_fatal
from .errors import (
    ActionsFileError,
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
from .keys import Keys
from .loader import ALLOWED_IMPORTS, cooperative_sleep, load_actions

__all__ = [
    "ALLOWED_IMPORTS", "ActionChains", "ActionsFileError", "By", "CompatDriver", "CompatElement",
    "ElementClickInterceptedException", "ElementNotInteractableException", "InvalidElementStateException",
    "InvalidSelectorException", "JavascriptException", "Keys", "MoveTargetOutOfBoundsException",
    "NoSuchElementException", "StaleElementReferenceException", "UnsupportedSeleniumCall",
    "WebDriverException", "accept_dialogs", "cooperative_sleep", "is_fatal", "load_actions",
]
