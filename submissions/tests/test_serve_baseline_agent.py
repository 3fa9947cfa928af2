"""The command that puts a baseline agent behind an OpenAI-compatible endpoint."""
from __future__ import annotations

import io
from typing import Any

import pytest

from evaluators.baselines.server import Fault, Latency


def test_the_command_serves_the_chosen_agent_with_its_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    from submissions.management.commands import serve_baseline_agent

    seen: dict[str, Any] = {}

    def fake_serve(agent: Any, host: str, port: int, **kwargs: Any) -> None:
        seen.update(agent=agent, host=host, port=port, **kwargs)
        kwargs["ready"](f"http://{host}:{port}/v1")

    monkeypatch.setattr(serve_baseline_agent, "serve_forever", fake_serve)
    out = io.StringIO()
    command = serve_baseline_agent.Command(stdout=out)
    parser = command.create_parser("manage.py", "serve_baseline_agent")
    options = parser.parse_args(
        ["--agent", "random", "--port", "8123", "--seed", "5", "--api-key", "k", "--fault", "500", "--fault-first", "2"]
    )
    command.handle(**vars(options))
    assert seen["agent"].name == "random" and (seen["host"], seen["port"]) == ("127.0.0.1", 8123)
    assert seen["api_key"] == "k" and seen["fault"] == Fault("500", first_n=2)
    assert "http://127.0.0.1:8123/v1" in out.getvalue()


def test_the_command_refuses_fault_options_without_a_fault() -> None:
    from django.core.management.base import CommandError

    from submissions.management.commands import serve_baseline_agent

    command = serve_baseline_agent.Command(stdout=io.StringIO())
    options = command.create_parser("manage.py", "serve_baseline_agent").parse_args(
        ["--agent", "idle", "--port", "0", "--fault-first", "2"]
    )
    with pytest.raises(CommandError, match="need --fault"):
        command.handle(**vars(options))


def test_the_command_serves_with_a_seeded_latency_and_a_concurrency_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from submissions.management.commands import serve_baseline_agent

    seen: dict[str, Any] = {}

    def fake_serve(agent: Any, host: str, port: int, **kwargs: Any) -> None:
        seen.update(kwargs)

    monkeypatch.setattr(serve_baseline_agent, "serve_forever", fake_serve)
    command = serve_baseline_agent.Command(stdout=io.StringIO())
    options = command.create_parser("manage.py", "serve_baseline_agent").parse_args(
        ["--agent", "idle", "--port", "0", "--latency", "3", "--latency-seed", "4", "--max-concurrency", "8"])
    command.handle(**vars(options))
    assert seen["latency"] == Latency(3.0, spread=0.5, seed=4) and seen["max_concurrency"] == 8


def test_the_oracle_reads_the_fixture_folders_the_environments_demo_baselines_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from submissions.management.commands import serve_baseline_agent

    seen: dict[str, Any] = {}
    monkeypatch.setattr(serve_baseline_agent, "serve_forever", lambda agent, *args, **kwargs: seen.update(agent=agent))
    command = serve_baseline_agent.Command(stdout=io.StringIO())
    command.handle(**vars(command.create_parser("manage.py", "serve_baseline_agent").parse_args(
        ["--agent", "oracle", "--port", "0"])))
    root = Path(__file__).resolve().parents[2]
    assert seen["agent"].options.pages == (root / "fixtures" / "magebench" / "resources" / "WebUI",)
