"""Boards, exports and the metric card, on attempts scored by real baseline endpoints: three runs
played once for the module, which every test reads in its own savepoint."""
from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from accounts.services import team_get_or_create
from catalogue.services import scenarios_import
from conftest import FIXTURE_RESOURCES
from evaluators.baselines.agents import make_agent
from evaluators.baselines.server import start_server
from leaderboard.selectors import BoardFilter, board_get, overview_get
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint, submission_refresh_status

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def _evaluate(url: str, name: str, *, baseline: bool = False, flow: str = "global") -> Submission:
    team = team_get_or_create(name="Baselines" if baseline else "Lab")
    model = model_entry_upsert(team=team, name=name, is_baseline=baseline)
    submission = submission_create_endpoint(model=model, env="sokoban", flow=flow, subset="mini", suite="fixture",
                                            endpoint_url=url, settings={"repeats": 1, "resolution": 256},
                                            is_baseline=baseline)
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    submission.refresh_from_db()
    return submission


@pytest.fixture(scope="module")
def played_once(module_db) -> dict[str, int]:
    """Three runs played once for the whole module (module_db rolls them back after its last test)."""
    with module_db.unblock():
        scenarios_import(path=FIXTURE_RESOURCES, suite="fixture", verify=False)
        ids = {}
        for key, agent, name, seed in [("oracle", "oracle", "Oracle agent", 0), ("idle", "idle", "Idle agent", 0),
                                       ("model", "random", "Lab model", 3)]:
            server = start_server(make_agent(agent, seed=seed))
            try:
                ids[key] = _evaluate(server.url, name, baseline=key != "model").id
            finally:
                server.stop()
    return ids


@pytest.fixture
def scored(played_once, db) -> dict[str, Submission]:
    return {key: Submission.objects.get(id=submission_id) for key, submission_id in played_once.items()}


def test_the_board_ranks_submissions_and_keeps_baselines_unranked(scored):
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    by_model = {row.model: row for row in board.rows}
    assert board.scenario_count == 10
    assert by_model["Oracle agent"].mean == pytest.approx(100.0) and by_model["Oracle agent"].se == pytest.approx(0.0)
    assert by_model["Oracle agent"].rank is None and by_model["Oracle agent"].is_baseline
    assert by_model["Lab model"].rank == 1
    idle_scores = Attempt.objects.filter(submission=scored["idle"]).values_list("score", flat=True)
    assert by_model["Idle agent"].mean == pytest.approx(sum(idle_scores) / len(idle_scores))
    assert by_model["Idle agent"].ia_pct == 100.0
    assert [row.model for row in board.rows][0] == "Oracle agent"  # sorted by mean, best first


