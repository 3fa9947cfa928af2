"""The browser that evaluates model-written pages: no network beyond the page's folder, whatever
path a page takes out (workers, WebRTC, refreshes, service workers), and a bounded share of memory
and CPU time per page. Every way out is aimed at a listener on a free loopback port, which must
see nothing; what the browser can observe is recorded with the render."""
from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from evaluators import browser
from evaluators.base import ScenarioSpec
from evaluators.endpoints.messages import Completion
from evaluators.runner import effective_settings, run_attempt
from evaluators.webui.baselines import page_files
from evaluators.webui.playwright_instance import shared_playwright
from evaluators.webui.render import PageRenderer
from evaluators.webui.results import RenderResult
from evaluators.webui.selenium_compat import CompatDriver

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
Action = Callable[[CompatDriver], object]


class Listener:
    """A TCP and a UDP socket on free loopback ports. Nothing is accepted while a page runs: the
    kernel completes a TCP handshake into the backlog and queues datagrams on its own, so reading
    both queues afterwards finds every connection and packet that reached the host."""

    def __init__(self) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.tcp_port = self.tcp.getsockname()[1]
        self.udp_port = self.udp.getsockname()[1]
        self.http = f"http://127.0.0.1:{self.tcp_port}"

    def arrivals(self) -> list[str]:
        found = []
        while True:
            try:
                connection, _ = self.tcp.accept()
            except BlockingIOError:
                break
            connection.close()
            found.append("a TCP connection")
        while True:
            try:
                data = self.udp.recv(65536)
            except BlockingIOError:
                break
            found.append(f"a UDP datagram of {len(data)} bytes")
        return found

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    opened = Listener()
    yield opened
    opened.close()


@pytest.fixture(scope="module", params=["network namespace", "flags alone"])
def renderer(request: pytest.FixtureRequest) -> Iterator[PageRenderer]:
    """Each test runs on the full isolation and again on the flag layer alone (what a machine
    without namespaces gets), so that each layer is shown to hold on its own."""
    namespace = request.param == "network namespace"
    if namespace and not browser.network_namespace_available():
        pytest.skip("this machine cannot give the browser a network namespace")
    with PageRenderer(action_timeout=12.0, load_timeout=5.0, kill_grace=2.0, network_namespace=namespace) as shared:
        yield shared


def make_page(root: Path, body: str, **files: str) -> Path:
    page_dir = root / "page"
    page_dir.mkdir(parents=True, exist_ok=True)
    (page_dir / "index.html").write_text(f"<!doctype html><html><head></head><body><p id=\"status\">started</p>"
                                         f"{body}</body></html>", encoding="utf-8")
    for name, content in files.items():
        (page_dir / name).write_text(content, encoding="utf-8")
    return page_dir


def status_becomes(*expected: str) -> Action:
    """An action that waits until the page reports one of ``expected`` in #status."""
    def wait_for_status(driver: CompatDriver) -> None:
        driver.page.wait_for_function("(expected) => expected.includes(document.getElementById('status').textContent)",
                                      arg=list(expected), timeout=10_000)
    return wait_for_status


def render(renderer: PageRenderer, page_dir: Path, *actions: Action) -> RenderResult:
    return renderer.render_states(page_dir, list(actions), screenshots=False, settle_ms=0)


def status(result: RenderResult) -> str:
    return next(e.text for e in result.states[-1].elements if e.attributes.get("id") == "status")


def worker(source: str) -> str:
    """A script starting a dedicated worker from ``source``, whose messages become #status."""
    return ("<script>const source = " + json.dumps(source) + ";"
            "const w = new Worker(URL.createObjectURL(new Blob([source], {type: 'text/javascript'})));"
            "w.onmessage = (e) => { document.getElementById('status').textContent = e.data; };</script>")


# --- ways out --------------------------------------------------------------------------------


def test_a_websocket_opened_in_a_dedicated_worker_reaches_nothing_and_is_recorded(renderer, listener, tmp_path):
    url = f"ws://127.0.0.1:{listener.tcp_port}/from-worker"
    page_dir = make_page(tmp_path, worker(f"const s = new WebSocket('{url}');"
                                          "s.onopen = () => postMessage('open');"
                                          "s.onclose = () => postMessage('closed');"))
    result = render(renderer, page_dir, status_becomes("open", "closed"))
    assert listener.arrivals() == []
    assert status(result) == "closed"
    assert url in result.blocked_urls


