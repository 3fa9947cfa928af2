"""The web process's own metrics (request durations and responses) and the /metrics exposition.

gunicorn runs several worker processes, each answering some of the requests and some of the
scrapes. With PROMETHEUS_MULTIPROC_DIR set (config/gunicorn.py sets it) every process writes its
samples to files there and a scrape sums them all; without it (development, tests) the process's
default registry is read.
"""
from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponseBase
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess

from monitoring.collectors import PLATFORM

#: Seconds, around the board pages' 150 ms goal and up to the request deadline.
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
#: Any other method is counted as "other": a label's values stay few whatever clients send.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

REQUEST_SECONDS = Histogram(
    "magebench_http_request_duration_seconds",
    "Seconds from a request reaching the site to its response (headers; a streamed body may go on), by method "
    "and route (the URL's name, or unmatched).",
    ["method", "route"], buckets=DURATION_BUCKETS)
RESPONSES = Counter(
    "magebench_http_responses",
    "Responses by method, route (the URL's name, or unmatched) and status class (2xx, 3xx, 4xx, 5xx).",
    ["method", "route", "status_class"])


def route_of(request: HttpRequest) -> str:
    """The URL pattern's name: never the path itself, so the label has as many values as the site has URLs."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return "unmatched"
    return match.view_name or "unnamed"


def request_observe(request: HttpRequest, response: HttpResponseBase, seconds: float) -> None:
    method = request.method if request.method in METHODS else "other"
    route = route_of(request)
    REQUEST_SECONDS.labels(method=method, route=route).observe(seconds)
    RESPONSES.labels(method=method, route=route, status_class=f"{response.status_code // 100}xx").inc()


def exposition() -> bytes:
    """Every metric in Prometheus' text format: the web processes', then the platform's."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        processes = CollectorRegistry()
        multiprocess.MultiProcessCollector(processes)
    else:
        processes = REGISTRY
    platform = CollectorRegistry()
    platform.register(PLATFORM)
    return generate_latest(processes) + generate_latest(platform)
