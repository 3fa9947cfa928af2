"""Launching Debian's Chromium through Playwright (never a downloaded browser build)."""
from __future__ import annotations

import os
from typing import Any

CHROMIUM_PATH = os.environ.get("MAGEBENCH_CHROMIUM", "/usr/bin/chromium")

# Without these, Chromium keeps trying to reach Google services, which a closed network refuses
# many times a second; --no-sandbox because workers and CI run as root.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--metrics-recording-only",
]


def launch_chromium(playwright: Any, **options: Any) -> Any:
    if not os.path.exists(CHROMIUM_PATH):
        raise RuntimeError(f"Chromium not found at {CHROMIUM_PATH}; run scripts/setup (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS, headless=True, **options)
