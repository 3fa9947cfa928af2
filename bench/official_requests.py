"""Request by request: what the platform sends to an OpenAI-compatible endpoint against what the
official MageBench runner sends, on the same fixture scenario and the same scripted endpoint.

For each flow (Sokoban Global, Sokoban Online, WebUI Global, Football Online, WebUI Online
"Natural") two recording endpoints are started on 127.0.0.1, both answering the same fixed
sequence of replies (valid actions, an unparsable reply that makes the Online flows send their
regenerate turn, a Football pass, WebUI code blocks and a reply cut off inside a code block). The
official runner (``main.py``; ``main_WebUI_online.py`` after it for WebUI Online, started from the
Global run's output) plays against the first one as a subprocess, with the experiment scripts'
settings; the platform plays the same scenario and flow against the second one through
``evaluators.runner.run_attempt``, with the official prompts read from the same checkout where its
plug-in reads them (its own prompts otherwise, as the report says). WebUI Online is played a second
time on the platform with its labelled ``webui_viewport_937`` option and compared with the same
official requests: the official runner's browser is measured and reported beside it.

Each pair of requests is then compared in order: the top-level fields (model, temperature, top_p,
frequency_penalty, max_tokens), the roles and order of the messages, every text character for
character, and every image by its data URL's media-type label and its decoded pixels (Football
frames by their size only: the engine varies its lighting from run to run). A table goes to
standard output and to the report file.

The official checkout is never part of this repository: its folder is given on the command line,
with the folder its own dependencies were installed to (``pip install --target``) when they are not
in this interpreter. It runs under this interpreter (gym, gym-sokoban, gfootball come from the
project's environment). Selenium drives Debian's chromium-driver offline for the WebUI runs.

Usage: .venv/bin/python bench/official_requests.py --official-code DIR [--official-deps DIR]
       [--out bench/reports/official_requests.txt] [--flow NAME ...] [--max-loop N] [--keep DIR]
"""
from __future__ import annotations

import argparse
import base64
import binascii
import datetime
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from evaluators.base import DEFAULT_ENVIRONMENTS, FLOW_GLOBAL, FLOW_ONLINE, ScenarioSpec, get_plugin, load_plugins  # noqa: E402
from evaluators.endpoints.client import ChatClient  # noqa: E402
from evaluators.runner import effective_settings, run_attempt  # noqa: E402

FIXTURES = ROOT / "fixtures" / "magebench"
RESOURCES = FIXTURES / "resources"
DEFAULT_REPORT = ROOT / "bench" / "reports" / "official_requests.txt"
MODEL_ID = "recorder"
#: One official run (a subprocess) may take this long before it is stopped.
OFFICIAL_TIMEOUT = 3600

# --------------------------------------------------------------------------------------------
# Scripted replies
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Script:
    """The replies of one run: ``head`` in order, then ``cycle`` over and over."""

    head: tuple[str, ...]
    cycle: tuple[str, ...]

    def reply(self, index: int) -> str:
        if index < len(self.head):
            return self.head[index]
        return self.cycle[(index - len(self.head)) % len(self.cycle)]


def _online(action: str, why: str = "One step closer.") -> str:
    return f"# analyze\n{why}\n# action\n{action}"


SOKOBAN_GLOBAL = Script(
    head=("### Analyze\nThe box sits next to the target; walk round it and push.\n\n"
          "### Actions\nRight, Down, Left, Left, Up, Right",),
    cycle=("### Actions\nUp",),
)
SOKOBAN_ONLINE = Script(
    head=(_online("Right", "The player should first step right."),
          "I am not sure what to do here, maybe going left would help.",
          _online("Down"), _online("Left"), _online("Up", "Back up to look again.")),
    cycle=(_online("Right"), _online("Down"), _online("Left"), _online("Up")),
)
FOOTBALL_ONLINE = Script(
    head=(_online("action_right", "Run towards the goal."),
          _online("action_right", "Keep running in the same direction."),
          "Let me look at the field before deciding.",
          _online("action_short_pass", "A teammate is free nearby: pass to him."),
          _online("action_top_right"), _online("action_shot", "Close enough to shoot.")),
    cycle=(_online("action_right"), _online("action_bottom_right"), _online("action_sprint"),
           _online("action_short_pass")),
)

