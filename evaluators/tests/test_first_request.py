"""The first request of an attempt sent alone: the flow's own request, one model call, and the answer
read by the parser the episode would have used."""
from __future__ import annotations

import pytest

from evaluators.endpoints.errors import InfraError
from evaluators.first_request import first_request
from evaluators.runner import effective_settings, run_attempt
from evaluators.tests.test_flows import SPEC, Scripted
from evaluators.tests.test_webui_episodes import _reply, _spec
from evaluators.tests.webui_pages import PAGES
from evaluators.webui.baselines import page_files


@pytest.mark.parametrize(("flow", "reply"), [("global", "### Actions\nLeft"), ("online", "# action\nLeft")])
def test_only_the_first_request_is_sent_and_it_is_the_attempts_own(flow, reply, tmp_path):
    settings = effective_settings("sokoban", flow, {"parse_retries": 2})
    alone, attempt = Scripted(reply), Scripted(*[reply] * 1000)

    answer = first_request(scenario=SPEC, flow=flow, settings=settings, model=alone, out_dir=tmp_path / "alone")
    run_attempt(scenario=SPEC, flow=flow, settings=settings, model=attempt, out_dir=tmp_path / "attempt")

    assert len(alone.requests) == 1 and attempt.requests
    assert alone.requests[0] == attempt.requests[0] and alone.sampling[0] == attempt.sampling[0]
    assert answer.completion.text == reply
    assert answer.parsed.ok and [str(action) for action in answer.parsed.actions] == ["Left"]


def test_an_unparsable_answer_is_not_asked_again(tmp_path):
    model = Scripted("no idea", "### Actions\nLeft")
    settings = effective_settings("sokoban", "global", {"parse_retries": 3})

    answer = first_request(scenario=SPEC, flow="global", settings=settings, model=model, out_dir=tmp_path)

    assert len(model.requests) == 1 and not answer.parsed.ok and answer.parsed.error


def test_an_endpoint_failure_comes_back_as_it_is(tmp_path):
    class Refusing:
        def complete(self, messages, **_):
            raise InfraError("invalid_request", "Bad Request: no", 400, fix="omit_parameters=top_p")

    with pytest.raises(InfraError) as raised:
        first_request(scenario=SPEC, flow="global", settings=effective_settings("sokoban", "global"),
                      model=Refusing(), out_dir=tmp_path)

    assert raised.value.fix == "omit_parameters=top_p" and raised.value.status == 400


@pytest.mark.integration
def test_webui_online_reads_its_opening_answer_as_the_global_generation_it_is(tmp_path):
    page = sorted(path.name for path in PAGES.iterdir() if path.is_dir())[0]
    model = Scripted(_reply(page_files(PAGES / page, degrade=False)))
    settings = effective_settings("webui", "online", {"resolution": 640})

    answer = first_request(scenario=_spec(page), flow="online", settings=settings, model=model, out_dir=tmp_path)

    assert len(model.requests) == 1 and answer.parsed.ok, answer.parsed.error
