"""The site's own 404 page with DEBUG on too (development and the demo).

With DEBUG on, Django answers a missing page with its technical 404, which lists every URL pattern of
the site; production (DEBUG off) calls the URLconf's ``handler404``. This middleware calls that same
handler whenever DEBUG is on, so a visitor of the demo sees the page a visitor of the site sees.
DEBUG's other help (a server error's traceback) stays.
"""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404, get_resolver


class SiteNotFoundMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # No URL pattern matched: Django made its technical page before any view ran.
        if settings.DEBUG and response.status_code == 404 and getattr(request, "resolver_match", None) is None:
            return site_not_found(request, Resolver404({"path": request.path_info}))
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A view that raised Http404 (a view that answers 404 itself keeps its answer, as the API does)."""
        if settings.DEBUG and isinstance(exception, Http404):
            return site_not_found(request, exception)
        return None


def site_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The URLconf's 404 handler (Django's default one when it names none)."""
    # Django's stubs type error handlers as taking the request alone; a 404 handler takes the exception too.
    handler: Callable[..., HttpResponse] = get_resolver(getattr(request, "urlconf", None)).resolve_error_handler(404)
    return handler(request, exception=exception)
