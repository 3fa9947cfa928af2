"""This release's stack, checked from outside through its proxy and from inside its network."""
from __future__ import annotations

import functools
import json
import secrets
import time
from typing import Any

from deploy.check import platform
from deploy.check.client import Site
from deploy.check.platform import Board
from deploy.check.report import Report, expect
from deploy.check.settings import Settings
from deploy.check.stacks import METRICS_TOKEN
from deploy.check.upgrade import FOOTBALL, IN_FLIGHT, ORACLE, SOKOBAN, UPLOADED, WEBUI, Populated
from deploy.stack import Project, wait_for

ONLINE = Board("sokoban", "online", "mini")
NEW_MODEL = "Check Oracle Online"
LONG_RUNNING = ("postgres", "redis", "proxy", "web", "worker-light", "worker-browser", "worker-engine", "worker-pools",
                "beat", "backup", "agent-light", "agent-engine")
# worker-pools serves no pool with the default environments: it is healthy waiting.
HEALTHY = ("web", "worker-light", "worker-browser", "worker-engine", "worker-pools")
# Inside the stack's network: a scrape as Prometheus makes it, and one that claims to have come
# through the proxy without the token.
SCRAPE = """
import sys, urllib.request, urllib.error
request = urllib.request.Request("http://web:8000/metrics", headers=dict(h.split(": ", 1) for h in sys.argv[1:]))
try:
    answer = urllib.request.urlopen(request, timeout=30)
    print(answer.status); print(answer.read().decode())
except urllib.error.HTTPError as error:
    print(error.code)
"""


def _scored(data: dict[str, Any]) -> str:
    attempts = data["attempts"]
    expect(attempts and all(a["status"] == "scored" and a["score"] is not None for a in attempts),
           [(a["scenario"], a["repeat"], a["status"], a["score"]) for a in attempts])
    return f"{len(attempts)} attempts"


def run_new_submission(site: Site, project: Project, settings: Settings, report: Report) -> dict[str, Any]:
    token = platform.make_token(project, "current-team")
    api = site.with_token(token)
    started = time.monotonic()
    submission_id = platform.submit_endpoint(api, NEW_MODEL, ONLINE, settings.agent_port)
    data = platform.wait_finished(api, submission_id, settings.timeout)
    wait_for(120, lambda: platform.on_board(site, NEW_MODEL, ONLINE))
    report.timing("this release: Sokoban Online mini endpoint submission to its board row", time.monotonic() - started)
    data["token"] = token
    return data


def check_submissions(site: Site, before: Populated, new: dict[str, Any], report: Report) -> None:
    api = site.with_token(before.token)
    sokoban = platform.submission(api, before.ids["sokoban"])
    upload = platform.submission(api, before.ids["webui"])
    football = platform.submission(api, before.ids["football"])
    report.check("endpoint submission (Sokoban Global): every attempt scored", lambda: _scored(sokoban))
    report.check("endpoint submission (Sokoban Global): the oracle solves every level", lambda: expect(
        min(a["score"] for a in sokoban["attempts"]) > 0, [a["score"] for a in sokoban["attempts"]]))
    report.check("endpoint submission (Sokoban Online, through the proxy): every attempt scored", lambda: _scored(new))
    report.check("Football submission: every attempt scored on the engine pool", lambda: _scored(football))
    report.check("upload: every run re-scored in the browser worker", lambda: _scored(upload))

    def upload_agrees() -> str:
        want = {(r["scenario"], r["repeat"]): r["score"] for r in map(json.loads, platform.UPLOAD_FILE.open())}
        got = {(a["scenario"], a["repeat"]): a["score"] for a in upload["attempts"]}
        expect(all(got.get(k) is not None and abs(got[k] - v) <= 1.0 for k, v in want.items()), (got, want))
        return f"{len(want)} runs within 1 point"

    report.check("upload: the platform's scores are the file's", upload_agrees)
    first = {key: data["attempts"][0]["id"] for key, data in
             (("sokoban", sokoban), ("webui", upload), ("football", football))}
    pages = [("home page", "/", "MageBench"),
             ("board page with the endpoint's row", f"{SOKOBAN.path}?suite=fixture", ORACLE),
             ("board page with the upload's row", f"{WEBUI.path}?suite=fixture", UPLOADED),
             ("board page with the Football row", f"{FOOTBALL.path}?suite=fixture", IN_FLIGHT),
             ("board page with this release's row", f"{ONLINE.path}?suite=fixture", NEW_MODEL),
             ("API schema", "/api/v1/schema/?format=json", '"openapi"'),
             ("API documentation (Swagger UI)", "/api/docs/", "swagger"),
             ("API documentation (ReDoc)", "/api/redoc/", "redoc"),
             ("replay of a Sokoban attempt", f"/attempts/{first['sokoban']}/replay/", ORACLE),
             ("replay of a WebUI attempt", f"/attempts/{first['webui']}/replay/", UPLOADED),
             ("replay of a Football attempt", f"/attempts/{first['football']}/replay/", IN_FLIGHT),
             ("trajectory API", f"/api/v1/attempts/{first['sokoban']}/trajectory/", '"steps"'),
             ("WebUI pages ran in their own namespaces, sandbox on", f"/api/v1/attempts/{first['webui']}/trajectory/",
              "own network namespace, Chromium sandbox")]
    for name, path, text in pages:
        report.check(name, functools.partial(_page_has, site, path, text))


