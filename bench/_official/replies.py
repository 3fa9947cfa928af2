"""The scripted endpoint: the replies each flow is given, and the recording server that gives them."""
from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_ID = "recorder"


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
