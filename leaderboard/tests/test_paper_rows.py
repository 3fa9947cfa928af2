"""The paper's reported rows as a researcher reads them: the scenarios the paper measured each on (not
"0 scenarios" on an official board with nothing imported), a link to the paper and the table each
number comes from, a Cite block with the paper's and the board's BibTeX, and on the analysis page what
the paper reports of each row."""
from __future__ import annotations

import re
from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from accounts.models import Team
from catalogue.citations import PAPER, PAPER_URL, leaderboard_citation
from catalogue.services import environment_ensure
from leaderboard.tests.board_entries import board_entries

pytestmark = pytest.mark.django_db


@pytest.fixture
def paper_rows() -> None:
    for slug in ("webui", "sokoban", "football"):
        environment_ensure(slug)
    call_command("import_paper_results", stdout=StringIO())


def _board(env: str, flow: str, subset: str, client) -> str:
    return client.get(reverse("board", args=[env, flow, subset]), {"suite": "official"}).content.decode()


def test_the_papers_bibtex_is_the_entry_its_authors_publish() -> None:
    assert PAPER.url == PAPER_URL == "https://arxiv.org/abs/2412.04531"
    assert PAPER.bibtex == (
        "@misc{zhang2024magebench,\n"
        "  title         = {MageBench: Bridging Large Multimodal Models to Agents},\n"
        "  author        = {Miaosen Zhang and Qi Dai and Yifan Yang and Jianmin Bao and Dongdong Chen and Kai Qiu and "
        "Chong Luo and Xin Geng and Baining Guo},\n"
        "  year          = {2024},\n"
        "  eprint        = {2412.04531},\n"
        "  archivePrefix = {arXiv},\n"
        "  primaryClass  = {cs.CV},\n"
        "  url           = {https://arxiv.org/abs/2412.04531},\n"
        "}")


def test_the_boards_bibtex_names_its_address_the_board_and_the_day_it_was_read() -> None:
    cited = leaderboard_citation(url="https://board.example/boards/sokoban/global/mini/?suite=official",
                                 board="Sokoban, Global flow, mini set, suite official", accessed=date(2026, 11, 29))
    assert cited.bibtex == (
        "@misc{magebench_leaderboard_2026,\n"
        "  title        = {{MageBench} Leaderboard},\n"
        "  howpublished = {\\url{https://board.example/boards/sokoban/global/mini/?suite=official}},\n"
        "  year         = {2026},\n"
        "  note         = {Sokoban, Global flow, mini set, suite official; accessed 2026-11-29. Benchmark: "
        "\\cite{zhang2024magebench}},\n"
        "}")


def test_an_official_board_of_reported_rows_states_the_scenarios_the_paper_measured_them_on(paper_rows, client):
    mini = _board("sokoban", "global", "mini", client)
    assert not re.search(r"(?<!\d)0 scenarios", mini)
    assert ("No scenario of suite official is imported here yet: every row is a published number, measured by its "
            "publication on 20 scenarios (mini set).") in mini
    full = _board("webui", "global", "full", client)
    assert "measured by its publication on 193 scenarios (full set)." in full
    assert "measured by its publication on 108 scenarios (full set)." in _board("football", "online", "full", client)


def test_each_reported_row_links_the_paper_and_the_table_it_came_from_with_its_protocol(paper_rows, client):
    mini = _board("sokoban", "global", "mini", client)
    assert re.search(rf'<a class="reported-table" href="{re.escape(PAPER_URL)}" rel="noopener" title="Where the '
                     r"""number is published: the paper's Table 1; its IA/RA: Table 2">paper, Table 1</a>""", mini)
    assert "20 scenarios × 3 repeats" in mini
    full = _board("football", "online", "full", client)
    assert ">paper, Table 4</a>" in full and "108 scenarios × 3 repeats" in full
    # A number the paper gives no IA/RA for (WebUI) names no IA/RA table.
    webui = _board("webui", "global", "mini", client)
    assert ">paper, Table 1</a>" in webui and "its IA/RA" not in webui