def _page_has(site: Site, path: str, text: str) -> str:
    answer = site.get(path)
    expect(answer.status == 200 and text in answer.text, f"GET {path}: HTTP {answer.status}, {text!r} "
                                                         f"{'found' if text in answer.text else 'missing'}")
    return f"GET {path}: 200"


def check_proxy(site: Site, plain: Site, project: Project, settings: Settings, report: Report) -> None:
    def tls() -> str:
        answer = site.get("/")
        expect(answer.status == 200, answer.status)
        return "certificate for localhost verified against the proxy's local CA"

    report.check("HTTPS with the proxy's local certificate", tls)

    def redirect() -> str:
        answer = plain.get("/boards/?x=1")
        location = answer.headers.get("location", "")
        expect(answer.status in (301, 308) and location.startswith("https://localhost") and
               location.endswith("/boards/?x=1"), (answer.status, location))
        return f"{answer.status} → {location}"

    report.check("plain HTTP is sent to HTTPS by the proxy", redirect)
    report.check("HSTS", lambda: expect("max-age=31536000" in site.get("/").headers.get(
        "strict-transport-security", ""), site.get("/").headers))

    def forwarded_for_ignored() -> str:
        probe = secrets.token_hex(8)
        site.get(f"/probe-{probe}/", **{"X-Forwarded-For": "203.0.113.77", "X-Forwarded-Proto": "http"})
        lines: list[str] = []

        def logged() -> bool:
            lines[:] = [line for line in project.logs("web", tail=400).splitlines()
                        if probe in line and "forwarded_for=" in line]
            return bool(lines)

        expect(wait_for(30, logged), "the probe request is not in the web process's access log")
        message = json.loads(lines[0].split("|", 1)[-1])["message"]
        expect("203.0.113.77" not in message, message)
        return message

    report.check("a client's X-Forwarded-For is replaced by the proxy", forwarded_for_ignored)

    def body_cap() -> str:
        too_big = 53477376 + 1
        marker = f"cap-{secrets.token_hex(6)}"
        status = site.declared_body("POST", f"/{marker}/", too_big, "multipart/form-data; boundary=x")
        expect(status == 413, status)
        # The proxy answered alone: gunicorn never saw the request.
        expect(marker not in project.logs("web", tail=400), "the request reached the web process")
        return f"{too_big:,} bytes declared: 413 before a byte was sent, the web process never asked"

    report.check("a body above the cap is refused by the proxy", body_cap)

    def static_cached() -> str:
        home = site.get("/").text
        css = next(part.split('"')[0] for part in home.split('href="')[1:] if part.split('"')[0].endswith(".css")
                   and part.startswith("/static/"))
        answer = site.get(css)
        expect(answer.status == 200 and "max-age=31536000" in answer.headers.get("cache-control", "")
               and answer.headers.get("server", "").lower() == "caddy", (css, answer.status, answer.headers))
        return f"{css}: {answer.headers['cache-control']}"

    report.check("static files served by the proxy, cached for a year", static_cached)
    report.check("metrics refused from outside", lambda: expect(site.get("/metrics").status == 404,
                                                                site.get("/metrics").status))

    def metrics_with_token() -> str:
        right = site.get("/metrics", Authorization=f"Bearer {METRICS_TOKEN}")
        wrong = site.get("/metrics", Authorization="Bearer not-the-token")
        expect(right.status == 200 and "magebench_attempts" in right.text and wrong.status == 403,
               (right.status, wrong.status))
        return "the token: 200; another: 403 from the site"

    report.check("metrics through the proxy with the token only", metrics_with_token)
    report.check("health answers refused from outside", lambda: expect(site.get("/-/ready").status == 404,
                                                                       site.get("/-/ready").status))

    def metrics_inside() -> str:
        out = project.exec("worker-light", "python", "-c", SCRAPE).splitlines()
        expect(out[0] == "200" and any(line.startswith("magebench_attempts") for line in out), out[:20])
        forged = project.exec("worker-light", "python", "-c", SCRAPE, "X-Forwarded-For: 198.51.100.9").splitlines()
        expect(forged[0] in ("403", "404"), forged[:5])
        wanted = ("magebench_queue_messages", "magebench_attempts", "magebench_worker", "magebench_model_calls",
                  "magebench_http_request")
        missing = [name for name in wanted if not any(line.startswith(name) for line in out)]
        expect(not missing, f"missing metric families: {missing}")
        samples = sum(1 for line in out if line.startswith("magebench_"))
        return f"{samples} samples; forwarded without token: {forged[0]}"

    report.check("metrics answer inside the stack (and refuse a forwarded request without the token)", metrics_inside)


