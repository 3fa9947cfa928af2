"""The abuse bench's board: finished public submissions on one mini board, written in bulk, with a
few hundred attempts carrying a small trajectory folder, and a team token for the API calls."""
from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV, FLOW, SUBSET, SUITE = "sokoban", "global", "mini", "fixture"
#: Submissions whose results are summarised per query: large enough to be quick, small enough to stay light.
RESULT_BATCH = 500


@dataclass(frozen=True)
class Seeded:
    submissions: int
    attempts: int
    trajectories: int
    token: str
    team: str


def tiny_png(size: int = 64) -> bytes:
    """A grey square as a PNG, encoded as replay frames are."""
    from PIL import Image

    from evaluators.images import png_bytes

    return png_bytes(Image.new("L", (size, size), 128))


def _template_folder(media: Path) -> Path:
    """One trajectory folder (its index and a frame) that every seeded trajectory hard-links."""
    folder = media / "bench-template"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trajectory.json").write_text(json.dumps({
        "env": ENV, "scenario": "bench", "flow": FLOW, "initial_frame": "frame_0000.png", "status": "scored",
        "score": 100.0, "frames": ["frame_0000.png"],
        "calls": [{"index": 0, "reply": "# action\nUp, Left, Down", "parsed": ["Up", "Left", "Down"]}],
        "steps": [{"index": 1, "call": 0, "action": "Up", "reward": 0.0, "done": True, "frame": "frame_0000.png"}]}))
    (folder / "frame_0000.png").write_bytes(tiny_png())
    return folder


def _link_trajectory(template: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for source in template.iterdir():
        destination = target / source.name
        if not destination.exists():
            os.link(source, destination)


def seed(submissions: int, repeats: int, trajectories: int) -> Seeded:
    """``submissions`` finished public submissions of the fixture mini set (its scenarios × ``repeats``
    scored attempts each), their stored results, and ``trajectories`` attempts with a folder."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from accounts.models import Membership, Team
    from accounts.services import token_create
    from catalogue.changes import results_changed
    from catalogue.models import Scenario
    from catalogue.services import scenarios_import
    from evaluators.base import get_plugin
    from scoring.stats import summarise_entry
    from submissions.models import Attempt, ModelEntry, Submission, SubmissionResult
    from submissions.selectors import attempt_outcomes

    scenarios_import(path=ROOT / "fixtures" / "magebench" / "resources", suite=SUITE, envs=[ENV], verify=False)
    scenarios = list(Scenario.objects.filter(environment_id=ENV, suite=SUITE, in_mini=True).order_by("key"))
    rng = random.Random(1)
    teams = Team.objects.bulk_create(Team(name=f"Abuse team {i}", slug=f"abuse-team-{i}") for i in range(100))
    models = ModelEntry.objects.bulk_create(
        ModelEntry(team=teams[i % len(teams)], name=f"Abuse model {i}", organisation=f"Org {i % 37}")
        for i in range(submissions))
    prompts = {"repeats": repeats, "prompt_version": get_plugin(ENV).prompts(FLOW).version}
    rows = Submission.objects.bulk_create(
        Submission(team=model.team, model=model, environment_id=ENV, flow=FLOW, subset=SUBSET, suite=SUITE,
                   status=Submission.Status.COMPLETED, is_public=True, settings=prompts)
        for model in models)
    attempts = []
    for submission in rows:
        skill = rng.random()
        attempts += [Attempt(submission=submission, scenario=scenario, repeat=r, status=Attempt.Status.SCORED,
                             score=round(100 * min(1.0, max(0.0, rng.gauss(skill, 0.2))), 3), steps=3, model_calls=1,
                             invalid_action=rng.random() < 0.2, repeating_action=rng.random() < 0.1)
                     for scenario in scenarios for r in range(repeats)]
    Attempt.objects.bulk_create(attempts, batch_size=5000)
    ids = [submission.id for submission in rows]
    # Bulk-created attempts skip the worker's finishing step, which stores each entry's result: the
    # same summary is stored here for every submission at once.
    keys = get_plugin(ENV).breakdown_keys
    results = []
    now = timezone.now()
    for start in range(0, len(ids), RESULT_BATCH):
        outcomes = attempt_outcomes(ids[start:start + RESULT_BATCH], with_breakdown=bool(keys))
        results += [SubmissionResult(submission_id=i, computed_at=now, **summarise_entry(outcomes[i], keys).numbers())
                    for i in ids[start:start + RESULT_BATCH]]
    SubmissionResult.objects.bulk_create(results, batch_size=1000)
    results_changed((ENV, FLOW, SUBSET))

    media = Path(settings.MEDIA_ROOT)
    template = _template_folder(media)
    chosen = Attempt.objects.filter(submission_id__in=ids).order_by("id").values_list("id", "submission_id")
    step = max(1, len(attempts) // max(1, trajectories))
    linked = list(chosen[::step][:trajectories]) if trajectories else []
    for attempt_id, submission_id in linked:
        relative = f"trajectories/{submission_id}/{attempt_id}"
        _link_trajectory(template, media / relative)
        Attempt.objects.filter(id=attempt_id).update(trajectory_path=relative)

    user = get_user_model().objects.create_user("abuse-bench", password="a long bench passphrase 7")
    Membership.objects.create(team=teams[0], user=user, role=Membership.Role.OWNER)
    _, token = token_create(team=teams[0], user=user, name="abuse bench", scope="write")
    return Seeded(submissions=len(rows), attempts=len(attempts), trajectories=len(linked), token=token,
                  team=teams[0].slug)
