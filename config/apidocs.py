"""The API's documentation pages: Swagger UI and ReDoc, from the site's own static files.

drf-spectacular-sidecar ships both bundles as static files, so the pages request nothing from
another host. They are the site's own templates, with no inline script or style: Swagger UI's
start-up script is served by the split view as a script file of its own, and ReDoc reads its
options from its element's attributes. Swagger UI runs under the site's Content-Security-Policy
as it is. ReDoc injects one fixed stylesheet (perfect-scrollbar's, with its source map inlined);
its page alone allows that exact text by hash, read from the bundle the site serves, as the site
does for plotly's own stylesheets (config/security.py).
"""
from __future__ import annotations

import base64
import importlib.util
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework.response import Response

from config.security import HEADER, plotly_style_sources, policy_header, style_hash

REDOC_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"

# webpack's css-loader module in the bundle: `.push([e.id,"<css>","",{version:3,…,sourceRoot:""}])`.
_REDOC_STYLESHEET = re.compile(r'\.push\(\[e\.id,("(?:[^"\\]|\\.)*"),"",(\{version:3,.*?,sourceRoot:""\})\]\)')
# The source map is a JavaScript object literal: its keys are bare words.
_SOURCE_MAP_KEY = re.compile(r'([{,])(version|file|sources|sourcesContent|names|mappings|sourceRoot):')


def redoc_bundle() -> Path | None:
    spec = importlib.util.find_spec("drf_spectacular_sidecar")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "static" / REDOC_BUNDLE
    return path if path.is_file() else None


def injected_stylesheet(css: str, source_map: dict[str, Any]) -> str:
    """The text of the <style> element webpack's style-loader makes of a CSS module: the CSS, then
    its source map as a data: URL (`btoa(unescape(encodeURIComponent(JSON.stringify(map))))`)."""
    encoded = json.dumps(source_map, separators=(",", ":"), ensure_ascii=False).encode()
    return f"{css}\n/*# sourceMappingURL=data:application/json;base64,{base64.b64encode(encoded).decode()} */"


@lru_cache(maxsize=1)
def redoc_style_sources() -> tuple[str, ...]:
    """The hashes of the stylesheets ReDoc's bundle injects when it loads."""
    path = redoc_bundle()
    if path is None:
        return ()
    sources = []
    for css, source_map in _REDOC_STYLESHEET.findall(path.read_text(encoding="utf-8")):
        try:
            sources.append(style_hash(injected_stylesheet(json.loads(css),
                                                          json.loads(_SOURCE_MAP_KEY.sub(r'\1"\2":', source_map)))))
        except ValueError:
            continue  # not a literal this reads: the page then reports the refused style
    return tuple(sources)


class SwaggerDocs(SpectacularSwaggerSplitView):
    """Swagger UI: every operation, with "Try it out" against the site itself."""

    url_name = "api-schema"
    template_name = "api/swagger.html"
    title = "API documentation"


class RedocDocs(SpectacularRedocView):
    """ReDoc: the same schema as one reference page."""

    url_name = "api-schema"
    template_name = "api/redoc.html"
    title = "API reference"

    @extend_schema(exclude=True)
    def get(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        response = super().get(request, *args, **kwargs)
        response.headers[HEADER] = policy_header(settings.MAGEBENCH_CONTENT_SECURITY_POLICY,
                                                 plotly_style_sources() + redoc_style_sources())
        return response


def summaries_from_docstrings(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """A drf-spectacular post-processing hook: an operation described by a docstring gets its first
    paragraph as the summary (the line Swagger UI and ReDoc show beside the path), the rest as its
    description, so each view documents itself in one place."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or operation.get("summary"):
                continue
            first, _, rest = (operation.get("description") or "").strip().partition("\n\n")
            if first:
                operation["summary"] = " ".join(first.split()).rstrip(".")
                operation["description"] = rest.strip()
    return result