_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>Stair Counter</title>
  <link rel="stylesheet" href="style.css">
</head>

<body>
  <div class="card">
    <p class="label">DAILY CHALLENGE</p>
    <h1>Stair Counter</h1>


    <div id="value">0</div>
    <div class="progress"><div id="progress-fill"></div></div>
    <p id="status">0 of 3 flights. Let's get moving!</p>
    <button id="decrement" disabled>&minus;1</button>
    <button id="increment">+1</button>
  </div>
  <script src="script.js"></script>
</body>
</html>"""
_CSS = """body {
  background: #eef1f6;
  font-family: sans-serif;
}

.card {
  background: white;
  border-radius: 12px;
  padding: 24px;
}
#value { font-size: 48px; color: #aaa; }"""
_JS = """const value = document.getElementById('value');
let count = 0;

document.getElementById('increment').addEventListener('click', () => {
  count += 1;
  value.textContent = count;
});"""

WEBUI_GLOBAL_REPLY = (f"Here is the page.\n\n```html\n{_HTML}\n```\n\nThe styles:\n```css\n{_CSS}\n```\n\n"
                      f"And the script:\n```javascript\n{_JS}\n```\n")
WEBUI_GLOBAL = Script(head=(WEBUI_GLOBAL_REPLY,), cycle=(WEBUI_GLOBAL_REPLY,))
WEBUI_ONLINE = Script(
    head=(
        WEBUI_GLOBAL_REPLY,
        # Round 1: only the css changes.
        "# Analyze\n1. The card has no shadow and the number is too small.\n2. Only the css.\n\n"
        "# Regenerate\n*html do not need to change*\n\n```css\n" + _CSS
        + "\n.card { box-shadow: 0 4px 12px rgba(0, 0, 0, 0.1); }\n```\n*javascript do not need to change*\n",
        # Round 2: cut off inside a code block, so a continuation is asked for...
        "# Analyze\n1. The minus button never becomes active.\n\n# Regenerate\n```javascript\n" + _JS
        + "\nconst minus = document.getElementById('decrement');\n",
        # ... and this is the rest.
        "minus.disabled = false;\n```\n",
        # Round 3: no code at all.
        "# Analyze\nThe page matches the screenshot.\n\n# Regenerate\n*html do not need to change*\n",
        # Round 4: the whole html again.
        "# Analyze\nThe title should be larger.\n\n# Regenerate\n```html\n"
        + _HTML.replace("<h1>", '<h1 style="font-size: 32px">') + "\n```\n",
    ),
    cycle=("# Analyze\nNothing left.\n\n# Regenerate\n*html do not need to change*\n",),
)

# --------------------------------------------------------------------------------------------
# The recording endpoint
# --------------------------------------------------------------------------------------------


