"""``magebench test-endpoint`` against a live site whose Celery worker makes the one request."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from evaluators.tests.scripted_server import ScriptedServer
from magebench_client import cli
from submissions.models import EndpointCheck
from submissions.tests.test_endpoint_checks import MAX_TOKENS_REFUSED, SECRET, chat
from submissions.tests.test_refusals_write_nothing import UNUSED_ENDPOINT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


@pytest.fixture
def test_endpoint(capsys, live_server, lab, fixture_scenarios, celery_workers,
                  monkeypatch) -> Callable[..., tuple[int, str, str]]:
    """Runs ``magebench test-endpoint URL …`` on the Sokoban fixture board; its exit code, stdout and stderr."""
    celery_workers("checks", concurrency=1)
    monkeypatch.setenv("CHECK_KEY", SECRET)

    def run(url: str, *options: str) -> tuple[int, str, str]:
        code = cli.main(["--url", live_server.url, "--token", lab.write_token, "test-endpoint", url, "--env",
                         "sokoban", "--flow", "global", "--suite", "fixture", "--interval", "0.2", *options])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_a_reply_parsed_into_actions_exits_0_and_shows_them(test_endpoint, baseline_endpoint):
    code, out, err = test_endpoint(baseline_endpoint("oracle").url)

    assert code == 0, out + err
    assert "reachable: yes" in out and "model: oracle (first of /models: oracle)" in out
    assert "parsed: " in out and "ok: the reply parsed into valid actions" in out
    assert "tokens: " in out and "latency: " in out


def test_an_unparsable_reply_exits_2_and_shows_the_parse_error(test_endpoint):
    with ScriptedServer([(200, chat("Let me think about the weather instead."), {})]) as server:
        code, out, err = test_endpoint(server.url, "--model", "scripted-1", "--api-key-env", "CHECK_KEY")

    assert code == 2, out + err
    assert "Let me think about the weather instead." in out and "parse error: " in out
    assert "tokens: 900 prompt, 12 completion" in out and "finish reason: stop" in out
    assert "not ok: the reply gave no valid action" in out
    assert SECRET not in out + err and EndpointCheck.objects.get().api_key_encrypted == ""


def test_a_refused_max_tokens_exits_2_and_names_the_setting_that_fixes_it(test_endpoint):
    with ScriptedServer([(400, MAX_TOKENS_REFUSED, {})]) as server:
        code, out, err = test_endpoint(server.url, "--model", "o9")

    assert code == 2, out + err
    assert "error: invalid_request (HTTP 400): " in out
    assert "fix: --setting token_limit_parameter=max_completion_tokens" in out


def test_an_unreachable_endpoint_exits_2_and_says_so(test_endpoint):
    code, out, err = test_endpoint(UNUSED_ENDPOINT, "--model", "m")

    assert code == 2, out + err
    assert "reachable: no" in out and "error: endpoint_unreachable" in out


def test_a_refused_url_exits_2_with_the_sites_message_and_queues_nothing(test_endpoint):
    code, out, err = test_endpoint("http://user:secret@example.com/v1", "--model", "m")

    assert code == 2 and "carries credentials" in err and out == ""
    assert not EndpointCheck.objects.exists()
