"""The Content-Security-Policy header every response carries.

Scripts and styles come from the site's own static files only: templates hold no inline script,
event handler or style attribute, and data for the charts travels in ``json_script`` blocks, which
a browser never runs. One exception is granted by hash, not by 'unsafe-inline': plotly.js creates
empty ``<style>`` elements (and empties some style attributes) before filling them through the
CSSOM, and injects one fixed stylesheet of its own when it loads. Their digests are read from the
plotly.min.js the site serves, so an upgrade of plotly keeps the policy exact; anything else
inline, an injected script or style above all, stays blocked.
"""
from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from config.staticfinders import PLOTLY_FILE, plotly_package_data

HEADER = "Content-Security-Policy"

# plotly.js's load-time stylesheets: `e=document.createElement("style");e.id="…",e.textContent='…'`.
_PLOTLY_STYLESHEET = re.compile(r"""createElement\("style"\);\w+\.id="\w+",\w+\.textContent='([^'\\]*)'""")


def style_hash(text: str) -> str:
    """The CSP source that allows exactly this inline style text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@lru_cache(maxsize=1)
def plotly_style_sources() -> tuple[str, ...]:
    """The style sources plotly.js needs: its empty elements and attributes, and its own stylesheets."""
    directory = plotly_package_data()
    if directory is None:
        return ()
    source = (directory / PLOTLY_FILE).read_text(encoding="utf-8")
    stylesheets = [style_hash(css) for css in _PLOTLY_STYLESHEET.findall(source)]
    # 'unsafe-hashes' extends the hashes to style attributes; the only one allowed is the empty one.
    return ("'unsafe-hashes'", style_hash(""), *stylesheets)


def policy_header(directives: Mapping[str, Sequence[str]], extra_styles: Sequence[str] = ()) -> str:
    parts = []
    for name, sources in directives.items():
        values = list(sources) + (list(extra_styles) if name == "style-src" else [])
        parts.append(" ".join([name, *values]))
    return "; ".join(parts)


class ContentSecurityPolicyMiddleware:
    """Adds the policy of MAGEBENCH_CONTENT_SECURITY_POLICY to each response that has none yet."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.header = policy_header(settings.MAGEBENCH_CONTENT_SECURITY_POLICY, plotly_style_sources())

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault(HEADER, self.header)
        return response