class Recorder:
    """An OpenAI-compatible endpoint on 127.0.0.1 that keeps every chat request's JSON body and
    answers each with the script's next reply."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.bodies: list[dict[str, Any]] = []
        self.model_listings = 0
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass

            def _send(self, status: int, payload: Mapping[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path.rstrip("/").endswith("/v1/models"):
                    with recorder.lock:
                        recorder.model_listings += 1
                    self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/v1/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, {"error": {"message": "the body is not JSON"}})
                    return
                with recorder.lock:
                    index = len(recorder.bodies)
                    recorder.bodies.append(body)
                reply = recorder.script.reply(index)
                self._send(200, {
                    "id": f"chatcmpl-{index}", "object": "chat.completion", "created": 0, "model": MODEL_ID,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1000 + index, "completion_tokens": len(reply.split()),
                              "total_tokens": 1000 + index + len(reply.split())},
                })

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    env: str
    flow: str
    #: The experiment scripts' values (scripts/experiments/<Env>/<Flow>/*.sh), given to both sides.
    values: Mapping[str, int]
    script: Script
    #: Football frames: compared by size only.
    size_only: bool = False
    #: The environment's engine is stochastic (request counts may differ from run to run).
    stochastic: bool = False
    #: Further platform runs compared with the same official requests: (short name, platform settings).
    variants: tuple[tuple[str, Mapping[str, Any]], ...] = ()


CASES: tuple[Case, ...] = (
    Case("sokoban-global", "sokoban", FLOW_GLOBAL,
         {"resolution": 640, "max_image": 1, "max_tokens": 1000}, SOKOBAN_GLOBAL),
    Case("sokoban-online", "sokoban", FLOW_ONLINE,
         {"resolution": 640, "max_image": 1, "max_memory": 5, "max_loop": 50, "max_tokens": 300}, SOKOBAN_ONLINE),
    Case("webui-global", "webui", FLOW_GLOBAL,
         {"resolution": 1920, "max_image": 10, "max_tokens": 4000}, WEBUI_GLOBAL),
    Case("football-online", "football", FLOW_ONLINE,
         {"resolution": 1280, "max_image": 1, "max_memory": 5, "max_loop": 400, "max_tokens": 1000},
         FOOTBALL_ONLINE, size_only=True, stochastic=True),
    Case("webui-online", "webui", FLOW_ONLINE,
         {"resolution": 1920, "max_image": 10, "max_loop": 4, "max_tokens": 4000}, WEBUI_ONLINE,
         # The labelled option that renders in the viewport today's headless Chromium leaves the
         # official runner's 1920×1080 window.
         variants=(("937", {"webui_viewport_937": True}),)),
)
OFFICIAL_ENV = {"sokoban": "Sokoban", "football": "Football", "webui": "WebUI"}
OFFICIAL_FLOW = {FLOW_GLOBAL: "Global", FLOW_ONLINE: "Online"}


def official_loadable(env: str, entry: str) -> bool:
    """Whether the official runner can load this resource: it loads a Football scenario file on its
    own (no package around it), so a file written as gfootball's scenarios are (``from . import *``)
    fails there."""
    if env != "football":
        return True
    text = (FIXTURES / entry).read_text(encoding="utf-8")
    return not re.search(r"^\s*from\s+\.", text, re.MULTILINE)


def pick_scenario(env: str) -> tuple[str, str]:
    """The first scenario of the mini list the official runner can load (else of the full list):
    its resources entry ("resources/Sokoban/1-....pkl") and why it was picked."""
    name = OFFICIAL_ENV[env]
    for subset in ("mini", "all"):
        entries = json.loads((RESOURCES / f"{name}_{subset}.json").read_text(encoding="utf-8"))
        for position, entry in enumerate(entries):
            if official_loadable(env, entry):
                if subset == "mini" and position == 0:
                    return entry, f"first of {name}_mini.json"
                skipped = f"; every {name}_mini.json scenario imports relatively (from . import *), " \
                          "which the official loader cannot" if subset == "all" else ""
                return entry, f"#{position + 1} of {name}_{subset}.json{skipped}"
    raise SystemExit(f"no {name} scenario the official runner can load")


def platform_spec(env: str, entry: str) -> ScenarioSpec:
    key = Path(entry).stem if env != "webui" else Path(entry).name
    for item in get_plugin(env).discover(RESOURCES, verify=False):
        if item.key == key:
            return ScenarioSpec(env=env, key=item.key, data=item.data, resource_path=item.resource_file)
    raise SystemExit(f"the {env} plug-in finds no scenario {key!r} in {RESOURCES}")


# --------------------------------------------------------------------------------------------
# The official side
# --------------------------------------------------------------------------------------------


@dataclass
class OfficialRun:
    bodies: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: The ``result`` of every eval.json the run wrote (WebUI Online: one per round), by folder.
    results: list[tuple[str, Any]] = field(default_factory=list)
    #: GET /v1/models requests made.
    listings: int = 0


def _official_env(deps: Path | None) -> dict[str, str]:
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
        try:
            completed = subprocess.run([sys.executable, script, *argv], cwd=code, env=_official_env(deps),
                                       stdout=out, stderr=subprocess.STDOUT, timeout=OFFICIAL_TIMEOUT,
                                       check=False)
            code_ = completed.returncode
        except subprocess.TimeoutExpired:
            code_ = -1
    text = log.read_text(encoding="utf-8", errors="replace")
    return code_, text


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
                                   env=_official_env(deps), capture_output=True, text=True, timeout=120, check=False)
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
        argv = common + ["--webui_online_type", "Natural", "--init-dir", str(work / "global"),
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


# --------------------------------------------------------------------------------------------
# The platform side
# --------------------------------------------------------------------------------------------


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
    overrides.update(extra or {})
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


# --------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------

TOP_LEVEL = ("model", "temperature", "top_p", "frequency_penalty", "max_tokens")


@dataclass
class ImageTally:
    compared: int = 0
    same_pixels: int = 0
    same_bytes: int = 0
    size_only: int = 0


def _context(text: str, at: int, width: int = 40) -> str:
    start = max(0, at - width)
    return ("…" if start else "") + repr(text[start:at + width])[1:-1] + ("…" if at + width < len(text) else "")


def text_difference(official: str, platform: str) -> str | None:
    if official == platform:
        return None
    limit = min(len(official), len(platform))
    at = next((i for i in range(limit) if official[i] != platform[i]), limit)
    return (f"first differs at character {at} (lengths {len(official)} vs {len(platform)}): "
            f"official «{_context(official, at)}» / platform «{_context(platform, at)}»")


_DATA_URL = re.compile(r"^data:(?P<type>[^;,]*)(?P<b64>;base64)?,(?P<data>.*)$", re.DOTALL)


def _decode(url: Any) -> tuple[str, bytes] | str:
    if not isinstance(url, str):
        return f"not a string URL: {type(url).__name__}"
    match = _DATA_URL.match(url)
    if not match or not match.group("b64"):
        return f"not a base64 data URL: {url[:40]!r}"
    try:
        return match.group("type"), base64.b64decode(match.group("data"), validate=True)
    except (binascii.Error, ValueError) as exc:
        return f"bad base64: {exc}"


def image_difference(official: Any, platform: Any, tally: ImageTally, size_only: bool) -> str | None:
    tally.compared += 1
    one, two = _decode(official), _decode(platform)
    if isinstance(one, str) or isinstance(two, str):
        problems = [each if isinstance(each, str) else "ok" for each in (one, two)]
        return f"image URL: official {problems[0]}, platform {problems[1]}"
    (type_one, bytes_one), (type_two, bytes_two) = one, two
    if type_one != type_two:
        return f"image media type label: official {type_one!r}, platform {type_two!r}"
    if bytes_one == bytes_two:
        tally.same_bytes += 1
        tally.same_pixels += 1
        return None
    try:
        img_one: Image.Image = Image.open(io.BytesIO(bytes_one))
        img_two: Image.Image = Image.open(io.BytesIO(bytes_two))
        img_one.load()
        img_two.load()
    except Exception as exc:  # noqa: BLE001
        return f"image cannot be decoded: {exc}"
    if img_one.size != img_two.size:
        sizes = (f"image size: official {img_one.size[0]}×{img_one.size[1]}, "
                 f"platform {img_two.size[0]}×{img_two.size[1]}")
        if size_only:
            return sizes
        return sizes + "; " + _crop_relation(img_one, img_two)
    if size_only:
        tally.size_only += 1
        return None
    if img_one.mode != img_two.mode:
        img_one, img_two = img_one.convert("RGBA"), img_two.convert("RGBA")
    if img_one.tobytes() != img_two.tobytes():
        rgba_one, rgba_two = img_one.convert("RGBA"), img_two.convert("RGBA")
        width = img_one.size[0]
        flat_one, flat_two = rgba_one.tobytes(), rgba_two.tobytes()
        differing = [i for i in range(0, len(flat_one), 4) if flat_one[i:i + 4] != flat_two[i:i + 4]]
        first = differing[0]
        x, y = (first // 4) % width, (first // 4) // width
        return (f"image pixels ({img_one.size[0]}×{img_one.size[1]}, {img_one.mode}/{img_two.mode}): "
                f"{len(differing)} pixels differ, first at ({x}, {y}): "
                f"official RGBA {tuple(flat_one[first:first + 4])}, platform {tuple(flat_two[first:first + 4])}")
    tally.same_pixels += 1
    return None


def _crop_relation(official: Image.Image, platform: Image.Image) -> str:
    """Whether the smaller image is the larger one's top-left corner, pixel for pixel."""
    small, large, which = ((official, platform, "official") if official.size[0] * official.size[1]
                           <= platform.size[0] * platform.size[1] else (platform, official, "platform"))
    if small.size[0] > large.size[0] or small.size[1] > large.size[1]:
        return "neither is a crop of the other"
    corner = large.convert("RGBA").crop((0, 0, small.size[0], small.size[1]))
    if corner.tobytes() == small.convert("RGBA").tobytes():
        return f"the {which} image is the other's top-left {small.size[0]}×{small.size[1]}, pixel for pixel"
    return f"the {which} image is not the other's top-left corner"


