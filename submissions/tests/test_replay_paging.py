"""A long replay embeds its first page of steps only; the trajectory API serves the others a page at a time."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from PIL import Image

from evaluators.trajectory import REPLAY_PAGE
from submissions.models import Attempt
from submissions.tests.replay_fixtures import finished_submission

STEPS = 3 * REPLAY_PAGE + 7


def _observation(t: int) -> dict[str, Any]:
    team = [[round(-1 + i * 0.18, 3), round(0.01 * t, 3)] for i in range(11)]
    return {"ball": [0.0, 0.0, 0.11], "ball_owned_team": 0, "ball_owned_player": 9, "active": 9,
            "left_team": team, "right_team": [[-x, y] for x, y in team], "score": [0, 0], "game_mode": 0}


def long_football_attempt(media_root: Path, *, is_public: bool = True) -> Attempt:
    """A Football attempt of STEPS decisions, one engine step each, with its trajectory and engine log."""
    scenario, submission = finished_submission(env="football", scenario_key="R5_long", team="Long lab",
                                               model="Runner", flow="online", is_public=is_public)
    attempt = Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                                     score=0.2, steps=STEPS, model_calls=STEPS,
                                     trajectory_path=f"trajectories/{submission.id}/long")
    directory = media_root / attempt.trajectory_path
    directory.mkdir(parents=True)
    frame = io.BytesIO()
    Image.new("RGB", (8, 6), "#3f8f46").save(frame, format="PNG")
    for i in range(STEPS + 1):
        (directory / f"frame_{i:04d}.png").write_bytes(frame.getvalue())
    calls = [{"index": i, "decision": i + 1, "retry": 0, "latency": 0.5, "parsed": ["right"], "parse_error": None,
              "usage": {"prompt": 100, "completion": 5}, "messages": [], "reply": f"reply {i}"} for i in range(STEPS)]
    steps = [{"index": i + 1, "call": i, "action": "right", "reward": 0.001, "done": i == STEPS - 1,
              "frame": f"frame_{i + 1:04d}.png", "info": {}} for i in range(STEPS)]
    (directory / "trajectory.json").write_text(json.dumps({
        "env": "football", "scenario": "R5_long", "flow": "online", "initial_frame": "frame_0000.png",
        "artifacts": {"kind": "football", "file": "football.json"}, "status": "scored", "score": 0.2,
        "calls": calls, "steps": steps}))
    (directory / "football.json").write_text(json.dumps({
        "kind": "football", "initial": _observation(0), "term_names": ["move"],
        "steps": [{"t": t, "decision": t, "action": "right", "auto": False, "mode": "single", "terms": {"move": 0.001},
                   "reward": 0.001, "cumulative": 0.001 * t, "observation": _observation(t)}
                  for t in range(1, STEPS + 1)],
        "segments": [{"decision": t, "action": "right", "mode": "single", "first_step": t, "last_step": t}
                     for t in range(1, STEPS + 1)]}))
    return attempt


@pytest.fixture
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _embedded(page: str, name: str) -> dict[str, Any]:
    found = re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None, name
    return json.loads(found.group(1))


@pytest.mark.django_db
def test_a_long_replay_embeds_only_its_first_page_of_steps_calls_and_engine_steps(client, media_root):
    attempt = long_football_attempt(media_root)
    page = client.get(reverse("attempt-replay", args=[attempt.id])).content.decode()
    trajectory = _embedded(page, "trajectory-data")
    assert [s["index"] for s in trajectory["steps"]] == list(range(1, REPLAY_PAGE + 1))
    assert len(trajectory["calls"]) == REPLAY_PAGE
    assert trajectory["page"] == {"offset": 0, "limit": REPLAY_PAGE, "totals": {"steps": STEPS, "calls": STEPS}}
    log = _embedded(page, "football-data")
    assert len(log["steps"]) == REPLAY_PAGE and log["page"]["totals"] == {"steps": STEPS}
    # Every decision is still listed, and the slider spans every engine step.
    assert len(log["segments"]) == STEPS and f'max="{STEPS}"' in page
    # The calls table holds the first page's rows; the page says the others are on their way.
    assert page.count("<td>reply") == 0 and len(re.findall(r"<tr><td>\d+</td>", page)) == REPLAY_PAGE
    assert f"Showing the first {REPLAY_PAGE} of {STEPS} steps" in page
    api = reverse("api-attempt-trajectory", args=[attempt.id])
    assert f'data-pages="{api}"' in page and f'data-pages="{api}?artifact=football.json"' in page


@pytest.mark.django_db
def test_the_trajectory_api_serves_a_long_trajectory_a_page_at_a_time(client, media_root):
    attempt = long_football_attempt(media_root)
    url = reverse("api-attempt-trajectory", args=[attempt.id])
    whole = client.get(url).json()["trajectory"]
    assert len(whole["steps"]) == STEPS and "page" not in whole
    steps: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    offset = 0
    while offset < STEPS:
        page = client.get(url, {"offset": offset, "limit": REPLAY_PAGE}).json()["trajectory"]
        assert page["page"] == {"offset": offset, "limit": REPLAY_PAGE, "totals": {"steps": STEPS, "calls": STEPS}}
        steps += page["steps"]
        calls += page["calls"]
        offset += REPLAY_PAGE
    assert steps == whole["steps"] and calls == whole["calls"]
    assert len(page["steps"]) == STEPS % REPLAY_PAGE


@pytest.mark.django_db
def test_the_trajectory_api_pages_an_attempts_engine_log_and_refuses_other_names(client, media_root):
    attempt = long_football_attempt(media_root)
    url = reverse("api-attempt-trajectory", args=[attempt.id])
    page = client.get(url, {"artifact": "football.json", "offset": REPLAY_PAGE, "limit": 10}).json()["artifact"]
    assert [s["t"] for s in page["steps"]] == list(range(REPLAY_PAGE + 1, REPLAY_PAGE + 11))
    assert page["page"]["totals"] == {"steps": STEPS} and len(page["segments"]) == STEPS
    assert len(client.get(url, {"artifact": "football.json"}).json()["artifact"]["steps"]) == STEPS
    for name in ("../trajectory.json", "missing.json", "frame_0000.png"):
        assert client.get(url, {"artifact": name}).status_code == 404, name
    for bad in ({"offset": -1, "limit": 10}, {"offset": 0, "limit": 0}, {"offset": 0, "limit": 100_000},
                {"offset": "x"}):
        assert client.get(url, bad).status_code == 400, bad


@pytest.mark.django_db
def test_the_pages_of_a_private_replay_are_hidden_from_outsiders_like_the_replay(client, media_root):
    attempt = long_football_attempt(media_root, is_public=False)
    url = reverse("api-attempt-trajectory", args=[attempt.id])
    assert client.get(url, {"offset": REPLAY_PAGE, "limit": REPLAY_PAGE}).status_code == 404
    assert client.get(url, {"artifact": "football.json", "offset": 0, "limit": 5}).status_code == 404
    assert client.get(reverse("attempt-replay", args=[attempt.id])).status_code == 404


@pytest.mark.integration
def test_a_visitor_of_a_long_replay_gets_later_steps_only_as_it_moves_towards_them(live_server, site_page,
                                                                                  transactional_db, media_root,
                                                                                  wait_for):
    attempt = long_football_attempt(media_root)
    requests: list[str] = []
    page, errors = site_page(viewport={"width": 1400, "height": 1000})
    page.on("request", lambda r: requests.append(r.url) if "/trajectory/" in r.url else None)
    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
    page.wait_for_selector("#football-chart .plot-container svg.main-svg", timeout=15_000)
    chart_steps = ("document.getElementById('football-chart').data"
                   " && document.getElementById('football-chart').data[0].x.length")
    # Only the embedded first page: nothing fetched up front; the reward chart has every step's rewards.
    assert page.locator("#step-list li").count() == REPLAY_PAGE + 1
    assert page.locator("#call-rows tr").count() == REPLAY_PAGE
    assert page.evaluate(chart_steps) == STEPS and requests == []
    # Every decision is listed; one on the second page brings that page of engine steps and of the timeline.
    assert page.locator("#football-segments li").count() == STEPS
    page.locator("#football-segments li[data-decision='60']").click()
    step = page.locator("#football-step")
    wait_for(lambda: step.inner_text() == f"Step 60 / {STEPS}", 20, "the pitch to reach step 60")
    wait_for(lambda: page.locator("#step-list li.active").inner_text() == "60. right", 20, "the timeline to follow")
    assert page.locator("#step-list li").count() == 2 * REPLAY_PAGE + 1
    assert not [url for url in requests if f"offset={2 * REPLAY_PAGE}" in url], requests
    # End asks for the rest: the last step everywhere, every call in the table.
    page.locator("h1").click()
    page.keyboard.press("End")
    wait_for(lambda: page.locator("#step-list li").count() == STEPS + 1, 20, "every step on the timeline")
    wait_for(lambda: page.locator("#step-list li.active").inner_text() == f"{STEPS}. right", 20, "the last step")
    wait_for(lambda: step.inner_text() == f"Step {STEPS} / {STEPS}", 20, "the pitch to show the last step")
    assert page.locator("#call-rows tr").count() == STEPS
    assert page.evaluate(chart_steps) == STEPS
    assert page.locator("#replay-loading").is_hidden()
    assert errors == []


@pytest.mark.django_db
def test_a_finished_replay_is_read_from_disk_once_until_its_trajectory_is_written_again(client, media_root,
                                                                                        monkeypatch):
    import os

    from submissions import views

    attempt = long_football_attempt(media_root)
    reads: list[int] = []
    read = views.attempt_trajectory

    def counted(attempt_read: Attempt) -> dict[str, Any] | None:
        reads.append(attempt_read.id)
        return read(attempt_read)

    monkeypatch.setattr(views, "attempt_trajectory", counted)
    url = reverse("attempt-replay", args=[attempt.id])
    first = client.get(url).content
    assert client.get(url).content == first and len(reads) == 1
    index = media_root / attempt.trajectory_path / "trajectory.json"
    stat = index.stat()
    os.utime(index, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    client.get(url)
    assert len(reads) == 2
