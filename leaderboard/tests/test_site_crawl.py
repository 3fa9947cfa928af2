"""Every address a page of the site names answers, for every suite and every kind of row.

The site as a visitor finds it: the runs the platform played (site_pages.py: evaluated entries and
baselines on the fixture suite), an uploaded entry (private to its team, whose member signs in), an entry
of a suite imported under another name, and the paper's reported rows on the official suite's boards.
A crawl through Django's test client (site_crawl.py) follows every same-site link, stylesheet, script,
image and chart-data address from the home page and the boards of each suite, anonymous and signed in;
then headless Chromium opens one page of each kind the crawl met, on a phone and a wide screen.
"""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from accounts.models import Membership, Team
from catalogue.models import Scenario
from catalogue.services import scenarios_import
from conftest import FIXTURE_RESOURCES, baseline_servers, import_fixture_scenarios
from leaderboard.tests.conftest import _NOT_PLAYED
from leaderboard.tests.site_crawl import Crawl, crawl
from leaderboard.tests.site_pages import PHONE, USERNAME, play_site, sign_in
from leaderboard.tests.test_board_layout_in_browser import WIDE
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint, submission_prepare
from submissions.upload_services import submission_create_upload

pytestmark = pytest.mark.integration

#: A suite imported under a name of its own (the fixture scenarios again).
IMPORTED = "imported"
#: Where the crawl starts: the home page and a board of each suite (the official one holds the paper's rows).
STARTS = ["/", "/cost/", "/boards/sokoban/global/mini/?suite=fixture", "/boards/sokoban/global/mini/?suite=official",
          f"/boards/sokoban/global/mini/?suite={IMPORTED}", "/boards/webui/global/full/?suite=official",
          "/boards/football/online/mini/?suite=official"]


def _finish(submission: Submission) -> Submission:
    submission_prepare(submission_id=submission.id)
    for attempt_id in Attempt.objects.filter(submission_id=submission.id).values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    submission.refresh_from_db()
    # An upload of some of the scenarios stays incomplete (listed, unranked): a kind of row of its own.
    assert submission.status in (Submission.Status.COMPLETED, Submission.Status.INCOMPLETE), submission.status_reason
    return submission


def _more_kinds_of_rows(endpoint: Any) -> None:
    """An uploaded entry of two scenarios, private to Lab (the signed-in visitor joins Lab), an entry on the
    imported suite, and the paper's reported rows (official suite)."""
    lab = Team.objects.get(name="Lab")
    keys = Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).order_by("key") \
        .values_list("key", flat=True)[:2]
    lines = [{"scenario": key, "repeat": 0, "replies": ["I would push the box up. Action: Up"]} for key in keys]
    uploaded = submission_create_upload(model=model_entry_upsert(team=lab, name="Uploaded model"), env="sokoban",
                                        flow="global", subset="mini", suite="fixture", is_public=False,
                                        data="\n".join(json.dumps(line) for line in lines).encode())
    _finish(uploaded)
    scenarios_import(path=FIXTURE_RESOURCES, suite=IMPORTED, envs=["sokoban"], verify=False)
    imported = submission_create_endpoint(model=model_entry_upsert(team=lab, name="Imported-suite model"),
                                          env="sokoban", flow="global", subset="mini", suite=IMPORTED,
                                          endpoint_url=endpoint("oracle").url, is_public=True,
                                          settings={"repeats": 1, "resolution": 256, "max_loop": 4})
    _finish(imported)
    call_command("import_paper_results", stdout=StringIO())
    user = get_user_model().objects.get(username=USERNAME)
    Membership.objects.create(team=lab, user=user, role=Membership.Role.MEMBER)


@pytest.fixture(scope="module")
def crawl_rows(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site played once for the module, with every kind of row, kept as the rows it wrote (as
    leaderboard/tests/conftest.py's played_rows does)."""
    rows = tmp_path_factory.mktemp("crawl") / "site.json"
    with django_db_blocker.unblock():
        try:
            with baseline_servers() as endpoint:
                import_fixture_scenarios()
                play_site(endpoint)
                _more_kinds_of_rows(endpoint)
            call_command("dumpdata", exclude=_NOT_PLAYED, output=str(rows), verbosity=0)
        finally:
            call_command("flush", interactive=False, verbosity=0)
    return rows


@pytest.fixture
def site(transactional_db: Any, crawl_rows: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from submissions import export_files

    call_command("loaddata", str(crawl_rows), verbosity=0)
    # An export not built yet answers 202 and sends its build to a worker; no worker runs here.
    monkeypatch.setattr(export_files, "_send_build", lambda *args, **kwargs: None)


#: Each crawl of the module's site (the same rows, ids included, in every test), by whether signed in.
_crawls: dict[bool, Crawl] = {}


def site_crawl(signed_in: bool) -> Crawl:
    if signed_in not in _crawls:
        client = Client(raise_request_exception=False)  # a server error is listed with the others
        if signed_in:
            client.force_login(get_user_model().objects.get(username=USERNAME))
        _crawls[signed_in] = crawl(client, STARTS + (["/accounts/"] if signed_in else []))
    return _crawls[signed_in]


def test_every_address_a_page_names_answers_for_an_anonymous_visitor(site):
    found = site_crawl(signed_in=False)
    assert not found.failures(), "\n".join(found.failures())
    # It reached every kind of row and suite.
    visited = " ".join(found.answers)
    for kind in ("/submissions/", "/attempts/", "/models/", "suite=official", f"suite={IMPORTED}", "/analysis/",
                 "/compare/", "/cost/", "/environments/", "/static/", "attempts.csv"):
        assert kind in visited, kind
    uploaded = Submission.objects.get(model__name="Uploaded model")
    assert f"/submissions/{uploaded.id}/" not in found.answers  # private to its team


def test_every_address_a_page_names_answers_for_a_signed_in_member(site):
    found = site_crawl(signed_in=True)
    assert not found.failures(), "\n".join(found.failures())
    uploaded = Submission.objects.get(model__name="Uploaded model")
    assert f"/submissions/{uploaded.id}/" in found.answers  # the team's own private entry
    assert any(url.startswith("/teams/") for url in found.answers)


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_one_page_of_each_kind_loads_in_a_browser_without_errors(live_server, site_page, site, viewport):
    page, errors = site_page(viewport=viewport)
    failed: list[str] = []
    anonymous = site_crawl(signed_in=False).pages
    for signed_in in (False, True):
        if signed_in:
            sign_in(page, live_server.url)  # and then only the kinds of page a member sees
        pages = site_crawl(signed_in).pages if signed_in else anonymous
        for kind, url in sorted(pages.items()):
            if signed_in and kind in anonymous:
                continue
            response = page.goto(live_server.url + url)
            page.wait_for_load_state("networkidle")
            if response is None or response.status != 200 or errors:
                failed.append(f"{kind} {url}: {response and response.status} {errors}")
                errors.clear()
    assert not failed, "\n".join(failed)