def test_fetch_from_a_worker_reaches_nothing_and_is_recorded(renderer, listener, tmp_path):
    url = f"{listener.http}/from-worker"
    page_dir = make_page(tmp_path, worker(f"fetch('{url}').then(() => postMessage('answered'), "
                                          "() => postMessage('refused'));"))
    result = render(renderer, page_dir, status_becomes("answered", "refused"))
    assert listener.arrivals() == []
    assert status(result) == "refused"
    assert url in result.blocked_urls


def _webrtc(ice_servers: str, *, from_fresh_frame: bool) -> str:
    # A frame created this instant has not run the renderer's init scripts yet: its
    # RTCPeerConnection is the browser's own, so only the network layers are left to stop it.
    constructor = ("(() => { const f = document.createElement('iframe'); document.body.appendChild(f); "
                   "return f.contentWindow.RTCPeerConnection; })()" if from_fresh_frame else "RTCPeerConnection")
    return ("<script>const Peer = " + constructor + ";"
            f"const pc = new Peer({{iceServers: {ice_servers}}});"
            "pc.createDataChannel('probe');"
            "const show = () => { document.getElementById('status').textContent = pc.iceGatheringState; };"
            "pc.onicegatheringstatechange = show;"
            "pc.createOffer().then((offer) => pc.setLocalDescription(offer)).then(show);</script>")


@pytest.mark.parametrize("from_fresh_frame", [False, True], ids=["recorded", "past-the-recording"])
def test_webrtc_sends_no_stun_over_udp_and_no_turn_over_tcp(renderer, listener, tmp_path, from_fresh_frame):
    stun, turn = f"stun:127.0.0.1:{listener.udp_port}", f"turn:127.0.0.1:{listener.tcp_port}?transport=tcp"
    servers = json.dumps([{"urls": stun}, {"urls": turn, "username": "u", "credential": "c"}])
    page_dir = make_page(tmp_path, _webrtc(servers, from_fresh_frame=from_fresh_frame))
    result = render(renderer, page_dir, status_becomes("gathering", "complete"))
    assert listener.arrivals() == []
    assert status(result) in ("gathering", "complete")
    if not from_fresh_frame:
        assert {stun, turn} <= set(result.blocked_urls)


def test_a_meta_refresh_opens_no_connection_before_its_navigation_is_cancelled(renderer, listener, tmp_path):
    url = f"{listener.http}/refreshed"

    # The page adds its refresh when the action asks, after the action listens for the failure: a
    # refresh timed from the load could fire before a busy machine gets to the action.
    def refresh_and_wait(driver: CompatDriver) -> None:
        with driver.page.expect_event("requestfailed", predicate=lambda request: request.url == url, timeout=10_000):
            driver.page.evaluate("() => document.head.append(Object.assign(document.createElement('meta'), "
                                 "{httpEquiv: 'refresh', content: '0;url=' + window.refreshTo}))")

    page_dir = make_page(tmp_path, f"<script>window.refreshTo = {json.dumps(url)};</script>")
    result = render(renderer, page_dir, refresh_and_wait)
    assert listener.arrivals() == []
    assert result.states[-1].action_error is None
    assert url in result.blocked_urls and status(result) == "started"


def test_a_service_worker_never_runs_its_fetch(renderer, listener, tmp_path):
    page_dir = make_page(tmp_path, "<script>navigator.serviceWorker.register('sw.js').then("
                                   "() => document.getElementById('status').textContent = 'settled', "
                                   "() => document.getElementById('status').textContent = 'settled');</script>",
                         **{"sw.js": f"fetch('{listener.http}/from-service-worker');"})
    render(renderer, page_dir, status_becomes("settled"))
    assert listener.arrivals() == []


