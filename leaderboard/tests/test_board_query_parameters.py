"""The boards' query strings are read once, by serializers, into typed queries: every spelling of yes
counts, and a value a parameter does not take is a 400 naming it (JSON from the API, a page that names
it on the site) rather than a silent default or a server error.

The board: Vision-7B (team Lab, Acme, 7B, open weights) 60 on all 10 scenarios, Tiny (team Other,
Small Co, 0.4B) 50 on all, Partial (team Other, Small Co, size unknown) 90 on 2 of them.
"""
from __future__ import annotations

import ast
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.http import QueryDict
from django.urls import reverse

from leaderboard.models import BoardSnapshot
from leaderboard.query_params import (
    BadQuery,
    BoardFilterParams,
    BoardPageParams,
    CompareParams,
    HomeParams,
    PairsParams,
)
from leaderboard.selectors import (
    BoardFilter,
    BoardQuery,
    BoardSort,
    CompareQuery,
    HomeQuery,
    PairsQuery,
    board_get,
)
from leaderboard.tests.board_entries import Entries, board_entries

pytestmark = pytest.mark.django_db
BOARD = ("sokoban", "global", "mini")


@pytest.fixture
def entries(fixture_scenarios, lab) -> Entries:
    return board_entries(lab.team)


def _api_rows(client, query: str) -> list[tuple[str, int | None]]:
    response = client.get(f"{reverse('api-board', args=BOARD)}?suite=fixture&{query}")
    assert response.status_code == 200, response.content
    return [(row["model"], row["rank"]) for row in response.json()["rows"]]


def _page_models(client, query: str) -> list[str]:
    """The models of the board page's rows, in the page's order."""
    response = client.get(f"{reverse('board', args=BOARD)}?suite=fixture&{query}")
    assert response.status_code == 200, response.content
    table = response.content.decode().split('<table class="board"')[1].split("</table>")[0]
    return [name for name in re.findall(r">([\w-]+)</a>", table) if name in {"Vision-7B", "Tiny", "Partial"}]


def test_a_query_string_is_read_into_the_typed_query_the_views_hand_the_selectors():
    query = QueryDict("suite=fixture&open=on&size=10-40B&org=+Acme+&q=+a++b+&sort=team&page=3&hide=ia,ra")
    assert BoardPageParams.parse(query) == BoardQuery(
        suite="fixture", filters=BoardFilter(open_weights=True, size="10-40B", organisation="Acme", search="a b"),
        sort=BoardSort(column="team", descending=False), page=3)
    assert BoardPageParams.parse(QueryDict("")) == BoardQuery()
    assert BoardFilterParams.parse(QueryDict("best=yes&verified=true")) == BoardQuery(
        filters=BoardFilter(best_per_team=True, verified_only=True))
    assert HomeParams.parse(QueryDict("overview=full&models=all&page=2&across=online")) == \
        HomeQuery(overview="full", every_model=True, page=2, across="online")
    # A page without every model has one page of them.
    assert HomeParams.parse(QueryDict("page=2")) == HomeQuery()
    assert CompareParams.parse(QueryDict("a=7&b=")) == CompareQuery(a=7)
    assert PairsParams.parse(QueryDict("cols=2&order=name")) == PairsQuery(
        cols=2, order="name")


def test_a_refused_query_names_every_parameter_it_refuses():
    with pytest.raises(BadQuery) as refused:
        BoardPageParams.parse(QueryDict("open=maybe&size=huge&sort=model&page=0"))
    assert sorted(refused.value.errors) == ["open", "page", "size"]
    assert refused.value.errors["size"] == ['"huge" is not a valid choice.']


@pytest.mark.parametrize(("query", "rows"), [
    ("", [("Vision-7B", 1), ("Tiny", 2), ("Partial", None)]),
    ("open=on", [("Vision-7B", 1)]),
    ("open=off", [("Vision-7B", 1), ("Tiny", 2), ("Partial", None)]),
    ("size=%3C10B", [("Vision-7B", 1), ("Tiny", 2)]),
    ("size=unknown", [("Partial", None)]),
    ("org=small+co", [("Tiny", 1), ("Partial", None)]),  # a filter ranks the rows it keeps among themselves
    ("best=yes", [("Vision-7B", 1), ("Partial", None)]),
    ("incomplete=true", [("Partial", 1), ("Vision-7B", 2), ("Tiny", 3)]),
    ("q=+TIN+", [("Tiny", 2)]),
])
def test_the_board_api_keeps_the_rows_its_filters_name_in_any_spelling_of_yes(client, entries, query, rows):
    assert _api_rows(client, query) == rows


