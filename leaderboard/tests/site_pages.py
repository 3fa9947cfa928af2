"""The site's pages for browser tests: runs the platform really played, a signed-in team, and one URL per
kind of page.

Seeds real episodes: Sokoban Online by the oracle and by an oracle whose endpoint rambles on every third
request (so its replay has unparsed replies), WebUI Global by the degraded oracle (rendered and scored in
Chromium) and text-only Football by the random agent. A page added to the site is one line in
``site_pages``.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model

from accounts.models import Team
from accounts.services import team_create, team_get_or_create
from conftest import FIXTURE_RESOURCES
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

#: The visitor who signs in for the pages only a member sees; the owner of TEAM.
USERNAME = "ada"
PASSWORD = "a long passphrase 7"
TEAM = "Ada Lab"

#: A phone's screen, as the layout tests open pages on it (CSS pixels).
PHONE = {"width": 390, "height": 844}

BOARDS = [("sokoban", "global"), ("sokoban", "online"), ("webui", "global"), ("webui", "online"),
          ("football", "online")]


class SitePage(NamedTuple):
    name: str
    path: str
    signed_in: bool = False


def run_submission(url: str, name: str, env: str, flow: str, *, baseline: bool, **settings: Any) -> Submission:
    team = team_get_or_create(name="MageBench baselines" if baseline else "Lab")
    model = model_entry_upsert(team=team, name=name, is_baseline=baseline, organisation="" if baseline else "Lab Org")
    submission = submission_create_endpoint(model=model, env=env, flow=flow, subset="mini", suite="fixture",
                                            endpoint_url=url, settings={"repeats": 1, **settings},
                                            is_baseline=baseline)
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    return submission


def play_site(baseline_endpoint: Any) -> dict[str, Submission]:
    """Plays one short run per environment, and signs up USERNAME with a team of their own."""
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server

    # A few decisions per episode are enough for every page to have something to show.
    oracle = run_submission(baseline_endpoint("oracle").url, "Oracle agent", "sokoban", "online", baseline=True,
                            resolution=256, max_loop=8)
    rambling = run_submission(baseline_endpoint("oracle", fault="rambling", every_n=3).url, "Rambling model",
                              "sokoban", "online", baseline=False, resolution=256, parse_retries=1, max_loop=8)
    with start_server(make_agent("degraded", pages=[FIXTURE_RESOURCES / "WebUI"])) as server:
        webui = run_submission(server.url, "Degraded oracle", "webui", "global", baseline=True)
    football = run_submission(baseline_endpoint("random", seed=4).url, "Random agent", "football", "online",
                              baseline=True, observation_images=False, max_loop=6)
    user = get_user_model().objects.create_user(USERNAME, password=PASSWORD)
    team_create(user=user, name=TEAM)
    return {"oracle": oracle, "rambling": rambling, "webui": webui, "football": football}


def site_pages(played: dict[str, Submission]) -> list[SitePage]:
    """Every kind of page, as paths on the site; those marked signed_in need USERNAME signed in."""
    def replay(key: str) -> str:
        attempt = played[key].attempts.filter(status=Attempt.Status.SCORED).order_by("-model_calls", "id").first()
        assert attempt is not None, key
        return f"/attempts/{attempt.id}/replay/"

    pages = [SitePage("home", "/"), SitePage("submit", "/submit/"), SitePage("queue", "/queue/"),
             SitePage("log in", "/accounts/login/"), SitePage("sign up", "/accounts/signup/"),
             SitePage("API docs", "/api/docs/"), SitePage("API reference", "/api/redoc/")]
    for env, flow in BOARDS:
        pages += [SitePage(f"{env} {flow} board", f"/boards/{env}/{flow}/mini/?suite=fixture"),
                  SitePage(f"{env} {flow} analysis", f"/boards/{env}/{flow}/mini/analysis/?suite=fixture"),
                  SitePage(f"{env} {flow} compare", f"/boards/{env}/{flow}/mini/compare/?suite=fixture"),
                  SitePage(f"{env} {flow} all pairs", f"/boards/{env}/{flow}/mini/pairs/?suite=fixture"),
                  SitePage(f"{env} {flow} cost", f"/boards/{env}/{flow}/mini/cost/?suite=fixture")]
    pages += [SitePage(f"{env} metric card", f"/environments/{env}/") for env in ("sokoban", "webui", "football")]
    pages += [SitePage(f"submission {key}", f"/submissions/{s.id}/") for key, s in played.items()]
    pages += [SitePage(f"{key} replay", replay(key)) for key in played]
    pages += [SitePage(f"model {key}", f"/models/{s.model_id}/") for key, s in played.items()]
    pages += [SitePage("account", "/accounts/", signed_in=True),
              SitePage("team", f"/teams/{Team.objects.get(name=TEAM).slug}/", signed_in=True),
              SitePage("submit form", "/submit/", signed_in=True),
              SitePage("upload form", "/submit/upload/", signed_in=True),
              SitePage("password change", "/accounts/password/", signed_in=True)]
    return pages


def sign_in(page: Any, live: str) -> None:
    """Signs USERNAME in through the login form, in the browser page given."""
    page.goto(f"{live}/accounts/login/")
    page.fill("input[name=username]", USERNAME)
    page.fill("input[name=password]", PASSWORD)
    page.locator("main").get_by_role("button", name="Log in").click()
    page.wait_for_url("**/accounts/")


def visit_site_pages(page: Any, live: str, played: dict[str, Submission]) -> Iterator[str]:
    """Opens every page of site_pages() in the browser page given, signed out and then signed in, and
    yields each page's name once it has loaded (status 200, network idle)."""
    pages = site_pages(played)
    for signed_in in (False, True):
        if signed_in:
            sign_in(page, live)
        for name, path, _ in (p for p in pages if p.signed_in == signed_in):
            response = page.goto(live + path)
            assert response is not None and response.status == 200, (name, response and response.status)
            page.wait_for_load_state("networkidle")
            yield name