def test_fetch_xhr_img_iframe_and_websocket_to_loopback_reach_nothing_and_are_recorded(renderer, listener, tmp_path):
    base = listener.http
    page_dir = make_page(tmp_path, f'<img src="{base}/img" onerror="done()"><iframe src="{base}/frame"></iframe>'
                                   "<script>let left = 3; function done() { if (--left === 0) "
                                   "document.getElementById('status').textContent = 'all failed'; }"
                                   f"fetch('{base}/fetch').catch(done);"
                                   f"const x = new XMLHttpRequest(); x.onerror = done; x.open('GET', '{base}/xhr'); "
                                   f"x.send(); new WebSocket('ws://127.0.0.1:{listener.tcp_port}/socket');</script>")
    result = render(renderer, page_dir, status_becomes("all failed"))
    assert listener.arrivals() == []
    assert {f"{base}/img", f"{base}/frame", f"{base}/fetch", f"{base}/xhr",
            f"ws://127.0.0.1:{listener.tcp_port}/socket"} <= set(result.blocked_urls)


def test_the_import_page_check_renders_in_the_same_browser_without_network(listener, tmp_path):
    from evaluators.webui.page_check import check_pages

    url = f"ws://127.0.0.1:{listener.tcp_port}/from-an-imported-page"
    page_dir = make_page(tmp_path, worker(f"new WebSocket('{url}');") + f'<img src="{listener.http}/img">')
    [check] = check_pages([("probe", page_dir, "hash")], workers=1)
    assert listener.arrivals() == []
    assert {url, f"{listener.http}/img"} <= set(check.blocked_requests)


# --- which isolation ------------------------------------------------------------------------


def _browser_process(renderer: PageRenderer) -> tuple[str, str]:
    pid = renderer.browser_pid
    assert pid is not None
    command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return command, os.readlink(f"/proc/{pid}/ns/net")


def test_each_render_says_which_isolation_it_had_and_the_full_one_is_a_sandboxed_browser_off_the_host_network(
        renderer, tmp_path):
    result = render(renderer, make_page(tmp_path, ""))
    command, network = _browser_process(renderer)
    if renderer.network_namespace:
        assert result.isolation == "own network namespace, Chromium sandbox"
        assert network != os.readlink("/proc/self/ns/net")
        assert "--no-sandbox" not in command
    else:
        assert result.isolation.startswith("no network namespace (flags only)")
        assert network == os.readlink("/proc/self/ns/net")
    assert "--proxy-server=http://proxy.invalid:9" in command and "--proxy-bypass-list=<-loopback>" in command


def test_the_site_s_own_browser_keeps_its_loopback_access(tmp_path):
    (tmp_path / "index.html").write_text("<p id='p'>served</p>", encoding="utf-8")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        site_browser = browser.launch_chromium(shared_playwright())
        try:
            page = site_browser.new_page()
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
            assert page.inner_text("#p") == "served"
        finally:
            site_browser.close()
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def no_namespaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A machine where namespaces are forbidden (a container without the privilege): its unshare fails."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "unshare").write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
    (fake / "unshare").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(browser, "_candidates", None)
    yield
    browser._candidates = None  # probe the real machine again for the tests that follow


def test_without_namespaces_pages_render_on_the_flag_layer_and_the_render_says_why(no_namespaces, tmp_path):
    with PageRenderer() as fallback:
        result = fallback.render_states(make_page(tmp_path, ""), [], screenshots=False, settle_ms=0)
    assert result.load_error is None
    assert result.isolation.startswith("no network namespace (flags only), no Chromium sandbox")
    assert "Operation not permitted" in result.isolation


def test_a_browser_required_to_have_a_network_namespace_refuses_to_start_without_one(
        no_namespaces, tmp_path, monkeypatch):
    monkeypatch.setattr(browser, "_policy", replace(browser.evaluation_policy(), require_network_namespace=True))
    with PageRenderer() as strict, pytest.raises(browser.IsolationUnavailable, match="needs its own network namespace"):
        strict.render_states(make_page(tmp_path, ""), [], screenshots=False, settle_ms=0)