def test_the_board_has_a_cite_block_with_the_papers_and_the_boards_bibtex(paper_rows, client):
    page = _board("sokoban", "global", "mini", client)
    assert '<section class="cite" id="cite"' in page and '<a href="#cite">Cite</a>' in page
    assert '<pre class="bibtex" id="bibtex-zhang2024magebench" tabindex="0">@misc{zhang2024magebench,' in page
    assert "eprint        = {2412.04531}" in page
    today = timezone.localdate()
    assert ("howpublished = {\\url{http://testserver/boards/sokoban/global/mini/?suite=official}}"
            in page.replace("&amp;", "&"))
    assert f"Sokoban, Global flow, mini set, suite official; accessed {today.isoformat()}" in page


def test_the_analysis_page_shows_what_the_paper_reports_for_each_reported_row(paper_rows, client):
    page = client.get(reverse("board-analysis", args=["sokoban", "online", "mini"]), {"suite": "official"})
    assert page.status_code == 200
    text = page.content.decode()
    section = text[text.index('<section class="analysis-section" id="reported">'):]
    section = section[:section.index("</section>")]
    # GPT-4o on Sokoban Online, mini: 53.03 (Table 1), IA 0.0 and RA 6.7 (Table 2).
    gpt = section[section.index('data-model="GPT-4o"'):]
    gpt = gpt[:gpt.index("</tr>")]
    cells = re.findall(r'<td class="num">([^<]*)</td>', gpt)
    assert cells == ["53.03", "—", "20 scenarios × 3 repeats", "0.0", "6.7"]
    assert "paper, Table 1</a> · IA/RA: Table 2" in gpt
    # Gemini's RA on Sokoban Online is 0.0 and its IA 25.0: each row its own (not one row's for all).
    gemini = section[section.index('data-model="Gemini-1.5-pro"'):]
    assert re.findall(r'<td class="num">([^<]*)</td>', gemini[:gemini.index("</tr>")])[3:] == ["25.0", "0.0"]
    # A model Table 2 does not name has no IA/RA.
    qwen = section[section.index('data-model="Qwen2-vl-72B"'):]
    assert re.findall(r'<td class="num">([^<]*)</td>', qwen[:qwen.index("</tr>")])[3:] == ["—", "—"]
    assert not re.search(r"(?<!\d)0 scenarios", text)


def test_a_full_board_analysis_states_the_papers_delta_beside_each_score(paper_rows, client):
    text = client.get(reverse("board-analysis", args=["sokoban", "global", "full"]),
                      {"suite": "official"}).content.decode()
    gpt = text[text.index('data-model="GPT-4o"'):]
    assert re.findall(r'<td class="num">([^<]*)</td>', gpt[:gpt.index("</tr>")]) == [
        "47.46", "± 0.50*", "182 scenarios × 3 repeats", "—", "—"]
    assert "paper, Table 4</a>" in gpt


def test_a_board_of_reported_rows_alone_offers_no_attempt_downloads_and_says_it_has_no_attempts_yet(paper_rows,
                                                                                                      client):
    mini = _board("webui", "global", "mini", client)
    assert "data-board-attempt-export" not in mini and "attempts.csv" not in mini
    assert "<span data-no-attempts>no attempts yet</span>" in mini
    # Its board-level exports of the rows themselves stay.
    assert "data-board-export" in mini


def test_a_board_view_whose_filters_leave_no_entry_with_attempts_says_so(client, fixture_scenarios):
    board_entries(Team.objects.create(name="Lab", slug="lab"))
    url = reverse("board", args=["sokoban", "global", "mini"])
    everything = client.get(url, {"suite": "fixture"}).content.decode()
    assert "data-board-attempt-export" in everything and "data-no-attempts" not in everything
    nothing = client.get(url, {"suite": "fixture", "q": "no such model"}).content.decode()
    assert "data-board-attempt-export" not in nothing
    assert "<span data-no-attempts>no attempts in this view</span>" in nothing
