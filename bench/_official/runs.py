"""The two runs of a case: the official runner as a subprocess, the platform in this process."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._official.cases import FIXTURES, OFFICIAL_ENV, OFFICIAL_FLOW, RESOURCES, Case, platform_spec
from bench._official.replies import Recorder
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, get_plugin
from evaluators.endpoints.client import ChatClient
from evaluators.runner import effective_settings, run_attempt

#: One official run (a subprocess) may take this long before it is stopped.
OFFICIAL_TIMEOUT = 3600


@dataclass
class OfficialRun:
    bodies: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: The ``result`` of every eval.json the run wrote (WebUI Online: one per round), by folder.
    results: list[tuple[str, Any]] = field(default_factory=list)
    #: GET /v1/models requests made.
    listings: int = 0


def official_env(deps: Path | None) -> dict[str, str]:
    """The environment the official harness runs in: its own dependencies, offline Selenium."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if deps is not None:
        env["PYTHONPATH"] = str(deps)
    # Selenium Manager takes the chromedriver on PATH and reaches no network.
    env.update({"SE_OFFLINE": "true", "SE_AVOID_STATS": "true", "PYTHONUNBUFFERED": "1"})
    return env


def _official_values(values: Mapping[str, int]) -> list[str]:
    argv: list[str] = []
    for name, value in values.items():
        argv += [f"--{name}", str(value)]
    return argv


