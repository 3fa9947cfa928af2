"""``selenium.webdriver.common.by``: locator strategy names, with the strings Selenium sends."""
from __future__ import annotations


class By:
    ID = "id"
    XPATH = "xpath"
    LINK_TEXT = "link text"
    PARTIAL_LINK_TEXT = "partial link text"
    NAME = "name"
    TAG_NAME = "tag name"
    CLASS_NAME = "class name"
    CSS_SELECTOR = "css selector"


def to_w3c_locator(by: str, value: str) -> tuple[str, str]:
    """Selenium 4's Python client rewrites three strategies as CSS before sending them.

    The rewrite is textual and unescaped, exactly like the client's, so a class name holding a
    space or starting with a digit fails or matches here just as it did in the reference run.
    """
    if by == By.ID:
        return By.CSS_SELECTOR, f'[id="{value}"]'
    if by == By.CLASS_NAME:
        return By.CSS_SELECTOR, f".{value}"
    if by == By.NAME:
        return By.CSS_SELECTOR, f'[name="{value}"]'
    return by, value
