"""The operator's paths, answered before anything else, and every other request timed.

Placed first in MIDDLEWARE: a scrape of ``web:8000`` over plain HTTP from inside the stack, or a
health check of 127.0.0.1:8000, is answered here, before SecurityMiddleware would redirect it to
HTTPS and before anything validates its Host against ALLOWED_HOSTS. Every other request goes on
through all of them as before.

/metrics is for the stack's own monitoring. A request that came through the reverse proxy (it
carries X-Forwarded-For, which the proxy always sets) needs the bearer token MAGEBENCH_METRICS_TOKEN;
one that reached gunicorn directly comes from inside the stack's network and needs none. A site
served without a reverse proxy in production (MAGEBENCH_BEHIND_PROXY=false) has no such inside, nor
one whose gunicorn others reach directly (MAGEBENCH_METRICS_REQUIRE_TOKEN=true): there the token is
always needed.
"""
from __future__ import annotations

import hmac
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST

from monitoring.health import readiness
from monitoring.metrics import exposition, request_observe

#: Headers a reverse proxy adds: a request carrying any of them did not reach gunicorn directly.
PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP", "HTTP_X_FORWARDED_PROTO")


def _token_matches(request: HttpRequest) -> bool:
    expected = settings.MAGEBENCH_METRICS_TOKEN
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if not expected or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())


def _from_inside_the_stack(request: HttpRequest) -> bool:
    if settings.MAGEBENCH_METRICS_REQUIRE_TOKEN or (settings.PRODUCTION and not settings.MAGEBENCH_BEHIND_PROXY):
        return False
    return not any(request.META.get(header) for header in PROXY_HEADERS)


def metrics_allowed(request: HttpRequest) -> bool:
    return _token_matches(request) or _from_inside_the_stack(request)


def metrics(request: HttpRequest) -> HttpResponse:
    if not metrics_allowed(request):
        # Nothing about what is there, or why: the same answer for a missing and a wrong token.
        return HttpResponse("Forbidden\n", status=403, content_type="text/plain")
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)


def live(request: HttpRequest) -> HttpResponse:
    """The process answers; nothing else is asked (a database outage is not a reason to restart it)."""
    return JsonResponse({"status": "ok"})


def ready(request: HttpRequest) -> HttpResponse:
    checks = readiness()
    failed = [name for name, state in checks.items() if state != "ok"]
    return JsonResponse({"status": "unavailable" if failed else "ok", "checks": checks, "failed": failed},
                        status=503 if failed else 200)


#: Each with and without its trailing slash: no redirect to follow, whichever a probe asks for.
ANSWERS: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    path: view for base, view in (("/metrics", metrics), ("/-/live", live), ("/-/ready", ready))
    for path in (base, f"{base}/")}


class OperationsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        answer = ANSWERS.get(request.path_info)
        if answer is not None:
            if request.method not in ("GET", "HEAD"):
                return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
            answered = answer(request)
            answered["Cache-Control"] = "no-store"
            return answered
        started = time.perf_counter()
        response = self.get_response(request)
        request_observe(request, response, time.perf_counter() - started)
        return response
