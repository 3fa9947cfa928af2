"""The deployment files agree with the code: the image installs what CI tests, every queue the code
sends to has a worker pool, and every variable the compose file sets is one the settings read."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml
from django.conf import settings

from evaluators.base import all_plugins
from evaluators.install import read_installs
from submissions.selectors import queue_for

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_the_image_installs_with_the_same_script_that_ci_tests_with():
    dockerfile = (ROOT / "Dockerfile").read_text()
    # One instruction per entry, its continuation lines joined (the install's RUN mounts a secret first).
    instructions = re.sub(r"\\\n\s*", " ", re.sub(r"^\s*#.*\n", "", dockerfile, flags=re.M)).splitlines()
    runs = [line for line in instructions if line.startswith("RUN ")]
    assert any(re.search(r"(^|[;&]\s*|\s)(PIP_\w+=\S+\s+)*scripts/setup(\s|$)", run) for run in runs), \
        "the image must install with scripts/setup"
    assert "pip install" not in dockerfile and "apt-get" not in dockerfile  # no second, drifting install path
    assert re.search(r"^scripts/test\b", (ROOT / ".ci/run").read_text(), re.M)
    assert "scripts/setup" in (ROOT / "scripts/test").read_text()


def _instructions(dockerfile: str) -> list[str]:
    # One instruction per entry, its continuation lines joined, comments dropped.
    return re.sub(r"\\\n\s*", " ", re.sub(r"^\s*#.*\n", "", dockerfile, flags=re.M)).splitlines()


def test_the_image_installs_from_the_environments_declarations_alone_before_their_code(tmp_path: Path):
    instructions = _instructions((ROOT / "Dockerfile").read_text())
    stages = [i for i, line in enumerate(instructions) if line.startswith("FROM ")]
    assert len(stages) == 2 and instructions[stages[0]].endswith(" AS install-declarations")
    main = instructions[stages[1]:]
    setup = next(i for i, line in enumerate(main) if line.startswith("RUN ") and "scripts/setup" in line)
    before = main[:setup]
    assert "COPY --from=install-declarations /out/ ./" in before
    assert not [line for line in before if line.startswith("COPY ") and ("evaluators" in line or line == "COPY . .")]
    # The stage's recipe, run on this tree, gives the reader and every declaration file, and nothing else.
    (recipe,) = [line for line in instructions[stages[0]:stages[1]] if line.startswith("RUN ")]
    source, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(ROOT / "evaluators", source / "evaluators", ignore=shutil.ignore_patterns("__pycache__"))
    script = recipe.removeprefix("RUN ").replace("/src", str(source)).replace("/out", str(out))
    subprocess.run(["bash", "-c", script], check=True)
    copied = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    declared = sorted(str(path.relative_to(ROOT)) for install in read_installs() for path in install.files)
    assert copied == sorted(["evaluators/__init__.py", "evaluators/install.py", *declared]) and declared


def test_every_queue_the_code_sends_to_is_consumed_by_a_worker_pool_and_beat_runs_the_watchdog():
    services = _compose()["services"]
    declared = {queue.name for queue in settings.CELERY_TASK_QUEUES}
    consumed = _consumed(services, declared)
    sent_to = {settings.CELERY_TASK_DEFAULT_QUEUE, *(queue_for(plugin.slug) for plugin in all_plugins())}
    assert sent_to <= declared == consumed
    assert any((s.get("command") or [])[:4] == ["celery", "-A", "config", "beat"] for s in services.values())
    assert {task["task"] for task in settings.CELERY_BEAT_SCHEDULE.values()} == {"submissions.watchdog",
                                                                                 "leaderboard.snapshot_boards"}
    assert {"postgres", "redis", "web", "migrate"} <= set(services)
    assert "--appendonly" in services["redis"]["command"]  # queued messages survive a Redis restart
    # Every long-running service comes back after exiting on its own; only the one-off steps do not.
    one_off = {"migrate", "secrets"}
    assert {name: service.get("restart") for name, service in services.items() if name not in one_off} == \
        dict.fromkeys(set(services) - one_off, "unless-stopped")
    assert {services[name]["restart"] for name in one_off} == {"no"}


def _consumed(services: dict, declared: set[str]) -> set[str]:
    """The queues the compose file's pools read: each -Q list, and every declared queue not excepted
    for a service that runs the other pools."""
    consumed: set[str] = set()
    for service in services.values():
        command = service.get("command") or []
        if command[:4] == ["celery", "-A", "config", "worker"] or command[:3] == ["python", "manage.py", "run_worker"]:
            if "--other-pools" in command:
                consumed |= declared - set(command[command.index("--except") + 1].split(","))
            else:
                consumed.update(command[command.index("-Q") + 1].split(","))
    return consumed


def test_the_other_pools_service_leaves_out_exactly_the_queues_the_dedicated_services_read():
    services = _compose()["services"]
    commands = [s["command"] for s in services.values() if (s.get("command") or [])[:3] == ["python", "manage.py",
                                                                                            "run_worker"]]
    (other,) = [command for command in commands if "--other-pools" in command]
    dedicated = {queue for command in commands if "-Q" in command
                 for queue in command[command.index("-Q") + 1].split(",")}
    assert set(other[other.index("--except") + 1].split(",")) == dedicated == {"light", "browser", "engine"}
    # A kind of work no dedicated service reads is still read: by the other pools' service.
    assert _consumed(services, {"light", "browser", "engine", "another"}) == {"light", "browser", "engine", "another"}


def test_every_variable_the_compose_file_sets_is_read_by_the_settings():
    environment = _compose()["x-app"]["environment"]
    sources = "".join(p.read_text() for p in (ROOT / "config" / "settings").glob("*.py"))
    sources += (ROOT / "config" / "env.py").read_text()
    # NAME_FILE is read by env_secret("NAME").
    unread = [name for name in environment if f'"{name.removesuffix("_FILE")}"' not in sources]
    assert unread == []


def test_the_browser_workers_may_create_the_namespaces_that_isolate_model_pages():
    services = _compose()["services"]
    browser_pools = [s for s in services.values() if "browser" in (s.get("command") or [])]
    assert browser_pools
    assert all("seccomp=unconfined" in s.get("security_opt", []) for s in browser_pools)


def test_only_the_proxy_is_published_and_gunicorn_is_reached_through_it():
    services = _compose()["services"]
    assert {name for name, service in services.items() if service.get("ports")} == {"proxy"}
    assert services["web"]["expose"] == ["8000"]
    assert "web:8000" in (ROOT / "docker" / "proxy" / "Caddyfile").read_text()
    # The site trusts exactly the one proxy in front of it.
    assert _compose()["x-app"]["environment"]["MAGEBENCH_NUM_PROXIES"] == "1"


def test_every_app_container_reads_the_generated_secrets_and_only_the_secrets_step_writes_them():
    services = _compose()["services"]
    app = [name for name, service in services.items() if service.get("image", "").startswith("${MAGEBENCH_IMAGE")]
    mounts = {name: [v for v in services[name].get("volumes", []) if v.startswith("secrets:")] for name in app}
    writers = {name for name, volumes in mounts.items() if any(not v.endswith(":ro") for v in volumes)}
    assert writers == {"secrets", "backup"}  # the backup service restores them
    assert all(mounts[name] for name in app if name not in ("secrets", "backup"))
    for service in ("web", "worker-light", "worker-browser", "worker-engine", "beat", "migrate"):
        assert services[service]["depends_on"]["secrets"] == {"condition": "service_completed_successfully"}


def test_the_web_process_and_every_pool_have_a_health_check():
    services = _compose()["services"]
    pools = [name for name, s in services.items()
             if (s.get("command") or [])[:3] == ["python", "manage.py", "run_worker"]]
    assert pools and all(services[name].get("healthcheck") for name in ["web", *pools])
    assert "/-/ready" in " ".join(services["web"]["healthcheck"]["test"])


def test_a_worker_host_runs_the_same_pools_as_the_stack():
    def pools(compose: dict) -> dict[str, list[str]]:
        return {name: s["command"][:5] for name, s in compose["services"].items()
                if (s.get("command") or [])[:3] == ["python", "manage.py", "run_worker"]}

    workers = yaml.safe_load((ROOT / "docker-compose.workers.yml").read_text())
    assert pools(workers) == pools(_compose())
    assert workers["volumes"]["data"]["external"] is True  # the stack's own data, shared
