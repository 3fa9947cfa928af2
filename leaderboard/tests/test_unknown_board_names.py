"""A board's address or name with an environment, flow or set that names no board is answered with the
valid ones: on the site's 404 page (with links), in the API's 404 body, and by the client's commands."""
from __future__ import annotations

import re

import pytest

from magebench_client import cli

pytestmark = pytest.mark.django_db

ENVIRONMENTS = ["football", "sokoban", "webui"]
#: Every board, as the client's commands name them, in the navigation's order.
BOARDS = ["webui global mini", "webui global full", "webui online mini", "webui online full",
          "sokoban global mini", "sokoban global full", "sokoban online mini", "sokoban online full",
          "football online mini", "football online full"]


def _links(body: str) -> list[str]:
    listed = body.split('id="not-found-boards"', 1)[1].split("</ul>", 1)[0]
    return re.findall(r'href="([^"]+)"', listed)


@pytest.mark.parametrize("debug", [True, False], ids=["debug", "production"])
@pytest.mark.parametrize(("path", "problem"), [
    ("/boards/sokobn/global/mini/", "there is no environment &#x27;sokobn&#x27;"),
    ("/boards/football/global/mini/", "Football has no flow &#x27;global&#x27;"),
    ("/boards/webui/online/medium/", "there is no set &#x27;medium&#x27;: a board is the mini or the full set"),
])
def test_a_board_page_with_a_wrong_name_says_what_is_wrong_and_links_every_board(client, settings, debug, path,
                                                                                 problem):
    settings.DEBUG = debug
    response = client.get(path)
    body = response.content.decode()
    assert response.status_code == 404
    assert f"No board has this address: {problem}." in body
    assert _links(body) == [f"/boards/{board.replace(' ', '/')}/" for board in BOARDS]


def test_an_analysis_page_with_a_wrong_name_links_the_analysis_page_of_every_board(client):
    response = client.get("/boards/sokoban/offline/mini/analysis/?suite=fixture")
    body = response.content.decode()
    assert response.status_code == 404 and "Sokoban has no flow &#x27;offline&#x27;" in body
    assert _links(body) == [f"/boards/{board.replace(' ', '/')}/analysis/" for board in BOARDS]


def test_a_missing_page_of_an_existing_board_lists_no_boards(client):
    response = client.get("/boards/sokoban/global/mini/export.xml")
    body = response.content.decode()
    assert response.status_code == 404 and "<h1>Nothing here</h1>" in body and "not-found-boards" not in body


@pytest.mark.parametrize("path", ["/api/v1/boards/sokobn/global/mini/",
                                  "/api/v1/boards/sokobn/global/mini/attempts.csv"])
def test_the_api_answers_a_wrong_board_name_with_the_valid_values(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.json() == {"message": "no such board: there is no environment 'sokobn'",
                               "extra": {"environments": ENVIRONMENTS, "flows": ["global", "online"],
                                         "subsets": ["mini", "full"], "boards": BOARDS}}


def test_the_api_lists_the_environments_own_flows_for_a_flow_it_does_not_play(client):
    body = client.get("/api/v1/boards/football/global/mini/").json()
    assert body["message"] == "no such board: Football has no flow 'global'"
    assert body["extra"]["flows"] == ["online"]


def _run(capsys, *args: str) -> tuple[int, str]:
    code = cli.main(list(args))
    return code, capsys.readouterr().err


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("command", [["board", "sokobn", "global", "mini"],
                                     ["export", "sokobn", "global", "mini"]], ids=["board", "export"])
def test_the_clients_board_commands_list_the_valid_names(capsys, live_server, command):
    code, err = _run(capsys, "--url", live_server.url, *command)
    assert code == 2
    assert "error: no such board: there is no environment 'sokobn'" in err
    assert "  environments: football; sokoban; webui" in err
    assert "  boards: " + "; ".join(BOARDS) in err


@pytest.mark.django_db(transaction=True)
def test_a_submission_naming_an_unknown_environment_lists_the_valid_ones(capsys, live_server, lab):
    code, err = _run(capsys, "--url", live_server.url, "--token", lab.write_token, "submit-endpoint",
                     "--model", "M", "--env", "sokobn", "--flow", "global", "--subset", "mini",
                     "--endpoint", "http://127.0.0.1:9/v1")
    assert code == 2
    assert '  env: "sokobn" is not one of: football, sokoban, webui' in err


@pytest.mark.django_db(transaction=True)
def test_an_upload_check_naming_an_unknown_flow_lists_the_valid_ones(capsys, live_server, lab, tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"scenario": "x", "repeat": 0, "replies": ["up"]}\n')
    code, err = _run(capsys, "--url", live_server.url, "--token", lab.write_token, "check", str(runs),
                     "--env", "sokoban", "--flow", "globl", "--subset", "mini")
    assert code == 2
    assert '  flow: "globl" is not one of: global, online' in err
