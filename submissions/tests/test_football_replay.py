"""The Football replay: the engine log read beside the trajectory, the page's panel and its animation."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from PIL import Image

from submissions.models import Attempt
from submissions.selectors import attempt_artifact
from submissions.tests.replay_fixtures import finished_submission

TERMS = ["move", "opponents", "score", "stolen", "pass", "shot"]
# (decision, action chosen by the model, mode, first engine step, last engine step)
SEGMENTS = [(1, "right", "single", 1, 1), (2, "short_pass", "pass", 2, 12), (3, "top_right", "move", 13, 20)]
ENGINE_STEPS = 20
PASSER, RECEIVER, TACKLER = 9, 10, 7


def _kick_off() -> dict[str, Any]:
    left = [[-1.011, 0.0], [-0.4, -0.03], [-0.6036, -0.0559], [-0.5844, 0.0295], [-0.5207, -0.2337],
            [-0.4873, 0.2012], [-0.2912, 0.0437], [-0.1769, -0.2866], [-0.2133, 0.2825], [0.05, -0.05], [0.25, -0.28]]
    right = [[1.011, 0.0], [0.5722, -0.0498], [0.5591, 0.0376], [0.5106, -0.2073], [0.5005, 0.2083],
             [0.2942, -0.0955], [0.2841, 0.0681], [0.38, -0.33], [0.2012, 0.2541], [0.15, -0.1], [0.12, 0.08]]
    return {"ball": [0.06, -0.05, 0.11], "ball_direction": [0.0, 0.0, 0.0], "ball_owned_team": 0,
            "ball_owned_player": PASSER, "active": PASSER, "left_team": left, "right_team": right,
            "left_team_direction": [[0.0, 0.0] for _ in left], "right_team_direction": [[0.0, 0.0] for _ in right],
            "score": [0, 0], "game_mode": 0, "steps_left": 400}


def _segment_of(t: int) -> tuple[int, str, str, int, int]:
    return next(s for s in SEGMENTS if s[3] <= t <= s[4])


def football_log() -> dict[str, Any]:
    """20 engine steps of a short attack: a run, a pass carried on for 10 steps, a dribble that is tackled."""
    obs = _kick_off()
    steps: list[dict[str, Any]] = []
    cumulative = 0.0
    for t in range(1, ENGINE_STEPS + 1):
        decision, chosen, mode, first, _ = _segment_of(t)
        previous = json.loads(json.dumps(obs))
        left, right = obs["left_team"], obs["right_team"]
        terms = dict.fromkeys(TERMS, 0.0)
        pass_clearance = None
        if t == 1:
            left[PASSER][0] += 0.012
            obs["ball"] = [left[PASSER][0] + 0.01, left[PASSER][1], 0.11]
            terms["move"] = 0.006
        elif t <= 5:
            # the ball is in flight from the passer to the receiver, lifted a little mid-way
            share = (t - 1) / 5
            start, end = previous["ball"], left[RECEIVER]
            obs["ball"] = [start[0] + (end[0] - start[0]) * share, start[1] + (end[1] - start[1]) * share,
                           0.11 + 0.6 * share * (1 - share)]
            obs["ball_owned_team"], obs["ball_owned_player"] = -1, -1
            pass_clearance = 0.31 if t == 2 else None
        elif t <= 12:
            obs["ball"] = [left[RECEIVER][0] + 0.01, left[RECEIVER][1], 0.11]
            obs["ball_owned_team"], obs["ball_owned_player"], obs["active"] = 0, RECEIVER, RECEIVER
            terms["pass"] = 0.05 if t == 6 else 0.0
        elif t < ENGINE_STEPS:
            left[RECEIVER][0] += 0.01
            left[RECEIVER][1] -= 0.008
            obs["ball"] = [left[RECEIVER][0] + 0.01, left[RECEIVER][1], 0.11]
            terms["move"] = 0.004
            terms["opponents"] = 0.02 if t == 17 else 0.0
        else:
            obs["ball_owned_team"], obs["ball_owned_player"] = 1, TACKLER
            terms["stolen"] = -0.1
        ball = obs["ball"]
        for player in right[1:]:
            # defenders close in on the ball
            player[0] += 0.15 * (ball[0] - player[0]) / ENGINE_STEPS
            player[1] += 0.15 * (ball[1] - player[1]) / ENGINE_STEPS
        obs["left_team_direction"] = [[round(a[0] - b[0], 4), round(a[1] - b[1], 4)]
                                      for a, b in zip(left, previous["left_team"])]
        obs["right_team_direction"] = [[round(a[0] - b[0], 4), round(a[1] - b[1], 4)]
                                       for a, b in zip(right, previous["right_team"])]
        obs["ball_direction"] = [round(a - b, 4) for a, b in zip(obs["ball"], previous["ball"])]
        obs["steps_left"] -= 1
        reward = round(sum(terms.values()), 6)
        cumulative = round(cumulative + reward, 6)
        auto = t != first
        steps.append({"t": t, "decision": decision, "action": "builtin_ai" if auto and mode == "pass" else chosen,
                      "auto": auto, "mode": mode, "terms": terms, "pass_clearance": pass_clearance,
                      "shot_clearance": None, "reward": reward, "cumulative": cumulative,
                      "observation": json.loads(json.dumps(obs))})
    return {"kind": "football", "seed": 11, "initial": _kick_off(), "term_names": TERMS, "steps": steps,
            "segments": [{"decision": d, "action": a, "mode": m, "first_step": f, "last_step": last}
                         for d, a, m, f, last in SEGMENTS]}


def trajectory_index(log: dict[str, Any]) -> dict[str, Any]:
    steps, calls = [], []
    for decision, action, mode, first, last in SEGMENTS:
        engine = log["steps"][first - 1:last]
        terms = {name: round(sum(s["terms"][name] for s in engine), 6) for name in TERMS}
        done = last == ENGINE_STEPS
        calls.append({"index": decision - 1, "decision": decision, "retry": 0, "latency": 0.8,
                      "usage": {"prompt": 1480, "completion": 42}, "parsed": [action], "parse_error": None,
                      "messages": [{"role": "user", "content": [
                          {"type": "text", "text": "The match as it stands:"},
                          {"type": "image", "frame": f"frame_{decision - 1:04d}.png"}]}],
                      "reply": f"# analyze\nTeam-mate free ahead.\n# action\n{action}"})
        steps.append({"index": decision, "call": decision - 1, "action": action,
                      "reward": round(sum(terms.values()), 6), "done": done, "frame": f"frame_{decision:04d}.png",
                      "extra_frames": [],
                      "info": {"engine_steps": len(engine), "mode": mode, "cumulative": engine[-1]["cumulative"],
                               "terms": terms, "changed": True, "outcome": "stolen" if done else "running"}})
    return {"env": "football", "scenario": "R5_P_1", "flow": "online", "initial_frame": "frame_0000.png",
            "artifacts": {"kind": "football", "file": "football.json", "engine_steps": ENGINE_STEPS,
                          "segments": len(SEGMENTS)},
            "status": "scored", "score": 0.0, "outcome": "stolen", "frames": [f"frame_{i:04d}.png" for i in range(4)],
            "calls": calls, "steps": steps}


def write_football_trajectory(directory: Path, *, with_log: bool = True) -> dict[str, Any]:
    directory.mkdir(parents=True)
    log = football_log()
    for i, colour in enumerate(["#3f8f46", "#2457c5", "#c0392b", "#d9a21b"]):
        Image.new("RGB", (96, 54), colour).save(directory / f"frame_{i:04d}.png")
    (directory / "trajectory.json").write_text(json.dumps(trajectory_index(log)))
    if with_log:
        (directory / "football.json").write_text(json.dumps(log))
    return log


def football_attempt(media_root: Path, *, with_log: bool = True) -> Attempt:
    scenario, submission = finished_submission(env="football", scenario_key="R5_P_1", team="Lab", model="Striker",
                                               flow="online")
    attempt = Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                                     score=0.0, outcome="stolen", steps=len(SEGMENTS), model_calls=len(SEGMENTS),
                                     trajectory_path=f"trajectories/{submission.id}/R5_P_1-0")
    write_football_trajectory(media_root / attempt.trajectory_path, with_log=with_log)
    return attempt


@pytest.fixture
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.mark.django_db
def test_a_football_replay_embeds_the_engine_log_and_its_panel(client, media_root):
    attempt = football_attempt(media_root)
    page = client.get(reverse("attempt-replay", args=[attempt.id])).content.decode()
    embedded = re.search(r'<script id="football-data" type="application/json">(.*?)</script>', page, re.S)
    assert embedded is not None
    log = json.loads(embedded.group(1))
    assert len(log["steps"]) == ENGINE_STEPS and [s["decision"] for s in log["segments"]] == [1, 2, 3]
    for part in ['id="football-pitch"', 'id="football-slider"', 'max="20"', 'id="football-play"',
                 'id="football-segments"', 'id="football-chart"', "/static/vendor/plotly-basic.min.js",
                 "/static/js/replay_football.js", '<link rel="stylesheet" href="/static/css/replay_football.css">',
                 f"/attempts/{attempt.id}/frames/frame_0000.png"]:
        assert part in page, part
    # the generic step-by-step viewer stays below the panel
    assert 'id="trajectory-data"' in page and 'id="step-list"' in page
    assert page.index('id="football-pitch"') < page.index('id="step-list"')


@pytest.mark.django_db
def test_a_football_replay_without_its_engine_log_says_so_and_loads_no_chart(client, media_root):
    attempt = football_attempt(media_root, with_log=False)
    page = client.get(reverse("attempt-replay", args=[attempt.id])).content.decode()
    assert "football.json) of this attempt is missing" in page
    assert "plotly.min.js" not in page and "football-data" not in page and 'id="step-list"' in page


@pytest.mark.django_db
def test_an_artifact_is_read_only_by_a_plain_json_name_inside_the_trajectory_folder(media_root):
    attempt = football_attempt(media_root)
    directory = media_root / attempt.trajectory_path
    assert attempt_artifact(attempt, "football.json")["kind"] == "football"
    (directory.parent / "secret.json").write_text('{"secret": true}')
    (directory / "broken.json").write_text("{not json")
    (directory / "list.json").write_text("[1, 2]")
    (directory / "escape.json").symlink_to(directory.parent / "secret.json")
    for name in ["../secret.json", "..%2Fsecret.json", "/etc/passwd", ".hidden.json", "football.json/..",
                 "frame_0000.png", "missing.json", "broken.json", "list.json", "escape.json", ""]:
        assert attempt_artifact(attempt, name) is None, name
    attempt.trajectory_path = ""
    assert attempt_artifact(attempt, "football.json") is None


@pytest.mark.integration
def test_a_visitor_plays_a_football_replay_on_the_pitch_and_the_reward_chart(live_server, site_page, transactional_db,
                                                                            media_root, wait_for):
    attempt = football_attempt(media_root)
    requests: list[str] = []
    page, errors = site_page(viewport={"width": 1400, "height": 1000})
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")

    step = page.locator("#football-step")
    assert step.inner_text() == "Step 0 / 20"
    # The panel's own style sheet lays the pitch out beside the navigator.
    assert page.locator(".football-stage").evaluate("node => getComputedStyle(node).display") == "grid"
    assert "before decision 1" in page.locator("#football-decision").inner_text()
    pixels = page.evaluate("""() => {
        const c = document.getElementById('football-pitch');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const colours = new Set(); let ours = 0, theirs = 0, white = 0;
        for (let i = 0; i < d.length; i += 4) {
          colours.add((d[i] >> 4) + ',' + (d[i + 1] >> 4) + ',' + (d[i + 2] >> 4));
          if (d[i] < 60 && d[i + 2] > 170) ours++;
          if (d[i] > 170 && d[i + 1] < 80 && d[i + 2] < 80) theirs++;
          if (d[i] > 240 && d[i + 1] > 240 && d[i + 2] > 240) white++;
        }
        return {colours: colours.size, ours, theirs, white, width: c.width};
    }""")
    assert pixels["width"] >= 320 and pixels["colours"] > 8, pixels
    assert pixels["ours"] > 50 and pixels["theirs"] > 50 and pixels["white"] > 50, pixels
    first_drawing = page.evaluate("document.getElementById('football-pitch').toDataURL()")

    page.wait_for_selector("#football-chart .plot-container svg.main-svg", timeout=15_000)
    assert page.locator("#football-chart .legendtext").count() == len(TERMS) + 1
    marker = "() => { const s = document.getElementById('football-chart').layout.shapes; return s[s.length - 1].x0; }"

    page.keyboard.press(".")
    assert step.inner_text() == "Step 1 / 20"
    assert page.locator("#football-action").inner_text() == "right"
    page.locator("#football-slider").fill("8")
    assert step.inner_text() == "Step 8 / 20"
    assert page.locator("#football-decision").inner_text() == "decision 2 / 3"
    assert page.locator("#football-action").inner_text() == "builtin_ai"
    assert page.locator("#football-auto").is_visible() and page.locator("#football-mode").inner_text() == "pass"
    assert "ours, player 10" in page.locator("#football-possession").inner_text()
    assert page.locator("#football-segments li.active").get_attribute("data-decision") == "2"
    assert page.locator("#football-frame").get_attribute("src").endswith("/frames/frame_0002.png")
    # Polled from Python: the site's CSP allows no eval, which an in-page wait_for_function needs.
    wait_for(lambda: page.evaluate(f"({marker})() === 8"), 10, "the pitch to show step 8")
    assert page.evaluate("document.getElementById('football-pitch').toDataURL()") != first_drawing
    page.keyboard.press(",")
    assert step.inner_text() == "Step 7 / 20"

    assert page.locator("#football-segments li.auto").count() == 2
    page.locator("#football-segments li", has_text="top_right").click()
    assert step.inner_text() == "Step 13 / 20" and page.locator("#football-auto").is_hidden()

    page.locator("#football-play").click()
    wait_for(lambda: step.inner_text() != "Step 13 / 20", 10, "playing to start")
    wait_for(lambda: step.inner_text() == "Step 20 / 20", 10, "playing to reach the last step")
    wait_for(lambda: page.locator("#football-play").inner_text() == "Play", 10, "playing to stop")
    assert "opponents, player 7" in page.locator("#football-possession").inner_text()
    final = football_log()["steps"][-1]["cumulative"]
    assert page.locator("#football-cumulative").inner_text() == f"{final:.3f}"
    wait_for(lambda: page.evaluate(f"({marker})() === 20"), 10, "the pitch to show step 20")

    page.locator("h1").click()  # space must reach the page, not a focused control
    page.keyboard.press("Space")
    wait_for(lambda: step.inner_text() != "Step 20 / 20", 10, "Space to start playing")
    page.keyboard.press("Space")
    assert page.locator("#football-play").inner_text() == "Play"

    page.keyboard.press("Home")  # the timeline and the pitch are one navigator: both go back to the start
    assert page.locator("#step-list li.active").inner_text() == "start" and step.inner_text() == "Step 0 / 20"
    page.keyboard.press("ArrowRight")
    assert page.locator("#step-list li.active").inner_text() == "1. right" and step.inner_text() == "Step 1 / 20"
    wait_for(lambda: page.evaluate("(() => { const img = document.getElementById('football-frame');"
                                   " return img.complete && img.naturalWidth > 0; })()"), 10, "the frame to decode")
    assert errors == []
    assert all(url.startswith(live_server.url) for url in requests), requests
