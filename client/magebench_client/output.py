"""What the client shows a person: times, the progress line and the summaries of teams, checks and
submissions. Text in, text out (``StatusLine`` alone writes, to the stream it is given)."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TextIO

BAR_WIDTH = 20


# Times -------------------------------------------------------------------------------------------

def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time from the API (``…Z`` or with an offset), as an aware datetime."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def span_text(seconds: float) -> str:
    minutes = round(abs(seconds) / 60)
    if minutes < 90:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    return f"{round(minutes / (24 * 60))} days"


def time_text(text: str | None, now: datetime | None = None) -> str:
    """An API time as a person reads it: "2026-11-24 11:32 UTC (3 min ago)" or "(in 2 h 05 min)"."""
    moment = parse_time(text or "")
    if moment is None:
        return text or ""
    seconds = (moment - (now or datetime.now(UTC))).total_seconds()
    if abs(seconds) < 60:
        relative = "just now" if seconds <= 0 else "in under a minute"
    else:
        relative = f"in {span_text(seconds)}" if seconds > 0 else f"{span_text(seconds)} ago"
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC ({relative})"


# Progress ----------------------------------------------------------------------------------------

def progress_bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    # Rounded down, so the bar is only full once every attempt is done.
    filled = width * done // total if total else 0
    return "[" + "#" * filled + "." * (width - filled) + "]"


def duration_text(seconds: float) -> str:
    """A time left as the site's queue and submission pages write it: "40 s", "12 min", "2 h 05 min"."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{round(seconds)} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 90 else f"{minutes // 60} h {minutes % 60:02d} min"


def eta_text(seconds: float, lower_bound: bool, basis: str = "") -> str:
    """The server's estimate of the time left, never one of the client's own making."""
    # A lower bound: work queued ahead has no observed time yet, so the true wait may be much longer.
    text = f"{'at least' if lower_bound else 'about'} {duration_text(seconds)} left"
    return f"{text} (per-attempt time from {basis})" if basis else text


def eta_part(progress: dict[str, Any]) -> str:
    """What the server says of the time left: its estimate, why it has none, or nothing."""
    if progress.get("eta_seconds") is not None:
        return eta_text(float(progress["eta_seconds"]), bool(progress.get("eta_is_lower_bound")),
                        str(progress.get("eta_basis") or ""))
    if progress.get("eta_missing"):
        return f"time left unknown ({progress['eta_missing']})"
    return ""


def progress_line(progress: dict[str, Any]) -> str:
    done, total = int(progress.get("done") or 0), int(progress.get("total") or 0)
    # Every state is named, so the counts add up to the total.
    counts = (f"{progress_bar(done, total)} {done}/{total} scored {progress.get('scored', 0)} running "
              f"{progress.get('running', 0)} retrying {progress.get('retrying', 0)} failed "
              f"{progress.get('infra_failed', 0)} waiting {progress.get('pending', 0)}")
    if progress.get("cancelled"):
        counts += f" cancelled {progress['cancelled']}"
    parts = [counts]
    if progress.get("queue_position") is not None:
        parts.append(f"position {progress['queue_position']}")
    eta = eta_part(progress)
    if eta:
        parts.append(eta)
    return " · ".join(parts)