def test_the_selectors_take_the_typed_filter_the_page_and_api_read(entries):
    rows = board_get(env="sokoban", flow="global", subset="mini", suite="fixture",
                     filters=BoardFilter(organisation="SMALL CO", rank_incomplete=True)).rows
    assert [(row.model, row.rank) for row in rows] == [("Partial", 1), ("Tiny", 2)]


@pytest.mark.parametrize(("query", "models"), [
    ("", ["Vision-7B", "Tiny", "Partial"]),
    ("sort=team", ["Vision-7B", "Tiny", "Partial"]),  # Lab before Other; Other's rows in the ranking's order
    ("sort=team&dir=desc", ["Tiny", "Partial", "Vision-7B"]),
    ("sort=model", ["Partial", "Tiny", "Vision-7B"]),
    ("sort=score", ["Partial", "Vision-7B", "Tiny"]),  # 90, 60, 50: high to low on the first click
    ("sort=score&dir=asc&open=1", ["Vision-7B"]),
    ("page=2", ["Vision-7B", "Tiny", "Partial"]),  # a page past the last shows the last, as before
])
def test_the_board_page_sorts_and_filters_by_its_typed_query(client, entries, query, models):
    assert _page_models(client, query) == models


def test_the_board_api_gives_its_rows_a_page_at_a_time_and_says_where_the_page_stands(client, entries):
    url = f"{reverse('api-board', args=BOARD)}"
    whole = client.get(url, {"suite": "fixture"})
    assert [row["model"] for row in whole.json()["rows"]] == ["Vision-7B", "Tiny", "Partial"]
    assert (whole.json()["count"], whole.json()["next"], whole.json()["previous"]) == (3, None, None)
    assert whole["X-Total-Count"] == "3" and "Link" not in whole

    first = client.get(url, {"suite": "fixture", "limit": 2})
    body = first.json()
    assert [(row["model"], row["rank"]) for row in body["rows"]] == [("Vision-7B", 1), ("Tiny", 2)]
    assert body["count"] == 3 and body["previous"] is None
    assert body["next"] == f"http://testserver{url}?limit=2&offset=2&suite=fixture"
    assert first["Link"] == f'<{body["next"]}>; rel="next"'
    assert body["scenarios"] == whole.json()["scenarios"] and body["generations"] == whole.json()["generations"]

    last = client.get(url, {"suite": "fixture", "limit": 2, "offset": 2}).json()
    assert [(row["model"], row["rank"]) for row in last["rows"]] == [("Partial", None)]
    assert last["next"] is None and last["previous"] == f"http://testserver{url}?limit=2&suite=fixture"
    # The filters count what they keep; past the end is an empty page, not an error.
    assert client.get(url, {"suite": "fixture", "org": "small co", "limit": 1}).json()["count"] == 2
    assert client.get(url, {"suite": "fixture", "offset": 7}).json()["rows"] == []


def _refusals(table: dict[tuple[str, tuple[str, ...]], list[str]]) -> list[tuple[str, tuple[str, ...], str, str]]:
    """(URL name, arguments, query, the parameter refused) of each query of ``table``: the last
    parameter of each query is the one it gives a value the parameter does not take."""
    return [(name, args, query, query.rsplit("&", 1)[-1].split("=", 1)[0])
            for (name, args), queries in table.items() for query in queries]


def _refused(client, name: str, args: tuple[str, ...], query: str):
    response = client.get(f"{reverse(name, args=args)}?{query}")
    assert response.status_code == 400, response.content[:300]
    return response


API_REFUSALS = {
    ("api-board", BOARD): ["open=maybe", "verified=2", "best=x", "reported=x", "incomplete=x", "size=huge",
                           f"org={'o' * 121}", f"q={'q' * 101}", "q=a%00b", "prompts=not+a+version",
                           "suite=not+a+slug", "limit=0", "limit=201", "offset=-1", "offset=x"],
    ("api-board-pairs", BOARD): ["page=0", "cols=two", "order=rank"],
    ("api-board-attempts-export", (*BOARD, "zip")): ["frames=maybe"],
    ("api-board-attempts-export", (*BOARD, "csv")): ["size=huge"],
}


@pytest.mark.parametrize(("name", "args", "query", "parameter"), _refusals(API_REFUSALS))
def test_an_api_parameter_given_a_value_it_does_not_take_is_a_400_naming_it(client, entries, name, args, query,
                                                                             parameter):
    body = _refused(client, name, args, query).json()
    assert body["message"] == f"invalid query parameter: {parameter}"
    assert list(body["extra"]) == [parameter]


def test_a_submission_export_refuses_a_frames_flag_it_cannot_read(client, entries):
    url = reverse("api-submission-export", args=[entries.full.id, "zip"])
    response = client.get(f"{url}?frames=some")
    assert (response.status_code, response.json()["message"]) == (400, "invalid query parameter: frames")


