"""The queue: serving order, progress counts, time-left estimates and the latest error."""
from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from accounts.models import Team
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission, SubmissionResult
from submissions.progress_selectors import queue_item, queue_list
from submissions.selectors import queue_loads
from submissions.templatetags.durations import duration

pytestmark = pytest.mark.django_db


def _submission(name: str, statuses: Sequence[tuple[str, float | None]], *, status: str = Submission.Status.RUNNING,
                subset: str = "mini", public: bool = True) -> Submission:
    team, _ = Team.objects.get_or_create(name="Lab", defaults={"slug": "lab"})
    submission = Submission.objects.create(team=team, model=ModelEntry.objects.create(team=team, name=name),
                                           environment_id="sokoban", flow="global", subset=subset, suite="fixture",
                                           status=status, is_public=public)
    scenarios = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("key"))
    Attempt.objects.bulk_create(
        Attempt(submission=submission, scenario=scenarios[i], repeat=0, status=attempt_status, duration_seconds=seconds,
                score=50.0 if attempt_status == Attempt.Status.SCORED else None)
        for i, (attempt_status, seconds) in enumerate(statuses))
    return submission


SCORED, PENDING, RUNNING = Attempt.Status.SCORED, Attempt.Status.PENDING, Attempt.Status.RUNNING


def test_the_queue_lists_submissions_in_the_order_the_fair_schedule_finishes_them(fixture_scenarios):
    # first: 2 scored at 10 s and 20 s (mean 15 s), 1 running, 3 waiting
    _submission("First", [(SCORED, 10.0), (SCORED, 20.0), (RUNNING, None)] + [(PENDING, None)] * 3)
    # second: nothing finished yet, so the team's recent finished runs of the board give 30 s per attempt; 2 waiting
    _submission("Second", [(PENDING, None)] * 2, status=Submission.Status.QUEUED)
    done = _submission("Done earlier", [(SCORED, 30.0)], status=Submission.Status.COMPLETED)
    SubmissionResult.objects.create(submission=done, mean_seconds=30.0, computed_at=timezone.now())
    items = queue_list()
    # No worker has registered, so one slot (as many as run now). Both submissions are the same
    # team's and take turns: the running attempt ends at 15 s; First 15-30, Second 30-60, First 60-75,
    # Second 75-105 (done), First 105-120 (done).
    assert [i.submission.model.name for i in items] == ["Second", "First", "Done earlier"]
    assert [i.position for i in items] == [1, 2, None]
    assert items[0].eta_seconds == pytest.approx(105.0)
    assert items[0].eta_basis == "recent runs of this team on this board"
    assert items[1].eta_seconds == pytest.approx(120.0) and items[1].eta_basis == "this submission"
    assert items[2].eta_seconds is None
    assert (items[1].progress.done, items[1].progress.total, items[1].progress.running) == (2, 6, 1)


def test_a_board_with_no_observed_time_has_no_eta_and_makes_later_ones_lower_bounds(fixture_scenarios):
    unknown = _submission("Unknown", [(PENDING, None)] * 2, subset="full")
    _submission("Later", [(SCORED, 10.0), (PENDING, None)])
    first, second = queue_list()
    assert first.submission == unknown and first.eta_seconds is None and first.position == 1
    assert second.eta_seconds == pytest.approx(10.0) and second.eta_at_least


def test_the_time_left_counts_the_platform_s_waits_that_the_model_s_seconds_leave_out(fixture_scenarios):
    submission = _submission("Rate limited", [(SCORED, 2.0), (SCORED, 4.0), (PENDING, None), (PENDING, None)])
    Attempt.objects.filter(submission=submission, status=SCORED).update(details={"platform_wait_seconds": 9.0})
    item = queue_item(submission)
    # 3 s of the model's and 9 s of waiting per attempt, two attempts one after the other on one slot.
    assert item is not None and item.eta_seconds == pytest.approx(24.0)


def test_the_time_left_starts_after_the_endpoint_s_retry_after_ends(fixture_scenarios):
    submission = _submission("Held", [(SCORED, 5.0), (PENDING, None), (PENDING, None)])
    Submission.objects.filter(id=submission.id).update(calls_resume_at=timezone.now() + timedelta(seconds=120))
    item = queue_item(submission)
    # Nothing starts for 120 s; then the two attempts of 5 s run one after the other on one slot.
    assert item is not None and item.eta_seconds == pytest.approx(130.0, abs=1.0)


def test_the_queue_shows_the_latest_infrastructure_error_of_a_submission(client, fixture_scenarios):
    submission = _submission("Flaky", [(SCORED, 5.0), (Attempt.Status.RETRYING, None)])
    Attempt.objects.filter(submission=submission, status=Attempt.Status.RETRYING).update(
        error_kind="server_error", error_message="HTTP 502 from the endpoint")
    item = queue_item(submission)
    assert item is not None and item.last_error == "server_error: HTTP 502 from the endpoint"
    page = client.get(reverse("queue")).content.decode()
    assert "server_error: HTTP 502 from the endpoint" in page
    detail = client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert "Position 1 in the" in detail and "HTTP 502" in detail
    progress = client.get(reverse("api-submission-detail", args=[submission.id])).json()["progress"]
    assert progress["queue_position"] == 1 and progress["last_error"].startswith("server_error")
    assert progress["eta_seconds"] == pytest.approx(5.0)  # one attempt waits, 5 s each