class StatusLine:
    """One line of progress: redrawn in place on a terminal; elsewhere (logs, CI) a new line per change."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.shown = ""

    def draw(self, text: str) -> None:
        if text == self.shown:
            return
        # Padding wipes the tail of a longer previous line without relying on terminal escape codes.
        self.stream.write("\r" + text.ljust(len(self.shown)) if self.tty else text + "\n")
        self.stream.flush()
        self.shown = text

    def note(self, text: str) -> None:
        """A message on a line of its own, above the progress line."""
        if self.tty and self.shown:
            self.stream.write("\r" + text.ljust(len(self.shown)) + "\n" + self.shown)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()


# Summaries ---------------------------------------------------------------------------------------

def team_line(team: dict[str, Any]) -> str:
    return quota_text(f"{team['name']} ({team['slug']}), {team['role']}", team.get("quota") or {})


def quota_text(whose: str, q: dict[str, Any]) -> str:
    text = (f"{whose}: {q.get('per_day_left')} of {q.get('per_day_limit')} "
            f"submissions left today, {q.get('total_left')} of {q.get('total_limit')} in total, "
            f"{q.get('concurrent_left')} of {q.get('concurrent_limit')} at once")
    if q.get("per_day_resets_at"):
        text += f"; the next daily one frees up at {time_text(q['per_day_resets_at'])}"
    return text


def check_lines(result: dict[str, Any]) -> list[str]:
    lines = [f"valid: {result.get('runs')} run(s) of {result.get('scenarios')} scenario(s), "
             f"up to {result.get('repeats')} repeat(s), suite {result.get('suite')}"]
    missing = result.get("missing_scenarios") or []
    if missing:
        lines.append(f"{len(missing)} scenario(s) of the subset have no run (the entry would be incomplete): "
                     + ", ".join(map(str, missing)))
    return lines


def status_lines(s: dict[str, Any]) -> list[str]:
    progress = s.get("progress") or {}
    lines = [f"submission {s['id']}: {s.get('model')} ({s.get('team')}) on {s.get('env')}/{s.get('flow')}/"
             f"{s.get('subset')}, suite {s.get('suite')}, "
             f"{'uploaded' if s.get('source') == 'upload' else 'run on its endpoint'}",
             f"status: {s.get('status')}" + (f" ({s['status_reason']})" if s.get("status_reason") else ""),
             f"public: {'yes' if s.get('is_public') else 'no'} · verified: {'yes' if s.get('verified') else 'no'}",
             progress_line(progress)]
    if s.get("as_of"):
        # Every count and time here was read at this one moment.
        lines.append(f"as of {time_text(s['as_of'])}")
    times = [f"{label} {time_text(s[key])}" for label, key in (("created", "created_at"), ("started", "started_at"),
                                                                ("finished", "finished_at")) if s.get(key)]
    if times:
        lines.append(" · ".join(times))
    scores = [a["score"] for a in s.get("attempts") or [] if a.get("score") is not None]
    if scores:
        lines.append(f"mean score {sum(scores) / len(scores):.2f} over {len(scores)} scored attempt(s)")
    if progress.get("replies"):
        lines.append(f"replies: {progress.get('replies_cut', 0)} of {progress['replies']} cut at max_tokens, "
                     f"{progress.get('refusals', 0)} refused; platform waits "
                     f"{float(progress.get('platform_wait_seconds') or 0):.1f} s")
    if progress.get("last_error"):
        lines.append(f"last error: {progress['last_error']}")
    return lines


def size_text(size: int) -> str:
    """A file's size as a person reads it: "812 bytes", "3.4 MB"."""
    value = float(size)
    for unit in ("bytes", "kB", "MB"):
        if value < 1000:
            return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def board_columns(rows: list[dict[str, Any]]) -> list[str]:
    # Rows can carry different per-environment breakdown columns; keep every column, in first-seen order.
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns) or ["rank", "model", "mean", "se"]


# Endpoint test calls -----------------------------------------------------------------------------

def endpoint_check_lines(check: dict[str, Any]) -> list[str]:
    """A finished test call: what the endpoint answered and what the parser read in it, or why not."""
    result = check.get("result") or {}
    where = f"{check.get('env')} {check.get('flow')}"
    if result.get("scenario"):
        where += f", first request of {result['scenario']}"
    lines = [f"test call #{check.get('id')} of {check.get('endpoint_url')} ({where})"]
    reachable = result.get("reachable")
    lines.append(f"reachable: {'yes' if reachable else 'no' if reachable is False else 'unknown'}")
    if result.get("model"):
        model = f"model: {result['model']}"
        if result.get("listed_models"):
            model += f" (first of /models: {', '.join(result['listed_models'])})"
        if result.get("answer_model") and result["answer_model"] != result["model"]:
            model += f"; the answer names {result['answer_model']}"
        lines.append(model)
    error = result.get("error")
    if error:
        status = f" (HTTP {error['status']})" if error.get("status") is not None else ""
        lines.append(f"error: {error.get('kind')}{status}: {error.get('message')}")
        if result.get("fix"):
            lines.append(f"fix: --setting {result['fix']}")
        return lines
    if result.get("latency_seconds") is not None:
        lines.append(f"latency: {result['latency_seconds']:.2f} s")
    tokens = [f"{result[name]} {label}" for name, label in (("prompt_tokens", "prompt"),
                                                           ("completion_tokens", "completion"))
              if result.get(name) is not None]
    lines.append(f"tokens: {', '.join(tokens) if tokens else 'not reported'}")
    lines.append(f"finish reason: {result.get('finish_reason') or 'not given'}")
    if result.get("refusal"):
        lines.append(f"refusal: {result['refusal']}")
    reply = result.get("reply") or ""
    lines.append("reply" + (" (cut at 4,000 characters):" if result.get("reply_truncated") else ":")
                 if reply else "reply: (empty)")
    lines.extend(f"  {line}" for line in reply.splitlines())
    actions = result.get("actions") or []
    if result.get("parse_error"):
        lines.append(f"parse error: {result['parse_error']}")
    if actions:
        lines.append(f"parsed: {len(actions)} action(s): {' '.join(actions)}")
    lines.append("ok: the reply parsed into valid actions" if result.get("ok")
                 else "not ok: the reply gave no valid action")
    return lines