PAGE_REFUSALS = {
    ("board", BOARD): ["open=maybe", "size=huge", "sort=nonsense", "sort=model&dir=up", "page=abc", "page=0",
                       "prompts=%3Cscript%3E"],
    ("board-export", (*BOARD, "csv")): ["verified=perhaps"],
    ("board-analysis", BOARD): ["page=x", "cols=0", "charts=maybe"],
    ("board-compare", BOARD): ["a=first", "b=-1", f"a={2**63}"],
    ("board-pairs", BOARD): ["order=rank", "cols=-2"],
    ("board-cost", BOARD): ["x=euros"],
    ("cost-overview", ()): ["subset=huge", "x=euros"],
    ("home", ()): ["overview=huge", "models=some", "across=sideways", "models=all&page=0"],
    ("prompt-set", ("sokoban", "global", "v1")): ["suite=a%00b"],
}


@pytest.mark.parametrize(("name", "args", "query", "parameter"), _refusals(PAGE_REFUSALS))
def test_a_page_given_a_value_it_does_not_take_is_a_400_page_naming_the_parameter(client, entries, name, args,
                                                                                  query, parameter):
    html = _refused(client, name, args, query).content.decode()
    assert re.findall(r'<li data-parameter="([^"]+)">', html) == [parameter]
    assert f'<a href="{reverse(name, args=args)}" id="bad-query-without">' in html


def test_a_parameter_no_page_reads_is_left_alone(client, entries):
    # hide is the board's script's own (the columns it hides); a campaign tag is nobody's.
    assert _page_models(client, "hide=ia,ra&utm_source=mail") == ["Vision-7B", "Tiny", "Partial"]
    assert _api_rows(client, "utm_source=mail&open=1") == [("Vision-7B", 1)]


def _snapshot(env: str, version: str, day: int) -> BoardSnapshot:
    return BoardSnapshot.objects.create(env=env, flow="global", subset="mini", suite="fixture", version=version,
                                        content_hash="0" * 64, created_at=datetime(2026, 11, day, tzinfo=UTC))


def test_the_snapshot_list_is_paged_newest_first_and_refuses_a_page_out_of_range(client, db):
    newest, middle, oldest = _snapshot("sokoban", "2026-11-29.1", 29), _snapshot("webui", "2026-11-28.1", 28), \
        _snapshot("sokoban", "2026-11-27.1", 27)
    url = reverse("api-snapshots")
    first = client.get(url, {"limit": 2})
    assert [row["version"] for row in first.json()] == [newest.version, middle.version]
    assert first["X-Total-Count"] == "3" and first["Link"] == f'<http://testserver{url}?limit=2&offset=2>; rel="next"'
    assert [row["version"] for row in client.get(url, {"limit": 2, "offset": 2}).json()] == [oldest.version]
    sokoban = client.get(url, {"env": "sokoban"})
    assert [row["version"] for row in sokoban.json()] == [newest.version, oldest.version]
    assert sokoban["X-Total-Count"] == "2"
    for query, parameter in (({"limit": 0}, "limit"), ({"offset": -1}, "offset"), ({"env": "not a slug"}, "env")):
        refused = client.get(url, query)
        assert (refused.status_code, refused.json()["message"]) == (400, f"invalid query parameter: {parameter}")


#: The project's packages whose modules serve requests.
SITE_PACKAGES = ("accounts", "catalogue", "config", "leaderboard", "monitoring", "submissions")


def _hand_reads(source: str) -> list[int]:
    """Lines of ``source`` that read one query parameter by hand: ``request.GET.get(…)``, ``….GET[…]``,
    ``"x" in ….query_params`` and the like, rather than handing the whole query to a serializer."""
    def is_query(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr in ("GET", "query_params")

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("get", "getlist") and is_query(node.value) \
                or isinstance(node, ast.Subscript) and is_query(node.value) \
                or isinstance(node, ast.Compare) and any(is_query(right) for right in node.comparators):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_module_of_the_site_reads_a_query_parameter_by_hand():
    root = Path(__file__).resolve().parents[2]
    found = [f"{path.relative_to(root)}:{line}" for package in SITE_PACKAGES
             for path in sorted((root / package).rglob("*.py")) if "tests" not in path.parts
             for line in _hand_reads(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_hand_read_rule_sees_each_way_of_reading_a_parameter():
    # A rule that saw nothing would pass on anything.
    source = ('a = request.GET.get("x")\nb = request.query_params["y"]\nc = "z" in self.request.GET\n'
              'd = request.GET.getlist("w")\nquery = Params.read(request)\n')
    assert _hand_reads(source) == [1, 2, 3, 4]
