"""The lists' query parameters are read by serializers: every spelling of yes counts, and a value that
means nothing is a 400 naming the parameter rather than a silent default."""
from __future__ import annotations

from typing import Any

import pytest

from accounts.services import team_create
from catalogue.services import environment_ensure
from submissions.models import ModelEntry, Submission

pytestmark = pytest.mark.django_db


def _submission(team: Any, name: str) -> Submission:
    model = ModelEntry.objects.create(team=team, name=name)
    return Submission.objects.create(team=team, model=model, environment=environment_ensure("sokoban"), flow="global",
                                     subset="mini", suite="fixture", is_public=True)


@pytest.fixture
def two_teams(lab, django_user_model) -> tuple[Submission, Submission]:
    other = team_create(user=django_user_model.objects.create_user("bo", password="another passphrase 8"),
                        name="Elsewhere")
    return _submission(lab.team, "Ours"), _submission(other, "Theirs")


def _listed(lab: Any, query: str) -> list[int]:
    response = lab.client.get(f"/api/v1/submissions/?{query}", **lab.auth("read"))
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()]


@pytest.mark.parametrize("mine", ["on", "true", "1", "yes", "True"])
def test_mine_in_any_spelling_of_yes_keeps_only_the_callers_teams_submissions(lab, two_teams, mine):
    ours, _ = two_teams
    assert _listed(lab, f"mine={mine}") == [ours.id]


@pytest.mark.parametrize("query", ["", "mine=off", "mine=0", "mine=false", "mine="])
def test_without_mine_or_with_a_no_the_list_keeps_every_visible_submission(lab, two_teams, query):
    ours, theirs = two_teams
    assert _listed(lab, query) == [theirs.id, ours.id]


def test_mine_that_is_neither_yes_nor_no_is_a_400_naming_it(lab, two_teams):
    response = lab.client.get("/api/v1/submissions/?mine=maybe", **lab.auth("read"))
    assert response.status_code == 400
    body = response.json()
    assert body["message"] == "invalid query parameter: mine"
    assert body["extra"] == {"mine": ["Must be a valid boolean."]}


@pytest.mark.parametrize(("path", "query", "field"), [
    ("/api/v1/submissions/", "limit=201", "limit"),
    ("/api/v1/submissions/", "limit=0", "limit"),
    ("/api/v1/submissions/", "offset=-1", "offset"),
    ("/api/v1/submissions/", "limit=ten", "limit"),
    ("/api/v1/models/", "limit=201", "limit"),
    ("/api/v1/models/", "offset=-1", "offset"),
])
def test_a_page_out_of_range_is_a_400_naming_the_parameter(lab, two_teams, path, query, field):
    response = lab.client.get(f"{path}?{query}", **lab.auth("read"))
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["message"] == f"invalid query parameter: {field}"
    assert list(body["extra"]) == [field]


def test_limit_and_offset_page_the_list_newest_first(lab, two_teams):
    ours, theirs = two_teams
    assert _listed(lab, "limit=1") == [theirs.id]
    assert _listed(lab, "limit=1&offset=1") == [ours.id]
    assert _listed(lab, "limit=200&offset=2") == []


def test_the_schema_documents_the_list_parameters_with_their_bounds(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/api/v1/submissions/"]["get"]["parameters"]}
    assert parameters["mine"]["schema"]["type"] == "boolean"
    assert parameters["limit"]["schema"] == {"type": "integer", "maximum": 200, "minimum": 1, "default": 50}
    assert parameters["offset"]["schema"] == {"type": "integer", "maximum": 10**9, "minimum": 0, "default": 0}


def test_a_page_of_the_list_says_the_lists_length_and_links_its_neighbours(lab, two_teams):
    ours, theirs = two_teams
    first = lab.client.get("/api/v1/submissions/?limit=1", **lab.auth("read"))
    assert [row["id"] for row in first.json()] == [theirs.id]  # still a plain list
    assert first["X-Total-Count"] == "2"
    assert first["Link"] == '<http://testserver/api/v1/submissions/?limit=1&offset=1>; rel="next"'
    second = lab.client.get("/api/v1/submissions/?limit=1&offset=1", **lab.auth("read"))
    assert [row["id"] for row in second.json()] == [ours.id]
    assert second["X-Total-Count"] == "2"
    assert second["Link"] == '<http://testserver/api/v1/submissions/?limit=1>; rel="prev"'
    whole = lab.client.get("/api/v1/models/", **lab.auth("read"))
    assert [row["name"] for row in whole.json()] == ["Ours", "Theirs"]
    assert whole["X-Total-Count"] == "2" and not whole.has_header("Link")


def test_the_schema_documents_the_paging_headers(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    for path in ("/api/v1/submissions/", "/api/v1/models/", "/api/v1/snapshots/"):
        headers = schema["paths"][path]["get"]["responses"]["200"]["headers"]
        assert set(headers) == {"X-Total-Count", "Link"}, path
