"""The OpenAPI schema the site serves, and every documented operation fuzzed from it.

Schemathesis generates requests from the schema (valid and invalid bodies, odd paths and query
strings) and sends them to the site in-process, once anonymously and once with a team's
read-write token; no request may end in a server error.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

pytestmark = [pytest.mark.integration]

FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.fixture
def api_schema(db) -> Iterator[Any]:
    from django.core.signals import request_finished, request_started
    from django.core.wsgi import get_wsgi_application
    from django.db import close_old_connections

    # Like Django's test client: a request must not close the connection holding the test's transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", get_wsgi_application())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _fuzz_every_operation(schema: Any, headers: dict[str, str]) -> list[str]:
    """Run generated cases of every operation; a line per server error."""
    errors: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert operations, "the schema documents no operation"
    for operation in operations:
        @FUZZ
        @given(case=operation.as_strategy())
        def run(case: Any) -> None:
            response = case.call(headers=headers)
            if response.status_code >= 500:
                # run() is called before the loop moves on, so it sees its own operation.
                errors.append(f"{operation.label}: {response.status_code} for {case.path_parameters} "  # noqa: B023
                              f"{case.query} {str(case.body)[:200]}")

        run()
    return errors


def test_the_schema_is_served_and_describes_the_team_tokens(client):
    response = client.get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.")
    assert document["components"]["securitySchemes"]["teamToken"]["scheme"] == "bearer"
    documented = set(document["paths"])
    assert {"/api/v1/submissions/", "/api/v1/uploads/", "/api/v1/boards/{env}/{flow}/{subset}/"} <= documented


def test_no_generated_request_makes_a_server_error_anonymously_or_with_a_write_token(api_schema, lab,
                                                                                   fixture_scenarios):
    anonymous = _fuzz_every_operation(api_schema, {})
    with_token = _fuzz_every_operation(api_schema, {"Authorization": f"Bearer {lab.write_token}"})
    assert not anonymous and not with_token, "\n".join(anonymous + with_token)


def test_the_api_throttles_anonymous_callers_with_a_clear_answer(client, db, monkeypatch):
    from django.core.cache import cache
    from rest_framework.throttling import AnonRateThrottle

    cache.clear()
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute", "user": "1000/minute"})
    statuses = [client.get("/api/v1/boards/sokoban/global/mini/").status_code for _ in range(4)]
    assert 429 not in statuses[:3] and statuses[3] == 429
    cache.clear()


# --- every GET parameter, with values far outside what the schema expects -------------------------

#: Values a careless parser turns into a server error: integers past 64 bits, negative, not numbers.
ODD_INTEGERS = [2**63, 2**63 - 1, -(2**63) - 1, 10**30, -1, 0]
ODD_TEXTS = ["9223372036854775808", "-9223372036854775809", "1e309", "NaN", "0x10", "", " ", "\u0000", "%", "../"]


def _odd_value(parameter: dict[str, Any]) -> Any:
    from hypothesis import strategies as st

    schema = parameter.get("schema") or {}
    guesses = [st.sampled_from(ODD_INTEGERS).map(str), st.sampled_from(ODD_TEXTS),
               st.integers(min_value=-(2**80), max_value=2**80).map(str), st.text(max_size=12)]
    if schema.get("enum"):
        guesses.append(st.sampled_from([str(value) for value in schema["enum"]]))
    if schema.get("type") == "boolean":
        guesses.append(st.sampled_from(["true", "false", "2"]))
    return st.one_of(guesses)


def _get_operations(document: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(path, [*item.get("parameters", []), *item["get"].get("parameters", [])])
            for path, item in document["paths"].items() if "get" in item]


def _filled(path: str, parameters: list[dict[str, Any]], values: dict[str, Any]) -> tuple[str, dict[str, str]]:
    from urllib.parse import quote

    query = {}
    for parameter in parameters:
        name = parameter["name"]
        if name not in values:
            continue
        if parameter["in"] == "path":
            path = path.replace("{" + name + "}", quote(str(values[name]), safe="") or "x")
        elif parameter["in"] == "query":
            query[name] = values[name]
    return path, query


def test_every_get_parameter_with_huge_or_odd_values_answers_without_a_server_error(client, lab, fixture_scenarios):
    from django.test import Client
    from hypothesis import strategies as st

    document = client.get("/api/v1/schema/?format=json").json()
    operations = _get_operations(document)
    assert any(name == "offset" for _, parameters in operations for name in (p["name"] for p in parameters))
    errors: list[str] = []
    for path, parameters in operations:
        strategies = {p["name"]: _odd_value(p) for p in parameters if p["in"] in ("path", "query")}
        required = {name for name in strategies if any(p["name"] == name and p["in"] == "path" for p in parameters)}
        generated = st.fixed_dictionaries({name: strategies[name] for name in required},
                                          optional={name: s for name, s in strategies.items() if name not in required})

        @settings(max_examples=30, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        @given(values=generated)
        def run(values: dict[str, Any]) -> None:
            url, query = _filled(path, parameters, values)  # noqa: B023 - run() is called before the loop moves on
            callers: list[dict[str, Any]] = [{}, lab.auth("read")]  # anonymously, then with a team's token
            for headers in callers:
                response = Client().get(url, query, **headers)
                if response.status_code >= 500:
                    errors.append(f"GET {url} {query}: {response.status_code}")

        run()
    assert not errors, "\n".join(errors[:30])