def test_a_private_submission_keeps_its_place_but_not_its_name_or_errors_for_outsiders(client, fixture_scenarios):
    secret = _submission("Secret model", [(Attempt.Status.RETRYING, None)], public=False)
    Attempt.objects.filter(submission=secret).update(error_kind="server_error",
                                                     error_message="HTTP 502 at secret.example")
    page = client.get(reverse("queue")).content.decode()
    assert "private submission" in page and "Secret model" not in page and "secret.example" not in page
    assert client.get(reverse("submission-detail", args=[secret.id])).status_code == 404


def test_the_queue_page_reads_a_fixed_number_of_queries_however_long_it_is(client, fixture_scenarios,
                                                                         django_assert_max_num_queries):
    for i in range(8):
        _submission(f"Model {i}", [(SCORED, 5.0), (PENDING, None)])
    with django_assert_max_num_queries(10):
        assert client.get(reverse("queue")).status_code == 200


def test_the_queue_page_shows_each_queue_s_load_and_flags_work_that_no_worker_is_taking(client, fixture_scenarios):
    sokoban = _submission("Busy", [(RUNNING, None), (RUNNING, None), (PENDING, None), (SCORED, 3.0)])
    Attempt.objects.filter(submission=sokoban, status=RUNNING).update(heartbeat_at=timezone.now())
    first, second = Attempt.objects.filter(submission=sokoban, status=RUNNING).order_by("id")
    Attempt.objects.filter(id=first.id).update(worker="light-1@host")
    Attempt.objects.filter(id=second.id).update(worker="light-2@host")
    webui = _submission("Waiting", [(PENDING, None)] * 3)
    webui.environment_id = "webui"
    webui.save()
    loads = {load.queue: load for load in queue_loads()}
    assert (loads["light"].waiting, loads["light"].running, loads["light"].workers) == (1, 2, 2)
    assert not loads["light"].unserved
    assert (loads["browser"].waiting, loads["browser"].running, loads["browser"].unserved) == (3, 0, True)
    assert (loads["engine"].waiting, loads["engine"].unserved) == (0, False)
    # A worker whose heartbeat went stale is not counted as busy any more.
    Attempt.objects.filter(id=second.id).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert {load.queue: load.workers for load in queue_loads()}["light"] == 1
    page = client.get(reverse("queue")).content.decode()
    assert "WebUI pages in Chromium" in page and "its workers may be down" in page


def test_durations_read_in_seconds_minutes_or_hours():
    assert [duration(v) for v in (None, 4.4, 89, 90, 150, 5_340, 5_400, 7_260)] == [
        "—", "4 s", "89 s", "2 min", "2 min", "89 min", "1 h 30 min", "2 h 01 min"]


def _queue_rows(html: str) -> list[list[str]]:
    """The queue table's rows as lists of cell texts (tags dropped, blanks squeezed)."""
    body = html.split('<table class="board queue"', 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    rows = []
    for row in re.findall(r"<tr\b.*?</tr>", body, re.S):
        cells = re.findall(r"<td\b[^>]*>(.*?)</td>", row, re.S)
        rows.append([" ".join(re.sub(r"<[^>]+>", " ", cell).split()) for cell in cells])
    return rows


def test_outsiders_see_a_private_submission_s_place_in_the_queue_and_nothing_else(client, fixture_scenarios):
    public = _submission("Open model", [(SCORED, 5.0), (PENDING, None)])
    secret = _submission("Secret model", [(SCORED, 7.0), (RUNNING, None), (PENDING, None)], public=False,
                         subset="full")
    secret.environment_id = "webui"
    secret.save()
    rows = _queue_rows(client.get(reverse("queue")).content.decode())
    # Progress with its status under it, then the board and the submission.
    assert rows[0][:5] == ["1", "Open model", "1/2 running", "Sokoban · Global · mini", f"#{public.id}"]
    assert rows[1] == ["2", "private submission"]
    page = client.get(reverse("queue")).content.decode()
    assert reverse("submission-detail", args=[secret.id]) not in page and "/boards/webui/" not in page
    assert 'value="1"' in page and "1/3" not in page  # the public one's progress only

    listed = client.get(reverse("api-queue")).json()
    assert [item["position"] for item in listed["active"]] == [1, 2]
    assert listed["active"][0]["id"] == public.id and listed["active"][0]["model"] == "Open model"
    assert listed["active"][0]["progress"]["done"] == 1
    assert listed["active"][1] == {"position": 2, "private": True}


def test_the_team_sees_its_own_private_submission_in_the_queue_in_full(client, fixture_scenarios):
    from accounts.models import Membership

    secret = _submission("Secret model", [(SCORED, 7.0), (PENDING, None)], public=False)
    user = get_user_model().objects.create_user("ada", password="a long passphrase 7")
    Membership.objects.create(team=secret.team, user=user, role="owner")
    client.force_login(user)
    row = _queue_rows(client.get(reverse("queue")).content.decode())[0]
    assert row[:5] == ["1", "Secret model private", "1/2 running", "Sokoban · Global · mini", f"#{secret.id}"]
    item = client.get(reverse("api-queue")).json()["active"][0]
    assert item["id"] == secret.id and item["board"] == {"env": "sokoban", "flow": "global", "subset": "mini",
                                                          "suite": "fixture"}
    assert item["private"] is True and item["progress"]["total"] == 2


def test_finished_private_submissions_are_left_out_of_the_queue_for_outsiders(client, fixture_scenarios):
    _submission("Secret done", [(SCORED, 7.0)], public=False, status=Submission.Status.COMPLETED)
    _submission("Open done", [(SCORED, 7.0)], status=Submission.Status.COMPLETED)
    rows = _queue_rows(client.get(reverse("queue")).content.decode())
    assert [row[1] for row in rows] == ["Open done"]
    assert [item["model"] for item in client.get(reverse("api-queue")).json()["recent"]] == ["Open done"]