def test_an_entry_run_with_parse_retries_is_labelled_a_variant_and_never_ranked(scored, baseline_endpoint, client):
    team = team_get_or_create(name="Lab")
    model = model_entry_upsert(team=team, name="Retrying model")
    submission = submission_create_endpoint(
        model=model, env="sokoban", flow="global", subset="mini", suite="fixture",
        endpoint_url=baseline_endpoint("random", seed=3).url,
        settings={"repeats": 1, "resolution": 256, "parse_retries": 2})
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    by_model = {row.model: row for row in board.rows}
    assert by_model["Retrying model"].variant == ("parse_retries",) and by_model["Retrying model"].rank is None
    assert by_model["Lab model"].variant == () and by_model["Lab model"].rank == 1
    page = client.get(reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture").content.decode()
    assert 'class="badge variant-badge"' in page


def test_an_incomplete_submission_is_marked_on_the_board(scored):
    attempt = scored["model"].attempts.first()
    Attempt.objects.filter(id=attempt.id).update(status=Attempt.Status.INFRA_FAILED, score=None,
                                                 error_kind="server_error")
    assert submission_refresh_status(submission_id=scored["model"].id).status == Submission.Status.INCOMPLETE
    row = next(r for r in board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows
               if r.model == "Lab model")
    assert row.incomplete and row.n_infra_failed == 1 and row.n_scored == 9


def test_the_pages_render(client, scored):
    for url in [reverse("home"), reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture",
                reverse("metric-card", args=["sokoban"]), reverse("queue"),
                reverse("submission-detail", args=[scored["model"].id])]:
        response = client.get(url)
        assert response.status_code == 200, url
    assert client.get(reverse("submit"))["Location"].startswith(reverse("login"))  # submitting needs an account
    board = client.get(reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture").content.decode()
    assert "Oracle agent" in board and "baseline" in board and "Lab model" in board
    card = client.get(reverse("metric-card", args=["sokoban"])).content.decode()
    assert "100 + 5 · (B_T − R_ub)" in card and "sokoban-global-v3" in card and "repeating actions" in card


def test_the_board_exports_csv_and_json_with_the_same_rows(client, scored):
    base = reverse("board-export", args=["sokoban", "global", "mini", "csv"]) + "?suite=fixture"
    rows = list(csv.DictReader(io.StringIO(client.get(base).content.decode())))
    data = client.get(reverse("board-export", args=["sokoban", "global", "mini", "json"]) + "?suite=fixture").json()
    api = client.get(reverse("api-board", args=["sokoban", "global", "mini"]) + "?suite=fixture").json()
    assert [r["model"] for r in rows] == [r["model"] for r in data["rows"]] == [r["model"] for r in api["rows"]]
    assert float(rows[0]["mean"]) == pytest.approx(data["rows"][0]["mean"])


def test_the_board_gives_bootstrap_intervals_and_shades_entries_tied_with_the_leader(scored, baseline_endpoint, client):
    _evaluate(baseline_endpoint("random", seed=3).url, "Lab model twin")  # the same replies: the same scores
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    by_model = {row.model: row for row in board.rows}
    leader, twin, oracle = by_model["Lab model"], by_model["Lab model twin"], by_model["Oracle agent"]
    assert {leader.standing, twin.standing} == {"leader", "tied"}
    assert oracle.standing == "" and oracle.tie_p_value < 0.05  # 100 on every level is separable
    assert leader.ci_low <= leader.mean <= leader.ci_high
    assert oracle.ci_low == oracle.ci_high == pytest.approx(100.0)
    page = client.get(reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture").content.decode()
    assert "95% CI" in page and 'class="badge tie-badge">tied' in page
    exported = client.get(reverse("board-export", args=["sokoban", "global", "mini", "json"]) + "?suite=fixture").json()
    assert {"ci95_low", "ci95_high", "standing", "tie_p_value"} <= set(exported["rows"][0])


def test_filters_keep_the_baselines_and_narrow_the_ranked_entries(scored, baseline_endpoint, client):
    open_model = model_entry_upsert(team=team_get_or_create(name="Open lab"), name="Open small",
                                    organisation="Open Org", parameter_count=7_000_000_000, open_weights=True)
    submission = submission_create_endpoint(model=open_model, env="sokoban", flow="global", subset="mini",
                                            suite="fixture", endpoint_url=baseline_endpoint("random", seed=8).url,
                                            settings={"repeats": 1, "resolution": 256})
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    everything = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert {"Open small", "Lab model"} <= {r.model for r in everything.rows}
    for filters in (BoardFilter(open_weights=True), BoardFilter(size="<10B"), BoardFilter(organisation="open org")):
        rows = board_get(env="sokoban", flow="global", subset="mini", suite="fixture", filters=filters).rows
        assert [r.model for r in rows if not r.is_baseline] == ["Open small"], filters
        assert {"Oracle agent", "Idle agent"} <= {r.model for r in rows}
        assert next(r for r in rows if r.model == "Open small").rank == 1
    page = client.get(reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture&open=1").content.decode()
    assert "Open small" in page and "Lab model" not in page and "Open Org" in page
    export = reverse("board-export", args=["sokoban", "global", "mini", "csv"]) + "?suite=fixture&open=1"
    csv_rows = list(csv.DictReader(io.StringIO(client.get(export).content.decode())))
    assert "Lab model" not in {r["model"] for r in csv_rows}


def test_best_entry_per_team_keeps_only_each_teams_highest_mean(scored, baseline_endpoint):
    _evaluate(baseline_endpoint("idle").url, "Lab idle")  # the same team ("Lab"), a lower mean
    rows = board_get(env="sokoban", flow="global", subset="mini", suite="fixture",
                     filters=BoardFilter(best_per_team=True)).rows
    lab = [r.model for r in rows if r.team == "Lab"]
    assert lab == ["Lab model"]


def test_the_overview_has_a_column_per_environment_and_flow_with_each_models_best_entry(scored, client):
    overview = overview_get(subset="mini")
    assert [(c.env, c.flow) for c in overview.columns] == [
        ("football", "online"), ("sokoban", "global"), ("sokoban", "online"), ("webui", "global"), ("webui", "online")]
    oracle = next(r for r in overview.rows if r.model == "Oracle agent")
    sokoban_global = oracle.cells[1]
    assert sokoban_global.mean == pytest.approx(100.0) and oracle.is_baseline
    assert oracle.cells[0] is None  # no Football run
    page = client.get(reverse("home")).content.decode()
    assert "Overview" in page and "Sokoban · Global" in page and "Football · Online" in page


def test_a_finished_submission_stores_its_result_and_the_board_reads_no_attempts(scored, django_assert_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from submissions.models import SubmissionResult

    stored = SubmissionResult.objects.get(submission=scored["model"])
    scores = list(scored["model"].attempts.values_list("score", flat=True))
    assert stored.mean == pytest.approx(sum(scores) / len(scores)) and stored.n_attempts == 10
    assert len(stored.scenario_means) == 10 and all(len(v) == 1 for v in stored.scenario_scores.values())
    with CaptureQueriesContext(connection) as captured:
        from_results = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert not any("submissions_attempt" in q["sql"] for q in captured.captured_queries)
    # A submission without a stored result is summarised from its attempts, to the same numbers.
    SubmissionResult.objects.all().delete()
    with CaptureQueriesContext(connection) as captured:
        from_attempts = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert any("submissions_attempt" in q["sql"] for q in captured.captured_queries)
    assert [r.as_dict() for r in from_results.rows] == [r.as_dict() for r in from_attempts.rows]


def test_rebuilding_results_picks_up_attempts_edited_by_hand(scored):
    from django.core.management import call_command

    attempt = scored["model"].attempts.order_by("id").first()
    Attempt.objects.filter(id=attempt.id).update(score=attempt.score - 50.0)
    before = next(r for r in board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows
                  if r.model == "Lab model")
    out = io.StringIO()
    call_command("rebuild_results", str(scored["model"].id), stdout=out)
    assert "1 submission result(s) rebuilt" in out.getvalue()
    after = next(r for r in board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows
                 if r.model == "Lab model")
    assert after.mean == pytest.approx(before.mean - 5.0)  # 50 points off one of 10 attempts


def test_verified_only_keeps_the_baselines_and_the_checked_entries(scored, baseline_endpoint, client):
    checked = _evaluate(baseline_endpoint("random", seed=5).url, "Checked model")
    Submission.objects.filter(id=checked.id).update(verified=True)
    rows = board_get(env="sokoban", flow="global", subset="mini", suite="fixture",
                     filters=BoardFilter(verified_only=True)).rows
    assert [r.model for r in rows if not r.is_baseline] == ["Checked model"]
    assert {"Oracle agent", "Idle agent"} <= {r.model for r in rows}
    board = reverse("board", args=["sokoban", "global", "mini"])
    page = client.get(board + "?suite=fixture&verified=1").content.decode()
    assert "Checked model" in page and "Lab model" not in page and "verified-badge" in page
    data = client.get(reverse("api-board", args=["sokoban", "global", "mini"]) + "?suite=fixture&verified=1").json()
    assert [r["model"] for r in data["rows"] if not r["baseline"]] == ["Checked model"]