def _production_policy(**extra: str) -> dict[str, object]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "DATABASE_URL")}
    env = {**keep, "DJANGO_SETTINGS_MODULE": "config.settings.base", "MAGEBENCH_ENV": "production",
           "DJANGO_SECRET_KEY": "s" * 20 + "-a-production-secret-long-enough-for-the-checks-7c1e",
           "FIELD_ENCRYPTION_KEY": "A" * 43 + "=", "DJANGO_ALLOWED_HOSTS": "example.org",
           # Production sits behind a reverse proxy, and refuses to start without its count.
           "MAGEBENCH_NUM_PROXIES": "1", **extra}
    script = ("import dataclasses, json, django; django.setup();"
              "from evaluators.browser import evaluation_policy;"
              "print(json.dumps(dataclasses.asdict(evaluation_policy())))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_production_requires_the_network_namespace_unless_the_setting_waives_it():
    waiver = "set MAGEBENCH_WEBUI_REQUIRE_NETWORK_NAMESPACE=false"
    assert _production_policy() == {"page_memory_mb": 1024, "page_cpu_seconds": 30.0,
                                    "require_network_namespace": True, "waiver": waiver}
    assert _production_policy(MAGEBENCH_WEBUI_REQUIRE_NETWORK_NAMESPACE="false", MAGEBENCH_WEBUI_PAGE_MEMORY_MB="512",
                              MAGEBENCH_WEBUI_PAGE_CPU_SECONDS="10") == {
        "page_memory_mb": 512, "page_cpu_seconds": 10.0, "require_network_namespace": False, "waiver": waiver}


# --- memory and CPU --------------------------------------------------------------------------

ALLOCATE_2_5_GB = ("<script>const kept = []; for (let i = 0; i < 40; i++) { const a = new Uint8Array(64 << 20); "
                   "a.fill(1); kept.push(a); } const shown = document.getElementById('status'); "
                   "if (shown) shown.textContent = 'allocated';</script>")


@pytest.fixture(scope="module")
def capped() -> Iterator[PageRenderer]:
    with PageRenderer(action_timeout=12.0, load_timeout=10.0, kill_grace=2.0, page_memory_mb=384,
                      page_cpu_seconds=2.0) as shared:
        yield shared


def test_a_page_past_its_memory_limit_is_stopped_as_a_render_error_and_the_next_page_renders(capped, tmp_path):
    result = render(capped, make_page(tmp_path / "greedy", ALLOCATE_2_5_GB))
    assert result.resource_error is not None and "exceeded its 384 MB memory limit" in result.resource_error
    assert result.load_error == result.resource_error
    following = render(capped, make_page(tmp_path / "next", ""))
    assert following.load_error is None and status(following) == "started"


def test_a_worker_burning_cpu_past_the_limit_is_stopped_as_a_render_error_and_the_next_page_renders(
        capped, tmp_path):
    page_dir = make_page(tmp_path / "busy", worker("postMessage('spinning'); for (;;) {}"))
    result = render(capped, page_dir, status_becomes("spinning"), status_becomes("never"))
    assert result.resource_error == "the page exceeded its 2 s CPU time limit and was stopped"
    assert result.load_error == result.resource_error
    following = render(capped, make_page(tmp_path / "next", ""))
    assert following.load_error is None and status(following) == "started"


class _Reply:
    def __init__(self, reply: str) -> None:
        self.reply = reply

    def complete(self, messages: object, **_: object) -> Completion:
        return Completion(text=self.reply, prompt_tokens=None, completion_tokens=None, latency=0.0, attempts=1,
                          finish_reason="stop")


def test_an_attempt_whose_page_allocates_2_5_gb_records_a_render_error_not_a_score(tmp_path):
    page = ROOT / "fixtures" / "magebench" / "resources" / "WebUI" / "step-counter"
    files = page_files(page, degrade=False)
    files["html"] = files["html"].replace("</body>", ALLOCATE_2_5_GB + "</body>")
    reply = "\n\n".join(f"```{kind}\n{code}\n```" for kind, code in files.items())
    settings = effective_settings("webui", "global", {"parse_retries": 0, "resolution": 640})
    result = run_attempt(scenario=ScenarioSpec(env="webui", key="step-counter", data={"page": "step-counter"},
                                               resource_path=page),
                         flow="global", settings=settings, model=_Reply(reply), out_dir=tmp_path / "out")
    details = result.details
    assert details["outcome"] == "render_error" and result.score == 0.0
    assert "exceeded its 1024 MB memory limit" in details["resource_error"]
    assert details["load_error"] == details["resource_error"]
    assert details["breakdown"]["render"] > 0 and details["breakdown"]["aes"] == 0.0
    assert details["browser_isolation"]
