"""A crawl of the site through Django's test client: from a few pages, every same-site address a page names
(its links, and the stylesheets, scripts, images and chart data it loads), breadth first, each once.

A form a visitor submits with GET (a board's filters, a comparison's pair) is sent as shown and with each
choice of its lists and boxes. Addresses that differ only in the page of rows or columns they show count as
one, and one path is visited with at most QUERIES_PER_PATH queries, so the crawl ends. Every address must
answer 2xx, or redirect to one that does.
"""
from __future__ import annotations

import html
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

from django.conf import settings
from django.contrib.staticfiles import finders
from django.urls import Resolver404, resolve

#: Query keys whose value picks other rows or columns of the same page: one value of each is enough.
ROW_KEYS = {"page", "cols"}
#: Addresses that are not pages to GET by design: logging out is a POST (a GET answers 405).
NOT_PAGES = ("/accounts/logout/",)
#: Attributes that name an address a page loads: links, stylesheets, scripts, images, and what a page's
#: script fetches (chart data, a replay's steps, plotly.js). The site's templates quote every attribute.
ADDRESS = re.compile(r'\s(?:href|src|data-src|data-plotly|data-pages)="([^"]*)"')
#: A form sent with GET, whose fields the parser reads.
GET_FORM = re.compile(r'<form\b[^>]*\bmethod="get".*?</form>', re.IGNORECASE | re.DOTALL)
#: A path segment or query value that is Python's None: a link built from a value that is not there.
NONE = re.compile(r"[/=]None(?:[/&]|$)")
#: Different queries of one path the crawl visits at most.
QUERIES_PER_PATH = 40


@dataclass
class _GetForm:
    """A form a visitor submits with GET (a board's filters, a comparison's pair): its fields as shown,
    and every choice of each of its lists and boxes."""

    action: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    choices: dict[str, list[str]] = field(default_factory=dict)

    def queries(self) -> list[str]:
        """The form as shown, then once with each choice of each list or box made (the others as shown)."""
        shown = [urlencode(self.fields)]
        for name, values in self.choices.items():
            others = [(key, value) for key, value in self.fields if key != name]
            shown += [urlencode([*others, (name, value)]) for value in values]
        return [f"{self.action}?{query}" for query in shown]


class _GetForms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[_GetForm] = []
        #: The GET form being read (None inside any other form, and outside forms).
        self.form: _GetForm | None = None
        #: The list being read, and whether one of its options is selected.
        self.select: tuple[str, bool] | None = None
        #: An option without a value, whose text is its value: its text so far, and whether it is selected.
        self.option: tuple[list[str], bool] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.form = _GetForm(values.get("action", "")) if values.get("method", "").lower() == "get" else None
            if self.form is not None:
                self.forms.append(self.form)
        elif self.form is not None and "disabled" not in values:
            self._field(tag, values, self.form)

    def _field(self, tag: str, values: dict[str, str], form: _GetForm) -> None:
        name = values.get("name", "")
        if tag == "input" and name and values.get("type") in ("checkbox", "radio"):
            if "checked" in values:
                form.fields.append((name, values.get("value", "on")))
            form.choices.setdefault(name, []).append(values.get("value", "on"))
        elif tag == "input" and name:
            form.fields.append((name, values.get("value", "")))
        elif tag == "select" and name:
            self.select = (name, False)
        elif tag == "option" and self.select is not None:
            self._option_end()
            if "value" in values:
                self._choice(values["value"], "selected" in values)
            else:
                self.option = ([], "selected" in values)

    def _choice(self, value: str, selected: bool) -> None:
        assert self.form is not None and self.select is not None
        select, chosen = self.select
        self.form.choices.setdefault(select, []).append(value)
        if selected and not chosen:
            self.form.fields.append((select, value))
            self.select = (select, True)

    def _option_end(self) -> None:
        if self.option is not None:
            text, selected = self.option
            self.option = None
            self._choice("".join(text).strip(), selected)

    def handle_data(self, data: str) -> None:
        if self.option is not None:
            self.option[0].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("option", "select") and self.form is not None and self.select is not None:
            self._option_end()
        if tag == "form":
            self.form = None
        elif tag == "select" and self.select is not None and self.form is not None:
            select, chosen = self.select
            if not chosen and self.form.choices.get(select):  # a list shows its first option
                self.form.fields.append((select, self.form.choices[select][0]))
            self.select = None


