"""The check's settings, from the environment (all optional):

  MAGEBENCH_CHECK_HTTP_PORT / _HTTPS_PORT  the proxy's ports on 127.0.0.1 (18080, 18443)
  MAGEBENCH_CHECK_PORT             the previous release's web process on 127.0.0.1 (18000)
  MAGEBENCH_CHECK_AGENT_PORT       the oracle endpoint on each light worker's loopback (18101)
  MAGEBENCH_CHECK_IMAGES           standard | local | auto (auto: standard if the registry answers)
  MAGEBENCH_CHECK_CA               CA bundle given to pip in the image builds ("" for none)
  MAGEBENCH_CHECK_REBUILD_BASE=1   build the local base image again even if it exists
  MAGEBENCH_CHECK_TIMEOUT          seconds to wait for each submission (900)
  MAGEBENCH_CHECK_PREVIOUS         the release to upgrade from (a commit or tag; default: the newest
                                   v* tag, else docker/previous-release)
  MAGEBENCH_CHECK_KEEP=1           leave the stacks running at the end
  MAGEBENCH_CHECK_IMAGES_ONLY=1    build this release's images, start nothing
  DOCKER, COMPOSE                  the docker client and compose command
"""
from __future__ import annotations

import os
from dataclasses import dataclass


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


@dataclass(frozen=True)
class Settings:
    http_port: int = _int("MAGEBENCH_CHECK_HTTP_PORT", 18080)
    https_port: int = _int("MAGEBENCH_CHECK_HTTPS_PORT", 18443)
    previous_port: int = _int("MAGEBENCH_CHECK_PORT", 18000)
    agent_port: int = _int("MAGEBENCH_CHECK_AGENT_PORT", 18101)
    images: str = os.environ.get("MAGEBENCH_CHECK_IMAGES", "auto")
    rebuild_base: bool = os.environ.get("MAGEBENCH_CHECK_REBUILD_BASE") == "1"
    timeout: int = _int("MAGEBENCH_CHECK_TIMEOUT", 900)
    previous: str = os.environ.get("MAGEBENCH_CHECK_PREVIOUS", "")
    keep: bool = os.environ.get("MAGEBENCH_CHECK_KEEP") == "1"
    images_only: bool = os.environ.get("MAGEBENCH_CHECK_IMAGES_ONLY") == "1"
    project: str = "magebench-check"
    workers_project: str = "magebench-check-workers"
