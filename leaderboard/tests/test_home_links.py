"""The home page leads to what the boards alone do not: the paper's reported rows on the official boards, the
score-vs-cost overview, the data snapshots and the column dictionary; every page's footer reaches the data."""
from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from catalogue.services import environment_ensure

pytestmark = pytest.mark.django_db


def _more(client) -> str:
    page = client.get("/").content.decode()
    found = re.search(r'<p class="hint home-more" id="home-more">(.*?)</p>', page, re.S)
    assert found is not None
    return found.group(1)


def test_the_home_page_links_the_official_boards_of_reported_rows_cost_snapshots_and_columns(client,
                                                                                            fixture_scenarios):
    for slug in ("webui", "sokoban", "football"):
        environment_ensure(slug)
    call_command("import_paper_results", stdout=StringIO())
    more = _more(client)
    # In the home page's order of environments, each at its first flow's mini board.
    assert re.findall(r'href="(/boards/[^"]+)">(\w+)</a>', more) == [
        ("/boards/football/online/mini/?suite=official", "Football"),
        ("/boards/sokoban/global/mini/?suite=official", "Sokoban"),
        ("/boards/webui/global/mini/?suite=official", "WebUI")]
    for path in ("/cost/", "/data/snapshots/", "/data/columns/"):
        assert f'href="{path}"' in more
    for path in re.findall(r'href="([^"]+)"', more):
        assert client.get(path.replace("&amp;", "&")).status_code == 200, path


def test_without_reported_rows_the_home_page_links_no_official_board(client, fixture_scenarios):
    more = _more(client)
    assert "suite=official" not in more and "reported" not in more
    assert 'href="/data/snapshots/"' in more


@pytest.mark.parametrize("path", ["/queue/", "/environments/sokoban/"])
def test_every_pages_footer_reaches_the_data_snapshots_and_the_columns(client, db, path):
    footer = client.get(path).content.decode().split("<footer>")[1]
    assert 'href="/data/snapshots/"' in footer and 'href="/data/columns/"' in footer
