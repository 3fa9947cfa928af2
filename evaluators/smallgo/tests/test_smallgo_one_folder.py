"""Small Go is its folder and nothing else: a copy of the folder under another package name is a
working environment once the one setting names it (its engine declared for the install, its own
pool served by the generic worker service, its boards, its episodes), and without the folder the
platform loads, serves and installs as before, with no trace of it."""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse

from accounts.services import team_get_or_create
from catalogue.services import scenarios_import
from evaluators.base import ScenarioSpec, declared_queues, get_plugin
from evaluators.baselines.agents import make_agent
from evaluators.runner import run_attempt
from evaluators.settings import EvaluationSettings
from evaluators.tests.agent_model import AgentModel
from submissions.models import LiveWorker, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint
from submissions.worker_pools import declared_pools

ROOT = Path(__file__).resolve().parents[3]
FOLDER = Path(__file__).resolve().parents[1]
PACKAGE = "magebench_extra"
MODULE = f"{PACKAGE}.smallgo"
WALK_THROUGH = "docs/adding-an-environment.md"
TEST_TIMES = "config/test-durations.json"


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder copied as the package magebench_extra.smallgo, outside the tree; returns the copy."""
    packages = tmp_path / "packages"
    (packages / PACKAGE).mkdir(parents=True)
    (packages / PACKAGE / "__init__.py").write_text("")
    copy = packages / PACKAGE / "smallgo"
    shutil.copytree(FOLDER, copy, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    monkeypatch.syspath_prepend(str(packages))
    yield copy
    for name in [name for name in sys.modules if name == PACKAGE or name.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]


def _apt(tree: Path) -> list[str]:
    finished = subprocess.run([sys.executable, "-S", "-m", "evaluators.install", "apt", "--root", str(tree)],
                              cwd=ROOT, capture_output=True, text=True, check=True)
    return finished.stdout.split()


def _other_pools() -> str:
    out = io.StringIO()
    call_command("run_worker", "--other-pools", "--except", "light,browser,engine", "--dry-run", stdout=out,
                 stderr=io.StringIO())
    return out.getvalue()


def _scenario(copy: Path, key: str) -> ScenarioSpec:
    (found,) = [s for s in get_plugin("smallgo").discover(copy / "fixtures" / "resources") if s.key == key]
    return ScenarioSpec(env="smallgo", key=found.key, data=found.data)


@pytest.mark.django_db
def test_the_copied_folder_adds_the_environment_and_removing_it_leaves_the_platform_as_before(
        copied: Path, settings: Any, client: Any, tmp_path: Path) -> None:
    defaults = list(settings.MAGEBENCH_ENVIRONMENTS)
    # The install: the other environments' declarations, then the copy beside them.
    tree = tmp_path / "tree"
    for install in ROOT.glob("evaluators/*/install"):
        if install.parent != FOLDER:
            shutil.copytree(install, tree / install.parent.name / "install")
    without = _apt(tree)
    shutil.copytree(copied, tree / "smallgo")
    assert "gnugo" not in without and "chromium" in without and _apt(tree) == sorted([*without, "gnugo"])

    settings.MAGEBENCH_ENVIRONMENTS = [*defaults, MODULE]
    assert type(get_plugin("smallgo")).__module__ == f"{MODULE}.plugin"
    assert "gtp" in declared_queues(settings.MAGEBENCH_ENVIRONMENTS)
    assert [(pool.queue, pool.environments) for pool in declared_pools() if pool.queue == "gtp"] == [
        ("gtp", ("smallgo",))]
    assert "-Q gtp " in _other_pools() and "--hostname=gtp@%h" in _other_pools()

    # An episode through the baselines: idle passes and ends holding nothing (an empty board).
    idle = run_attempt(scenario=_scenario(copied, "1-SmallGo-empty5"), flow="online",
                       settings=EvaluationSettings.defaults(get_plugin("smallgo"), "online"),
                       model=AgentModel(make_agent("idle")), out_dir=tmp_path / "idle")
    assert idle.score == 0.0 and idle.steps >= 1
    report = scenarios_import(path=copied / "fixtures" / "resources", suite="fixture")
    assert report.created == {"smallgo": 4} and report.mini == {"smallgo": 2}
    board = client.get(reverse("board", args=["smallgo", "online", "mini"]) + "?suite=fixture")
    assert board.status_code == 200 and "SmallGo" in board.content.decode()
    assert "SmallGo" in client.get("/").content.decode()

    # The folder gone (its scenarios still stored): the platform loads, serves and installs without it.
    settings.MAGEBENCH_ENVIRONMENTS = defaults
    shutil.rmtree(tree / "smallgo")
    with pytest.raises(KeyError):
        get_plugin("smallgo")
    assert "gtp" not in declared_queues(defaults) and "gtp" not in {pool.queue for pool in declared_pools()}
    assert _other_pools().strip() == "" and _apt(tree) == without
    assert client.get(reverse("board", args=["smallgo", "online", "mini"])).status_code == 404
    assert client.get("/").status_code == 200 and "SmallGo" not in client.get("/").content.decode()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_its_pool_is_served_by_the_generic_worker_service_beside_the_default_queue(
        copied: Path, settings: Any, baseline_endpoint: Callable[..., Any], wait_for: Callable[..., None],
        tmp_path: Path) -> None:
    settings.MAGEBENCH_ENVIRONMENTS = [*settings.MAGEBENCH_ENVIRONMENTS, MODULE]
    scenarios_import(path=copied / "fixtures" / "resources", suite="fixture")
    host = f"smallgo-{os.getpid()}"
    db = connection.settings_dict
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
               "DATABASE_URL": f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
                               f"{db['PORT'] or 5432}/{db['NAME']}",
               "CELERY_BROKER_URL": settings.CELERY_BROKER_URL, "MAGEBENCH_DATA_DIR": str(settings.DATA_DIR),
               "MAGEBENCH_MEDIA_ROOT": str(settings.MEDIA_ROOT), "MAGEBENCH_SCENARIO_ROOT": str(settings.SCENARIO_ROOT),
               "MAGEBENCH_ENVIRONMENTS": ",".join(settings.MAGEBENCH_ENVIRONMENTS),
               "PYTHONPATH": os.pathsep.join([str(copied.parents[1]), os.environ.get("PYTHONPATH", "")])}
    log = tmp_path / "pools.log"
    # What the worker-pools service runs, less the pools of the dedicated services (light is served
    # here too, as no other worker runs in this test).
    with log.open("w") as out:
        command = [sys.executable, "manage.py", "run_worker", "--other-pools", "--except", "browser,engine",
                   "--host", host, "--concurrency", "2", "--", "--without-gossip", "--without-mingle"]
        pools = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    try:
        wait_for(lambda: LiveWorker.objects.filter(hostname__in=[f"light@{host}", f"gtp@{host}"]).count() == 2
                 or pools.poll() is not None, 90, "both pools to record themselves")
        assert pools.poll() is None, log.read_text()
        assert LiveWorker.objects.get(hostname=f"gtp@{host}").queues == ["gtp"]

        server = baseline_endpoint("random")
        submission = submission_create_endpoint(
            model=model_entry_upsert(team=team_get_or_create(name="Players"), name="random player"), env="smallgo",
            flow="online", subset="mini", suite="fixture", endpoint_url=server.url, endpoint_model="random",
            settings={"max_loop": 6})
        wait_for(lambda: not Submission.objects.get(id=submission.id).is_active, 180, "the submission to finish")
        finished = Submission.objects.get(id=submission.id)
        assert finished.status == Submission.Status.COMPLETED, finished.status_reason
        attempts = list(finished.attempts.all())
        assert len(attempts) == 2 and {attempt.worker for attempt in attempts} == {f"gtp@{host}"}
        assert all(0.0 <= attempt.score <= 100.0 for attempt in attempts)
    finally:
        pools.send_signal(signal.SIGTERM)  # passed on to each pool's worker
        try:
            pools.wait(timeout=60)
        finally:
            with contextlib.suppress(ProcessLookupError):  # every process of the group already gone
                os.killpg(pools.pid, signal.SIGKILL)
    assert pools.returncode is not None


def test_no_file_outside_the_folder_names_the_environment_or_its_engine() -> None:
    try:
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    folder = f"{FOLDER.relative_to(ROOT).as_posix()}/"
    mentions = []
    for name in tracked.decode().split("\0"):
        if not name or name.startswith(folder) or name in (WALK_THROUGH, TEST_TIMES) or not (ROOT / name).is_file():
            continue
        text = (ROOT / name).read_bytes().lower()
        if b"smallgo" in text or b"small go" in text or b"gnugo" in text:
            mentions.append(name)
    assert mentions == []