def _parts(content: Any) -> list[dict[str, Any]] | str:
    if isinstance(content, list):
        return [part if isinstance(part, dict) else {"type": repr(part)} for part in content]
    return content if isinstance(content, str) else repr(content)


def request_differences(official: Mapping[str, Any], platform: Mapping[str, Any], tally: ImageTally,
                        size_only: bool) -> list[str]:
    """Every difference between two request bodies, first ones first."""
    found = _top_level_differences(official, platform)
    messages_one, messages_two = official.get("messages") or [], platform.get("messages") or []
    roles_one = [m.get("role") for m in messages_one]
    roles_two = [m.get("role") for m in messages_two]
    if roles_one != roles_two:
        found.append(f"message roles: official {roles_one}, platform {roles_two}")
    for index, (one, two) in enumerate(zip(messages_one, messages_two)):
        found += _message_differences(f"message {index} ({one.get('role')})", one, two, tally, size_only)
    return found


def _top_level_differences(official: Mapping[str, Any], platform: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    keys_one, keys_two = set(official) - {"messages"}, set(platform) - {"messages"}
    if keys_one != keys_two:
        found.append(f"top-level fields: only official {sorted(keys_one - keys_two)}, "
                     f"only platform {sorted(keys_two - keys_one)}")
    for key in list(TOP_LEVEL) + sorted((keys_one & keys_two) - set(TOP_LEVEL)):
        if key in official and key in platform and official[key] != platform[key]:
            found.append(f"{key}: official {official[key]!r}, platform {platform[key]!r}")
    return found


def _message_differences(where: str, one: Mapping[str, Any], two: Mapping[str, Any], tally: ImageTally,
                         size_only: bool) -> list[str]:
    found: list[str] = []
    if set(one) != set(two):
        found.append(f"{where} fields: official {sorted(one)}, platform {sorted(two)}")
    content_one, content_two = _parts(one.get("content")), _parts(two.get("content"))
    if isinstance(content_one, str) and isinstance(content_two, str):
        diff = text_difference(content_one, content_two)
        if diff:
            found.append(f"{where} text: {diff}")
        return found
    if isinstance(content_one, str) or isinstance(content_two, str):
        kinds = ["a string" if isinstance(c, str) else f"a list of {len(c)} parts" for c in (content_one, content_two)]
        found.append(f"{where} content: official {kinds[0]}, platform {kinds[1]}")
        return found
    types_one = [p.get("type") for p in content_one]
    types_two = [p.get("type") for p in content_two]
    if types_one != types_two:
        found.append(f"{where} parts: official {types_one}, platform {types_two}")
    for number, (part_one, part_two) in enumerate(zip(content_one, content_two)):
        # Parts of different types were reported with the types above.
        if part_one.get("type") == part_two.get("type"):
            found += _part_differences(f"{where} part {number}", part_one, part_two, tally, size_only)
    return found


def _part_differences(at: str, part_one: Mapping[str, Any], part_two: Mapping[str, Any], tally: ImageTally,
                      size_only: bool) -> list[str]:
    found: list[str] = []
    if set(part_one) != set(part_two):
        found.append(f"{at} fields: official {sorted(part_one)}, platform {sorted(part_two)}")
    if part_one.get("type") == "text":
        diff = text_difference(str(part_one.get("text")), str(part_two.get("text")))
        if diff:
            found.append(f"{at} text: {diff}")
    elif part_one.get("type") == "image_url":
        image_one, image_two = part_one.get("image_url") or {}, part_two.get("image_url") or {}
        if set(image_one) != set(image_two):
            found.append(f"{at} image_url fields: official {sorted(image_one)}, platform {sorted(image_two)}")
        diff = image_difference(image_one.get("url"), image_two.get("url"), tally, size_only)
        if diff:
            found.append(f"{at} {diff}")
    elif part_one != part_two:
        found.append(f"{at}: official {str(part_one)[:80]}, platform {str(part_two)[:80]}")
    return found


@dataclass
class Outcome:
    label: str
    case: Case
    scenario: str
    picked: str
    official: OfficialRun
    platform: PlatformRun
    differences: list[tuple[int, list[str]]]
    tally: ImageTally

    @property
    def compared(self) -> int:
        return min(len(self.official.bodies), len(self.platform.bodies))

    @property
    def equal(self) -> int:
        return self.compared - len(self.differences)

    @property
    def count_differs(self) -> bool:
        return len(self.official.bodies) != len(self.platform.bodies)

    @property
    def first(self) -> str:
        if self.differences:
            index, found = self.differences[0]
            return f"request {index + 1}: {found[0]}"
        if self.count_differs:
            return f"request count: official {len(self.official.bodies)}, platform {len(self.platform.bodies)}"
        if not self.compared:
            return "no request was made"
        return "-"


def compare(label: str, case: Case, scenario: str, picked: str, official: OfficialRun,
            platform: PlatformRun) -> Outcome:
    tally = ImageTally()
    differences = []
    for index, (one, two) in enumerate(zip(official.bodies, platform.bodies)):
        found = request_differences(one, two, tally, case.size_only)
        if found:
            differences.append((index, found))
    return Outcome(label, case, scenario, picked, official, platform, differences, tally)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "?"


def _results(results: Sequence[tuple[str, Any]]) -> str:
    if not results:
        return "none written"
    shown = [(folder, str(round(r, 6)) if isinstance(r, float) else str(r)) for folder, r in results]
    return shown[0][1] if len(shown) == 1 else ", ".join(f"{folder} {value}" for folder, value in shown)


def report(outcomes: Sequence[Outcome], code: Path, max_loop: int | None) -> str:
    lines = [
        "Official request agreement (bench/official_requests.py)",
        f"run {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC on commit {_git('rev-parse', '--short', 'HEAD')}"
        + (" with uncommitted changes in evaluators/" if _git("status", "--porcelain", "evaluators") else ""),
        f"official runner: {code} (rebuilt outside the repository), run with {Path(sys.executable).name} "
        f"{sys.version.split()[0]}",
        "scripted endpoint: the same replies on both sides; images compared by media-type label and decoded "
        "pixels, Football frames by size only",
    ]
    if max_loop is not None:
        lines.append(f"Online flows capped at {max_loop} decisions on both sides (--max-loop)")
    lines.append("")
    header = (f"{'flow':<18}{'scenario':<20}{'official':>9}{'platform':>9}{'compared':>9}{'equal':>6}"
              f"{'differing':>10}  first difference")
    lines.append(header)
    lines.append("-" * len(header))
    for outcome in outcomes:
        lines.append(f"{outcome.label:<18}{outcome.scenario:<20}{len(outcome.official.bodies):>9}"
                     f"{len(outcome.platform.bodies):>9}{outcome.compared:>9}{outcome.equal:>6}"
                     f"{len(outcome.differences) + (1 if outcome.count_differs else 0):>10}  "
                     f"{outcome.first[:160]}")
    lines.append("")
    lines.append("'differing' counts the differing request pairs, plus one when the two sides made a different "
                 "number of requests.")
    for outcome in outcomes:
        lines.append("")
        lines.append(f"== {outcome.label}: {outcome.scenario} ({outcome.picked})")
        lines.append(f"settings (both sides): {dict(outcome.case.values)}")
        lines.append(f"platform prompts: {outcome.platform.prompts}")
        lines.append(f"official: {len(outcome.official.bodies)} requests in {outcome.official.seconds:.0f} s; "
                     f"platform: {len(outcome.platform.bodies)} requests in {outcome.platform.seconds:.0f} s")
        lines.append(f"GET /v1/models (not compared): official {outcome.official.listings}, "
                     f"platform {outcome.platform.listings}")
        tally = outcome.tally
        lines.append(f"images compared: {tally.compared}; identical pixels: {tally.same_pixels} "
                     f"(identical PNG bytes: {tally.same_bytes})"
                     + (f"; size only: {tally.size_only}" if tally.size_only else ""))
        for note in outcome.official.notes:
            lines.append(f"official note: {note}")
        for note in outcome.platform.notes:
            lines.append(f"platform note: {note}")
        lines.append(f"scores (not compared; the platform's in the official result's units): official eval.json "
                     f"{_results(outcome.official.results)}; platform "
                     f"{'-' if outcome.platform.score is None else round(outcome.platform.score, 6)} "
                     f"({outcome.platform.outcome or 'no result'})")
        if outcome.count_differs:
            lines.append(f"request count differs: official {len(outcome.official.bodies)}, "
                         f"platform {len(outcome.platform.bodies)}")
            limit = outcome.case.values.get("max_loop")
            if (outcome.case.stochastic and limit is not None
                    and max(len(outcome.official.bodies), len(outcome.platform.bodies)) < limit):
                lines.append(f"    both episodes ended before max_loop ({limit}): each side's engine draws its "
                             "own random seed (the official runner sets none), so the games, and where they end, "
                             "differ from run to run")
        for index, found in outcome.differences[:25]:
            lines.append(f"request {index + 1}: {len(found)} difference(s)")
            for item in found[:6]:
                lines.append(f"    {item}")
            if len(found) > 6:
                lines.append(f"    … and {len(found) - 6} more")
        if len(outcome.differences) > 25:
            lines.append(f"… and {len(outcome.differences) - 25} more differing requests")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------


def run_case(case: Case, code: Path, deps: Path | None, work: Path, max_loop: int | None) -> list[Outcome]:
    entry, picked = pick_scenario(case.env)
    values = dict(case.values)
    if max_loop is not None and "max_loop" in values:
        values["max_loop"] = min(values["max_loop"], max_loop)
        case = replace(case, values=values)
    key = Path(entry).stem if case.env != "webui" else Path(entry).name
    folder = work / case.name
    print(f"[{case.name}] official runner on {entry} …", flush=True)
    with Recorder(case.script) as recorder:
        official = run_official(case, entry, code, deps, recorder, folder / "official", values)
    print(f"[{case.name}] {len(official.bodies)} official requests in {official.seconds:.0f} s", flush=True)
    (folder / "official-requests.json").write_text(json.dumps(official.bodies), encoding="utf-8")
    outcomes = []
    for short, extra in (("", {}), *case.variants):
        label = f"{case.name}/{short}" if short else case.name
        side = f"platform-{short}" if short else "platform"
        with Recorder(case.script) as recorder:
            platform = run_platform(case, entry, code, recorder, folder / side, values, extra)
        print(f"[{label}] {len(platform.bodies)} platform requests in {platform.seconds:.0f} s", flush=True)
        (folder / f"{side}-requests.json").write_text(json.dumps(platform.bodies), encoding="utf-8")
        outcomes.append(compare(label, case, key, picked, official, platform))
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official-code", type=Path, required=True,
                        help="the official MageBench runner's folder (main.py, API/, Flow/, env/)")
    parser.add_argument("--official-deps", type=Path,
                        help="a folder of the official runner's own dependencies (pip install --target), "
                             "put on its PYTHONPATH")
    parser.add_argument("--out", type=Path, default=DEFAULT_REPORT, help="the report file")
    parser.add_argument("--flow", action="append", choices=[case.name for case in CASES],
                        help="only this flow (repeatable)")
    parser.add_argument("--max-loop", type=int, help="cap the Online flows' decisions on both sides")
    parser.add_argument("--keep", type=Path, help="keep the runs and the recorded requests here")
    args = parser.parse_args(argv)
    code = args.official_code.resolve()
    deps = args.official_deps.resolve() if args.official_deps else None
    if not (code / "main.py").is_file():
        parser.error(f"{code} has no main.py")
    load_plugins(DEFAULT_ENVIRONMENTS)

    outcomes = []
    with tempfile.TemporaryDirectory(prefix="magebench-official-requests-") as scratch:
        work = args.keep.resolve() if args.keep else Path(scratch)
        for case in CASES:
            if args.flow and case.name not in args.flow:
                continue
            outcomes.extend(run_case(case, code, deps, work, args.max_loop))
    text = report(outcomes, code, args.max_loop)
    print()
    print(text, end="")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 1 if any(o.differences or o.count_differs or not o.compared for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
