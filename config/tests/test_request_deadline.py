"""A request running past MAGEBENCH_REQUEST_DEADLINE is answered 503 with Retry-After, before the
application server's worker timeout would kill it; the connection keeps no trace of it."""
from __future__ import annotations

import pytest
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path

from config.deadline import RETRY_AFTER_SECONDS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls(__name__)]


def _long_query(request: HttpRequest) -> HttpResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(5)")
    return JsonResponse({"done": True})


def _many_short_queries(request: HttpRequest) -> HttpResponse:
    with connection.cursor() as cursor:
        for _ in range(20):
            cursor.execute("SELECT pg_sleep(0.05)")
    return HttpResponse("done")


urlpatterns = [
    path("api/v1/long/", _long_query),
    path("long/", _long_query),
    path("many/", _many_short_queries),
    path("", include("config.urls")),
]


def _statement_timeout() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        return str(cursor.fetchone()[0])


@pytest.fixture
def deadline(settings) -> None:
    settings.MAGEBENCH_REQUEST_DEADLINE = 0.5


def test_a_query_running_past_the_deadline_is_cancelled_and_answered_503_with_retry_after(client, deadline):
    before = _statement_timeout()
    response = client.get("/api/v1/long/")
    assert response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert "try again" in response.json()["detail"]
    # The connection serves what comes next (a worker's job, a command) with the server's own timeout.
    assert _statement_timeout() == before


def test_a_page_past_its_deadline_is_answered_503_too(client, deadline):
    response = client.get("/long/")
    assert response.status_code == 503 and response["Retry-After"] == str(RETRY_AFTER_SECONDS)


def test_short_queries_that_add_up_past_the_deadline_are_refused(client, deadline):
    response = client.get("/many/")
    assert response.status_code == 503 and response["Retry-After"] == str(RETRY_AFTER_SECONDS)