def check_services(project: Project, settings: Settings, report: Report) -> None:
    def all_running() -> str:
        states = {service: project.state(service) for service in LONG_RUNNING}
        states["migrate"] = project.state("migrate")
        running = all(states[s].startswith("running") for s in LONG_RUNNING)
        expect(running and states["migrate"].startswith("exited 0"), states)
        return ", ".join(f"{k}: {v}" for k, v in states.items() if k == "migrate")

    report.check("every service running, migrate done", all_running)

    def healthy() -> str:
        ok = wait_for(180, lambda: all(project.state(s).endswith("healthy") and not project.state(s).endswith(
            "unhealthy") for s in HEALTHY), every=5)
        expect(ok, {s: project.state(s) for s in HEALTHY})
        return "web and the four pool services: healthy"

    report.check("the compose health checks pass", healthy)

    def beat_ticks() -> bool:
        return any("submissions.watchdog" in line and "succeeded" in line
                   for line in project.logs("worker-light").splitlines())

    report.check("beat runs the watchdog (on the light pool)", lambda: expect(wait_for(90, beat_ticks), "no tick"))

    def json_logs() -> str:
        lines = [line.split("|", 1)[-1].strip() for line in project.logs("worker-light").splitlines()]
        records = []
        for line in lines:
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
        with_ids = [r for r in records if r.get("attempt_id") and r.get("submission_id")]
        expect(bool(with_ids), f"{len(records)} JSON lines, none with attempt and submission ids")
        return f"{len(records)} JSON lines, {len(with_ids)} with attempt and submission ids"

    report.check("worker logs are JSON lines carrying submission and attempt ids", json_logs)

    def only_proxy_published() -> str:
        out = project.docker.docker("ps", "--filter", f"label=com.docker.compose.project={settings.project}",
                                    "--format", "{{.Names}} {{.Ports}}")
        published = [line for line in out.splitlines() if "->" in line]
        expect(len(published) == 1 and "proxy" in published[0] and "0.0.0.0" not in published[0]
               and f"127.0.0.1:{settings.https_port}->443" in published[0], out)
        return published[0]

    report.check("only the proxy is published, on 127.0.0.1", only_proxy_published)
