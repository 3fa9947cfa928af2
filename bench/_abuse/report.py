"""The abuse bench's report: printed as it is measured, and kept to be written out at the end."""
from __future__ import annotations


class Report:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        print(text, flush=True)
        self.lines.append(text)

    def blank(self) -> None:
        self.line("")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
