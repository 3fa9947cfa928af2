"""GNU Go over GTP (the Go Text Protocol): White's moves, one engine process per episode.

The engine comes from Debian's ``gnugo`` package (``install/system-packages.txt``), which puts it in
``/usr/games``, outside many PATHs. Its choices are fixed by its level and seed, so an episode
replayed with the same moves meets the same answers.
"""
from __future__ import annotations

import contextlib
import shutil
import subprocess
from pathlib import Path

#: Where Debian's package installs it, looked at when it is not on PATH.
DEBIAN_PATH = Path("/usr/games/gnugo")


class EngineUnavailable(RuntimeError):
    """GNU Go is not installed, or stopped answering."""


def engine_path() -> str:
    found = shutil.which("gnugo") or (str(DEBIAN_PATH) if DEBIAN_PATH.is_file() else None)
    if found is None:
        raise EngineUnavailable("GNU Go is not installed: scripts/setup installs the gnugo package "
                                "that this environment's install/system-packages.txt declares")
    return found


class GnuGo:
    def __init__(self, *, size: int, komi: float, level: int, seed: int) -> None:
        self._process = subprocess.Popen(
            [engine_path(), "--mode", "gtp", "--level", str(level), "--seed", str(seed)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in (f"boardsize {size}", "clear_board", f"komi {komi}"):
            ok, answer = self.command(line)
            if not ok:
                raise EngineUnavailable(f"GNU Go refused {line!r}: {answer}")

    def command(self, line: str) -> tuple[bool, str]:
        """Send one command; (accepted, the answer's text). GTP ends every answer with a blank line."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(line + "\n")
            stdin.flush()
        except BrokenPipeError:
            raise EngineUnavailable("GNU Go exited") from None
        lines: list[str] = []
        while True:
            read = stdout.readline()
            if not read:
                raise EngineUnavailable(f"GNU Go exited while answering {line!r}")
            if read.strip() == "" and lines:
                break
            if read.strip():
                lines.append(read.rstrip("\n"))
        head, rest = lines[0], lines[1:]
        return head.startswith("="), "\n".join([head[1:].strip(), *rest]).strip()

    def play(self, colour: str, point: str) -> bool:
        """Whether the move was legal (and so played)."""
        return self.command(f"play {colour} {point}")[0]

    def genmove(self, colour: str) -> str:
        """The engine's move for ``colour``: a point, "pass" or "resign" (it is played)."""
        ok, answer = self.command(f"genmove {colour}")
        if not ok:
            raise EngineUnavailable(f"GNU Go could not move: {answer}")
        return answer.lower() if answer.lower() in ("pass", "resign") else answer.upper()

    def stones(self, colour: str) -> list[str]:
        return self.command(f"list_stones {colour}")[1].split()

    def close(self) -> None:
        if self._process.poll() is None:
            with contextlib.suppress(EngineUnavailable):  # already gone: nothing to ask it to quit
                self.command("quit")
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
