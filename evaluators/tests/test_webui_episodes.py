"""WebUI episodes end to end: real Chromium, real actions.py files, AES and its breakdown."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.base import ScenarioSpec
from evaluators.baselines.agents import make_agent
from evaluators.baselines.server import start_server
from evaluators.endpoints.client import ChatClient
from evaluators.endpoints.messages import Completion
from evaluators.runner import effective_settings, run_attempt
from evaluators.tests.webui_pages import ALL_PAGES, PAGES
from evaluators.webui.baselines import page_files

pytestmark = pytest.mark.integration



class Scripted:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)

    def complete(self, messages, **_):
        return Completion(text=self.replies.pop(0) if self.replies else "", prompt_tokens=None,
                          completion_tokens=None, latency=0.0, attempts=1, finish_reason="stop")


def _spec(page: str, folder: Path | None = None) -> ScenarioSpec:
    return ScenarioSpec(env="webui", key=page, data={"page": page}, resource_path=folder or PAGES / page)


def _reply(files: dict[str, str]) -> str:
    return "Here is the page.\n\n" + "\n\n".join(f"```{kind}\n{code}\n```" for kind, code in files.items())


def _run(page: str, reply: str, tmp_path: Path, folder: Path | None = None, **overrides):
    settings = effective_settings("webui", "global", {"parse_retries": 0, "resolution": 640, **overrides})
    result = run_attempt(scenario=_spec(page, folder), flow="global", settings=settings, model=Scripted(reply),
                         out_dir=tmp_path / "out")
    return result, json.loads((tmp_path / "out" / "trajectory.json").read_text())


@pytest.mark.parametrize("page", ALL_PAGES)
def test_the_target_page_scores_100_percent_against_itself(page, tmp_path):
    result, trajectory = _run(page, _reply(page_files(PAGES / page, degrade=False)), tmp_path)
    assert result.score == pytest.approx(100.0), result.details["state_scores"]
    assert result.details["breakdown"]["aes"] == pytest.approx(1.0)
    states = trajectory["artifacts"]["states"]
    assert len(states) == len(result.details["state_scores"]) >= 3  # origin + at least two actions
    assert all(state["target_frame"] and state["generated_frame"] for state in states)


def test_no_code_scores_0_and_loses_everything_to_parsing(tmp_path):
    result, trajectory = _run("step-counter", "I cannot do this.", tmp_path)
    assert result.score == 0.0 and result.outcome == "no_action"
    assert result.details["breakdown"] == {"aes": 0.0, "parse": 1.0, "render": 0.0, "interaction": 0.0,
                                           "unmatched": 0.0, "attribute": 0.0}
    assert result.diagnostics.invalid_decisions == 1


def test_a_js_tag_makes_the_reply_unusable_as_in_the_official_parser(tmp_path):
    files = page_files(PAGES / "step-counter", degrade=False)
    reply = f"```html\n{files['html']}\n```\n```js\n{files.get('javascript', '')}\n```"
    result, trajectory = _run("step-counter", reply, tmp_path)
    # a model failure scored 0, not an infrastructure failure; the recorded call names the tag
    assert result.score == 0.0 and result.details["breakdown"]["parse"] == 1.0
    assert result.outcome == "no_action" and result.diagnostics.parse_errors == 1
    assert "unsupported code block tag 'js'" in trajectory["calls"][0]["parse_error"]


def test_the_exclusion_variant_is_a_setting_and_the_score_says_which_rule_it_used(tmp_path):
    files = page_files(PAGES / "step-counter", degrade=False)
    # Renamed ids: the scripted clicks fail on the generated page, so later states score 0.
    files["html"] = files["html"].replace(' id="', ' id="renamed-')
    official, _ = _run("step-counter", _reply(files), tmp_path / "official")
    variant, _ = _run("step-counter", _reply(files), tmp_path / "variant", webui_exclude_unchanged=True)
    assert official.details["exclude_unchanged"] is False and variant.details["exclude_unchanged"] is True
    # Leaving the unchanged elements out of the failed states removes weight the official rule counts as lost.
    assert official.score < variant.score
    assert official.score == pytest.approx(24.35, abs=0.01) and variant.score == pytest.approx(38.56, abs=0.01)


def test_a_page_that_throws_on_load_gets_a_render_error(tmp_path):
    files = page_files(PAGES / "step-counter", degrade=False)
    files["javascript"] = "throw new Error('boom on load');\n" + files.get("javascript", "")
    result, _ = _run("step-counter", _reply(files), tmp_path)
    assert result.details["outcome"] == "render_error"
    assert any("boom on load" in error for error in result.details["page_errors"])
    breakdown = result.details["breakdown"]
    assert breakdown["render"] > 0 and breakdown["unmatched"] == breakdown["attribute"] == 0
    assert sum(breakdown.values()) == pytest.approx(1.0)


def test_a_page_missing_an_interactive_element_gets_an_interaction_error(tmp_path):
    files = page_files(PAGES / "step-counter", degrade=False)
    # Without ids the scripted clicks cannot find their buttons on the generated page.
    files["html"] = files["html"].replace('id="', 'data-removed-id="')
    result, trajectory = _run("step-counter", _reply(files), tmp_path)
    assert result.details["failed_actions"], result.details
    breakdown = result.details["breakdown"]
    assert breakdown["interaction"] > 0 and sum(breakdown.values()) == pytest.approx(1.0)
    failed = [s for s in trajectory["artifacts"]["states"] if s.get("action_error")]
    assert failed and 0 < result.score < 100


def test_a_page_that_fetches_an_outside_url_is_blocked_and_still_scored(tmp_path):
    files = page_files(PAGES / "step-counter", degrade=False)
    files["javascript"] = ("fetch('https://example.org/collect?x=1').catch(() => {});\n"
                           "new Image().src = 'http://198.51.100.7/pixel.gif';\n" + files.get("javascript", ""))
    result, _ = _run("step-counter", _reply(files), tmp_path)
    assert any("example.org" in url for url in result.details["blocked_urls"])
    assert result.score == pytest.approx(100.0)


def test_the_baseline_endpoints_rank_idle_below_degraded_below_oracle(tmp_path):
    scores = {}
    for agent in ("idle", "degraded", "oracle"):
        with start_server(make_agent(agent, pages=[PAGES])) as server:
            settings = effective_settings("webui", "global", {"resolution": 640})
            result = run_attempt(scenario=_spec("pricing plans"), flow="global", settings=settings,
                                 model=ChatClient(server.url, agent), out_dir=tmp_path / agent)
            scores[agent] = result.score
    assert scores["idle"] == 0.0
    assert 0.0 < scores["degraded"] < scores["oracle"] == pytest.approx(100.0)


def test_online_refines_over_rounds_and_keeps_every_round_score(tmp_path):
    files = page_files(PAGES / "step-counter", degrade=False)
    degraded = page_files(PAGES / "step-counter", degrade=True)
    online_reply = "# Analyze\nfixing the styles\n# Regenerate\n" + _reply(files)
    model = Scripted(_reply(degraded), online_reply)
    settings = effective_settings("webui", "online", {"parse_retries": 0, "resolution": 640, "max_loop": 1})
    result = run_attempt(scenario=_spec("step-counter"), flow="online", settings=settings, model=model,
                         out_dir=tmp_path / "out")
    first, last = result.extra["round_scores"]
    assert first < last == pytest.approx(100.0) and result.score == pytest.approx(last)
    assert result.model_calls == 2
