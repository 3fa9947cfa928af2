"""What the browser layer extracts from a rendered page and the AES metric consumes.

The browser side (``evaluators.webui.browser``) turns a live page into a list of
:class:`Element`; the metric side (``evaluators.webui.aes``) scores lists of elements and never
touches a browser. Both sides agree only on this module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Computed CSS properties read for every element, as ``getComputedStyle(el).getPropertyValue``
#: returns them (the value Selenium's ``value_of_css_property`` reports). Names that are not CSS
#: properties (``src``, ``type``) read as the empty string, exactly as they do through Selenium.
CSS_PROPERTIES: tuple[str, ...] = (
    "color", "background", "background-color", "background-image", "background-repeat", "background-size",
    "border-top-color", "border-right-color", "border-bottom-color", "border-left-color",
    "border-top-width", "border-right-width", "border-bottom-width", "border-left-width",
    "border-top-style", "border-right-style", "border-bottom-style", "border-left-style",
    "border-top-left-radius", "border-top-right-radius", "border-bottom-right-radius", "border-bottom-left-radius",
    "outline-style", "outline-width", "outline-color",
    "font-family", "font-size", "font-style", "font-weight",
    "height", "width", "tab-size", "letter-spacing", "box-shadow", "display", "text-shadow",
    "src", "type",
)


@dataclass(frozen=True)
class Element:
    """One displayed descendant of ``<body>`` with a box of area > 0.1 px².

    ``index`` is the element's position in document order among all extracted elements;
    ``rect`` is Selenium's ``element.rect``: (x, y, width, height) in CSS pixels of the page
    (document coordinates, not viewport); ``text`` is the rendered text (Selenium ``.text``,
    i.e. ``innerText`` trimmed); ``attributes`` holds every attribute as written in the DOM
    (``class``, ``data-filter-by``, ``data-evalby``, ``placeholder``, ``value``, …);
    ``styles`` maps every name in CSS_PROPERTIES to its computed value; ``descendants`` counts
    all element descendants (not text nodes); ``outer_html`` is ``outerHTML`` at extraction time,
    used to tell which target elements an interaction changed.
    """

    index: int
    tag: str
    rect: tuple[float, float, float, float]
    text: str
    attributes: dict[str, str]
    styles: dict[str, str]
    descendants: int
    outer_html: str
    xpath: str = ""

    @property
    def box(self) -> tuple[float, float, float, float]:
        x, y, w, h = self.rect
        return (x, y, x + w, y + h)

    @property
    def area(self) -> float:
        return self.rect[2] * self.rect[3]

    @property
    def filter_by(self) -> str | None:
        return self.attributes.get("data-filter-by")

    @property
    def eval_by(self) -> list[str]:
        raw = self.attributes.get("data-evalby", "")
        return [part for part in raw.split("|")] if raw else []

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "tag": self.tag, "rect": list(self.rect), "text": self.text,
                "attributes": self.attributes, "styles": self.styles, "descendants": self.descendants,
                "xpath": self.xpath}


@dataclass
class PageState:
    """A page after loading (name ``origin``) or after one scripted action (the function's name).

    ``action_error`` is set when the action raised on this page (the official "action failed");
    ``screenshot`` is PNG bytes of the viewport when one was taken.
    """

    name: str
    elements: list[Element]
    action_error: str | None = None
    screenshot: bytes | None = None
    console_errors: list[str] = field(default_factory=list)
    #: xpath → outerHTML of every <body> descendant, hidden ones included: the official rule for
    #: leaving unchanged elements out of a state compares the whole DOM, not only displayed elements.
    dom: dict[str, str] | None = None
