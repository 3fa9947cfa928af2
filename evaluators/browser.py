"""Launching Debian's Chromium through Playwright (never a downloaded browser build).

Two browsers are launched here:

* :func:`launch_chromium`, for the site's own browser tests and benchmarks, which must reach a
  server on 127.0.0.1;
* :func:`launch_evaluation_chromium`, for model-written WebUI pages: untrusted code that must reach
  no network at all. Its layers, strongest first:

  1. an empty network namespace (``evaluators/isolated-chromium`` runs Chromium under
     ``unshare --net``): the browser's loopback is not the host's and there is no other interface,
     so no request, WebSocket, WebRTC packet or preconnect of any page or worker gets anywhere;
  2. a user namespace in which Chromium is not root, so that its own sandbox (namespaces and
     seccomp-BPF around every renderer) runs even when the worker is root;
  3. flags, in force with or without the namespaces: every connection goes to a proxy whose name
     never resolves (loopback included, no bypass), no name resolves at all, WebRTC may use no UDP
     outside that proxy, no DNS prefetching.

  Which layers were in force is returned as an :class:`Isolation`. Where a namespace cannot be
  made (no ``unshare``, no user namespaces, not root) the browser falls back to the layers that
  remain and logs why, unless the evaluation policy requires the network namespace (production):
  then the launch fails with :class:`IsolationUnavailable`.
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CHROMIUM_PATH = os.environ.get("MAGEBENCH_CHROMIUM", "/usr/bin/chromium")
ISOLATED_LAUNCHER = Path(__file__).resolve().parent / "isolated-chromium"

# Without these, Chromium keeps trying to reach Google services, which a closed network refuses
# many times a second.
_QUIET_ARGS = [
    "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--metrics-recording-only",
]
# --no-sandbox for the site's tests because workers and CI run as root.
CHROMIUM_ARGS = ["--no-sandbox", *_QUIET_ARGS]

#: The proxy every connection of the evaluation browser is sent to. ``.invalid`` never resolves
#: (and the resolver rules below resolve nothing), so a connection fails before any packet leaves;
#: Playwright adds ``--proxy-bypass-list=<-loopback>`` so that loopback goes to it as well.
DEAD_PROXY = {"server": "http://proxy.invalid:9"}

#: Flags of the evaluation browser that hold without the network namespace too.
NO_NETWORK_ARGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--dns-prefetch-disable",
    # WebRTC may only use the (dead) proxy: no STUN over UDP, TURN over TCP goes to the proxy.
    "--force-webrtc-ip-handling-policy",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
]
# --disable-features is deliberately absent: Chromium keeps only the last --disable-features it
# is given, and one here would replace Playwright's own list (PaintHolding, ...), which changes
# how pages paint. Playwright's list already turns off the predictors that preconnect on their own.

#: The unprivileged user Chromium is inside its user namespace when the worker is root.
_INNER_ID = 1000


@dataclass(frozen=True)
class EvaluationPolicy:
    """Limits and requirements of the browser that evaluates model pages (see config/settings)."""

    page_memory_mb: int = 1024
    page_cpu_seconds: float = 30.0
    #: Refuse to launch without the network namespace instead of falling back to flags alone.
    require_network_namespace: bool = False
    #: How the operator lifts that requirement, as the refusal's advice (the setting that sets it).
    waiver: str = "lift the policy's network namespace requirement"


_policy = EvaluationPolicy()


def evaluation_policy() -> EvaluationPolicy:
    return _policy


def set_evaluation_policy(policy: EvaluationPolicy) -> None:
    """Set the process-wide policy (the Django app does so from the settings when it starts)."""
    global _policy
    if policy.page_memory_mb <= 0 or policy.page_cpu_seconds <= 0:
        raise ValueError("the page memory and CPU limits must be positive")
    _policy = policy


@dataclass(frozen=True)
class Isolation:
    """Which isolation layers a launched evaluation browser has."""

    network_namespace: bool
    sandbox: bool
    #: Why a layer is missing ("" when none is).
    missing: str = ""

    def describe(self) -> str:
        network = "own network namespace" if self.network_namespace else "no network namespace (flags only)"
        sandbox = "Chromium sandbox" if self.sandbox else "no Chromium sandbox"
        return f"{network}, {sandbox}" + (f" ({self.missing})" if self.missing else "")


class IsolationUnavailable(RuntimeError):
    """The evaluation browser cannot get the isolation that the policy requires."""


def _check_installed() -> None:
    if not os.path.exists(CHROMIUM_PATH):
        raise RuntimeError(f"Chromium not found at {CHROMIUM_PATH}; run scripts/setup (apt-get install chromium)")


def launch_chromium(playwright: Any, **options: Any) -> Any:
    """A browser with the host's network, for the site's own pages (never for model pages)."""
    _check_installed()
    return playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS, headless=True, **options)


# ---------------------------------------------------------------------------------------------
# The evaluation browser


def _unshare_error(arguments: list[str]) -> str:
    """"" when ``unshare ARGUMENTS -- true`` works here, else why not."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    try:
        done = subprocess.run(["unshare", *arguments, "--", "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare failed: {exc}"
    if done.returncode != 0:
        return f"unshare {' '.join(arguments)}: {done.stderr.strip() or f'exit {done.returncode}'}"
    return ""


def _user_namespace_arguments() -> tuple[list[str], dict[str, str]]:
    inner_uid = os.getuid() or _INNER_ID
    inner_gid = os.getgid() or _INNER_ID
    arguments = ["--user", f"--map-user={inner_uid}", f"--map-group={inner_gid}", "--net"]
    return arguments, {"MAGEBENCH_ISOLATION_USERNS": "1", "MAGEBENCH_ISOLATION_UID": str(inner_uid),
                       "MAGEBENCH_ISOLATION_GID": str(inner_gid)}


@dataclass(frozen=True)
class _Candidate:
    isolation: Isolation
    #: Variables for evaluators/isolated-chromium; None: launch Chromium directly.
    launcher_env: dict[str, str] | None


_candidates: list[_Candidate] | None = None
_candidates_lock = threading.Lock()


def _find_candidates() -> list[_Candidate]:
    """The ways to launch that this machine allows, most isolated first (probed once per process)."""
    global _candidates
    with _candidates_lock:
        if _candidates is not None:
            return _candidates
        found: list[_Candidate] = []
        reasons: list[str] = []
        if not os.access(ISOLATED_LAUNCHER, os.X_OK):
            reasons.append(f"{ISOLATED_LAUNCHER} is not executable")
        else:
            arguments, variables = _user_namespace_arguments()
            error = _unshare_error(arguments)
            if not error:
                found.append(_Candidate(Isolation(network_namespace=True, sandbox=True), variables))
                # in case Chromium cannot nest its sandbox's namespaces in ours
                found.append(_Candidate(Isolation(network_namespace=True, sandbox=False), variables))
            else:
                reasons.append(error)
                if os.getuid() == 0:
                    error = _unshare_error(["--net"])
                    if not error:
                        # Chromium refuses its sandbox as root; without a user namespace it stays root.
                        found.append(_Candidate(Isolation(
                            network_namespace=True, sandbox=False,
                            missing=f"{reasons[-1]}; Chromium refuses its sandbox as root"),
                            {"MAGEBENCH_ISOLATION_USERNS": "0"}))
                    else:
                        reasons.append(error)
                else:
                    reasons.append("a network namespace alone needs root")
        found.append(_Candidate(Isolation(network_namespace=False, sandbox=False, missing="; ".join(reasons)), None))
        _candidates = found
        return found


def _give_up_on(candidate: _Candidate, why: str) -> None:
    """Drop a way of launching that failed; the next one carries the reason."""
    global _candidates
    with _candidates_lock:
        if not _candidates or _candidates[0] is not candidate or len(_candidates) == 1:
            return
        head, *rest = _candidates[1:]
        note = "; ".join(filter(None, [why, head.isolation.missing]))
        _candidates = [replace(head, isolation=replace(head.isolation, missing=note)), *rest]


def network_namespace_available() -> bool:
    """Whether evaluation browsers here can get a network namespace (as far as probing tells)."""
    return _find_candidates()[0].isolation.network_namespace


def launch_evaluation_chromium(playwright: Any, *, env: dict[str, str] | None = None,
                               js_heap_mb: int | None = None, network_namespace: bool = True,
                               **options: Any) -> tuple[Any, Isolation]:
    """A browser for untrusted pages, with no network, and which isolation it got (see the module
    docstring). ``js_heap_mb`` caps V8's heap in every renderer. ``network_namespace=False``
    launches with the flag layer alone, what a machine without namespaces gets (to check that
    layer on its own); the policy's requirement still applies."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    _check_installed()
    policy = evaluation_policy()
    base_env = dict(os.environ if env is None else env)
    extra = [f"--js-flags=--max-old-space-size={int(js_heap_mb)}"] if js_heap_mb else []
    while True:
        candidate = _find_candidates()[0] if network_namespace else _find_candidates()[-1]
        isolation = candidate.isolation
        if not network_namespace:
            isolation = replace(isolation, missing="the flag layer alone was asked for")
        if not isolation.network_namespace and policy.require_network_namespace:
            raise IsolationUnavailable(
                "the evaluation browser needs its own network namespace and cannot get one here "
                f"({isolation.missing}); {policy.waiver} to run with the flag layer alone")
        if candidate.launcher_env is None:
            executable, launch_env = CHROMIUM_PATH, base_env
        else:
            executable = str(ISOLATED_LAUNCHER)
            launch_env = {**base_env, **candidate.launcher_env, "MAGEBENCH_ISOLATION_CHROMIUM": CHROMIUM_PATH}
        args = [*_QUIET_ARGS, *NO_NETWORK_ARGS, *extra] + ([] if isolation.sandbox else ["--no-sandbox"])
        try:
            browser = playwright.chromium.launch(executable_path=executable, args=args, headless=True,
                                                 chromium_sandbox=isolation.sandbox, proxy=DEAD_PROXY,
                                                 env=launch_env, **options)
        except PlaywrightError as exc:
            # a slow start says nothing about the isolation; only a refusal to start moves down a layer
            if not network_namespace or len(_find_candidates()) == 1 or isinstance(exc, PlaywrightTimeoutError):
                raise
            why = f"launching with {isolation.describe()} failed: {str(exc).splitlines()[0][:300]}"
            log.warning("evaluation browser: %s; trying the next isolation", why)
            _give_up_on(candidate, why)
            continue
        if not (isolation.network_namespace and isolation.sandbox):
            log.warning("evaluation browser runs with %s", isolation.describe())
        return browser, isolation