def addresses(page: str) -> tuple[list[str], list[str]]:
    """Every address the page names, and every query its GET forms make."""
    parser = _GetForms()
    for form in GET_FORM.findall(page):
        parser.feed(form)
    return [html.unescape(found) for found in ADDRESS.findall(page)], [
        query for form in parser.forms for query in form.queries()]


def crawl_key(url: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    parts = urlsplit(url)
    query = sorted((key, "" if key in ROW_KEYS else value) for key, value in parse_qsl(parts.query, True))
    return parts.path, tuple(dict.fromkeys(query))


def page_kind(url: str) -> str:
    """The URL pattern's name, with the suite for a board's pages (a kind of page in the browser pass)."""
    parts = urlsplit(url)
    try:
        name = resolve(parts.path).url_name or parts.path
    except Resolver404:
        return parts.path
    suite = dict(parse_qsl(parts.query)).get("suite")
    return f"{name} ({suite})" if suite and name.startswith("board") else name


@dataclass
class Crawl:
    #: Each address visited and the status it ended with (after redirects).
    answers: dict[str, int] = field(default_factory=dict)
    #: Where each address was first seen.
    found_on: dict[str, str] = field(default_factory=dict)
    #: The first HTML page of each kind, for a browser to open.
    pages: dict[str, str] = field(default_factory=dict)

    def failures(self) -> list[str]:
        """Addresses that did not answer 2xx, and those that name a missing value (``None``)."""
        return [f"{status} {url} (linked from {self.found_on.get(url, 'the start')})"
                for url, status in self.answers.items() if not 200 <= status < 300 or NONE.search(url)]


def _same_site(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("", "http", "https") and parts.netloc in ("", "testserver") and bool(parts.path)


def _get(client: Any, url: str) -> tuple[int, Any, str]:
    """The answer at ``url`` after at most five redirects, and the address it came from. A static file
    is looked up where the site collects it from (the test client's site serves collected files only)."""
    static = urlsplit(url).path.removeprefix(settings.STATIC_URL)
    if static != urlsplit(url).path:
        return (200 if finders.find(static) else 404), None, url
    for _ in range(5):
        response = client.get(url)
        if response.status_code not in (301, 302, 303, 307, 308):
            return response.status_code, response, url
        url = urljoin(url, response["Location"])
        if not _same_site(url):
            return 200, None, url
    return response.status_code, response, url


def crawl(client: Any, starts: Iterable[str], *, limit: int = 3000) -> Crawl:
    """Crawls from ``starts``. A page reached through a form has its links followed, not its forms sent:
    the filters of a filtered board would otherwise be combined with each other without end."""
    result = Crawl()
    queue: deque[tuple[str, bool]] = deque()
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    per_path: dict[str, int] = {}

    def add(url: str, source: str, forms: bool) -> None:
        parts = urlsplit(url)
        url = parts.path + (f"?{parts.query}" if parts.query else "")
        key = crawl_key(url)
        if key in seen or parts.path.startswith(NOT_PAGES) or per_path.get(parts.path, 0) >= QUERIES_PER_PATH:
            return
        seen.add(key)
        per_path[parts.path] = per_path.get(parts.path, 0) + 1
        result.found_on[url] = source
        queue.append((url, forms))

    for start in starts:
        add(start, "the start", True)
    while queue and len(result.answers) < limit:
        url, forms = queue.popleft()
        status, response, final = _get(client, url)
        result.answers[url] = status
        if response is None:
            continue
        if getattr(response, "streaming", False):
            response.close()
            continue
        if not 200 <= status < 300 or not response.get("Content-Type", "").startswith("text/html"):
            continue
        result.pages.setdefault(page_kind(final), final)
        links, queries = addresses(response.content.decode("utf-8", "replace"))
        for address, via_form in [*((link, False) for link in links), *((query, True) for query in queries if forms)]:
            absolute = urljoin(final, address)
            if _same_site(absolute) and not address.startswith("#"):
                add(urlsplit(absolute)._replace(fragment="").geturl(), url, forms and not via_form)
    assert not queue, f"the crawl stopped at {limit} addresses with {len(queue)} left: raise the limit"
    return result


def with_query(path: str, **query: str) -> str:
    return f"{path}?{urlencode(query)}" if query else path