def _invoke(code: Path, deps: Path | None, script: str, argv: list[str], log: Path) -> tuple[int, str]:
    with log.open("w", encoding="utf-8") as out:
        # A session of its own: the official WebUI environment opens a chromedriver and a browser for
        # every render and quits them only at exit, which its pool workers never reach, so whatever
        # is left of the session is ended when the runner is done.
        process = subprocess.Popen([sys.executable, script, *argv], cwd=code, env=official_env(deps),
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code_ = process.wait(timeout=OFFICIAL_TIMEOUT)
        except subprocess.TimeoutExpired:
            code_ = -1
        finally:
            _end_session(process.pid)
    text = log.read_text(encoding="utf-8", errors="replace")
    return code_, text


def _end_session(session: int) -> None:
    """Ends every process still in the runner's session (its process group, by the runner's pid)."""
    try:
        os.killpg(session, signal.SIGTERM)
    except ProcessLookupError:
        return
    time.sleep(1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(session, signal.SIGKILL)


def _log_notes(label: str, returncode: int, text: str) -> list[str]:
    notes = []
    if returncode != 0:
        notes.append(f"{label} exited with {returncode}")
    errors = sorted({line.strip() for line in text.splitlines()
                     if re.match(r"^\w*(Error|Exception)\b", line.strip())})
    if errors:
        notes.append(f"{label} raised: " + " | ".join(error[:160] for error in errors[:4]))
    return notes


_VIEWPORT_PROBE = """
import json, sys
from env.utils import get_driver
driver = get_driver(sys.argv[1])
print(json.dumps(driver.execute_script(
    "return [window.outerWidth, window.outerHeight, window.innerWidth, window.innerHeight, navigator.userAgent]")))
driver.quit()
"""


def official_viewport(code: Path, deps: Path | None, page: Path) -> str:
    """The window and page viewport of the browser the official runner opens (its own get_driver)."""
    try:
        completed = subprocess.run([sys.executable, "-c", _VIEWPORT_PROBE, str(page)], cwd=code,
                                   env=official_env(deps), capture_output=True, text=True, timeout=120, check=False)
        outer_w, outer_h, inner_w, inner_h, agent = json.loads(completed.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        return f"the official browser's viewport could not be read ({type(exc).__name__})"
    browser = next((word for word in str(agent).split() if word.startswith(("HeadlessChrome", "Chrome"))), agent)
    return (f"the official runner's browser ({browser}): window {outer_w}×{outer_h}, "
            f"page viewport {inner_w}×{inner_h}")


def run_official(case: Case, entry: str, code: Path, deps: Path | None, recorder: Recorder, work: Path,
                 values: Mapping[str, int]) -> OfficialRun:
    started = time.perf_counter()
    work.mkdir(parents=True, exist_ok=True)
    tasks = work / "tasks.json"
    tasks.write_text(json.dumps([entry]), encoding="utf-8")
    common = ["--API-type", "HuggingFace", "--data-dir", str(FIXTURES), "--task-path", str(tasks),
              "--repeat", "1", "--n_workers", "1", "--temperature", "0.1", "--port", str(recorder.port)]
    notes: list[str] = []
    if case.env == "webui" and case.flow == FLOW_ONLINE:
        # The official Online runs start from a Global run's output folder (--init-dir).
        global_values = {k: v for k, v in values.items() if k in ("resolution", "max_image", "max_tokens")}
        argv = common + ["--flow-type", "Global", "--env", "WebUI", "--output-dir", str(work / "global"),
                         *_official_values(global_values)]
        rc, text = _invoke(code, deps, "main.py", argv, work / "official-global.log")
        notes += _log_notes("main.py (Global, the starting point)", rc, text)
        argv = common + ["--webui_online_type", case.official_online_type, "--init-dir", str(work / "global"),
                         "--output-dir", str(work / "online"), *_official_values(values)]
        rc, text = _invoke(code, deps, "main_WebUI_online.py", argv, work / "official-online.log")
        notes += _log_notes("main_WebUI_online.py", rc, text)
    else:
        argv = common + ["--flow-type", OFFICIAL_FLOW[case.flow], "--env", OFFICIAL_ENV[case.env],
                         "--output-dir", str(work / "output"), *_official_values(values)]
        rc, text = _invoke(code, deps, "main.py", argv, work / "official.log")
        notes += _log_notes("main.py", rc, text)
    bodies = list(recorder.bodies)
    # main.py plays a flow again (up to 3 times) when it raised: only the first play is compared.
    restarts = [index for index in range(1, len(bodies)) if bodies[index] == bodies[0]]
    if restarts and not (case.env == "webui" and case.flow == FLOW_ONLINE):
        notes.append(f"the official flow raised and was played again from request {restarts[0] + 1}; "
                     f"requests {restarts[0] + 1}-{len(bodies)} are left out")
        bodies = bodies[:restarts[0]]
    results: list[tuple[str, Any]] = []
    for path in sorted(work.glob("**/eval.json")):
        try:
            results.append((path.parent.name, json.loads(path.read_text(encoding="utf-8")).get("result")))
        except (OSError, ValueError):
            results.append((path.parent.name, "unreadable"))
    if case.env == "webui":
        notes.append(official_viewport(code, deps, RESOURCES / "WebUI" / Path(entry).name / "index.html"))
    return OfficialRun(bodies, notes, time.perf_counter() - started, results, recorder.model_listings)


def platform_prompts(env: str, flow: str, code: Path) -> tuple[Any, str]:
    """The prompt sets the platform is given (the official ones read from ``code`` by the plug-in)
    and what they are; None (the plug-in's own) when they cannot be read."""
    try:
        from evaluators.agents.checkout import OfficialCheckout
    except ImportError as exc:
        return None, f"the platform's own (no official checkout reader: {exc})"
    plugin = get_plugin(env)
    checkout = OfficialCheckout(code)
    flows = [FLOW_GLOBAL, FLOW_ONLINE] if (env == "webui" and flow == FLOW_ONLINE) else [flow]
    sets: dict[str, Any] = {}
    try:
        for name in flows:
            prompt_set = plugin.official_prompts(checkout, name)
            if prompt_set is None:
                return None, f"the platform's own ({env} official_prompts gives none for {name})"
            sets[name] = prompt_set
    except Exception as exc:  # noqa: BLE001 - reported, and the run goes on with the platform's own
        return None, f"the platform's own (official_prompts failed: {type(exc).__name__}: {exc})"
    versions = ", ".join(f"{name} {each.version}" for name, each in sets.items())
    return (sets[flow] if len(sets) == 1 else sets), f"official, read from the checkout ({versions})"


@dataclass
class PlatformRun:
    bodies: list[dict[str, Any]]
    prompts: str
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    score: float | None = None
    outcome: str = ""
    listings: int = 0


def run_platform(case: Case, entry: str, code: Path, recorder: Recorder, work: Path,
                 values: Mapping[str, int], extra: Mapping[str, Any] | None = None) -> PlatformRun:
    started = time.perf_counter()
    defaults = effective_settings(case.env, case.flow)
    overrides: dict[str, Any] = {name: value for name, value in values.items() if getattr(defaults, name) != value}
    overrides.update({**case.platform, **(extra or {})})
    settings = effective_settings(case.env, case.flow, overrides)
    prompts, described = platform_prompts(case.env, case.flow, code)
    notes = [f"settings given: {overrides or 'none (the plug-in defaults are the official values)'}"]
    score, outcome = None, ""
    try:
        result = run_attempt(scenario=platform_spec(case.env, entry), flow=case.flow, settings=settings,
                             model=ChatClient(recorder.url, model=""), out_dir=work, prompts=prompts)
        score, outcome = result.score / get_plugin(case.env).result_scale, result.outcome
    except Exception as exc:  # noqa: BLE001 - reported beside the requests it made
        notes.append(f"run_attempt raised {type(exc).__name__}: {str(exc)[:300]}")
        traceback.print_exc()
    return PlatformRun(list(recorder.bodies), described, notes, time.perf_counter() - started, score, outcome,
                       recorder.model_listings)
