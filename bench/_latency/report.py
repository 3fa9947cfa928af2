"""The throughput report: time against its floors, resources, notes and deployment advice."""
from __future__ import annotations

import datetime as dt
import os
import platform
import socket
import time

import psutil

from bench._latency.runs import (
    CORES,
    ENDPOINT_LIMIT,
    ENGINE_SEED,
    LATENCY_SEED,
    MIB,
    MINI,
    RATIO_GOAL,
    REPEATS,
    SPEED_UP_GOAL,
    SUITE,
    WORKLOADS,
    Run,
    Workload,
)
from bench._latency.trees import PSS_EVERY, SAMPLE_EVERY
from bench._scale.report import num, table
from bench._scale.rounds import AGENT_FOR_ENV

STARTING_LOAD = os.getloadavg()


def against(value: float | None, goal: float, *, at_most: bool, digits: int = 2, suffix: str = "") -> str:
    if value is None:
        return "n/a"
    met = value <= goal if at_most else value >= goal
    return f"{value:.{digits}f}{suffix} (goal {'≤' if at_most else '≥'} {goal:g}{suffix}: {'met' if met else 'missed'})"


def speed_up(runs: list[Run], workload: Workload) -> float | None:
    by_mode = {run.mode: run for run in runs if run.workload == workload}
    new, today = by_mode.get("a"), by_mode.get("b")
    if new is None or today is None or not new.wall or not today.wall:
        return None
    return today.wall / new.wall


def speed_up_bound(runs: list[Run], workload: Workload) -> float | None:
    """The most any worker could gain over (b) here: no run ends before (a)'s CPU and latency floors
    or its longest attempt, so (b)'s wall over the largest of them is the ceiling of the speed-up (a
    workload whose one-attempt-per-process run already keeps the cores busy cannot gain 3×)."""
    by_mode = {run.mode: run for run in runs if run.workload == workload}
    new, today = by_mode.get("a"), by_mode.get("b")
    if new is None or today is None or not today.wall:
        return None
    bound = max(new.cpu_floor, new.latency_floor, new.longest_chain)
    return today.wall / bound if bound else None


def report_table(runs: list[Run]) -> list[str]:
    rows = []
    for run in runs:
        floors = {"CPU": run.cpu_floor, "latency": run.latency_floor}
        bound = max(floors, key=lambda name: floors[name])
        rows.append([
            f"{run.workload.name} ({run.mode})",
            f"{run.pool}",
            f"{run.attempts} ({run.scored})",
            f"{run.calls}",
            num(run.wall, 1) if run.finished else "unfinished",
            f"{run.cpu:.0f} / {CORES} = {run.cpu_floor:.1f}",
            f"{run.calls} × {run.latency:g} / {ENDPOINT_LIMIT} = {run.latency_floor:.1f}",
            f"{run.longest_calls} × ({run.latency:g} + {run.cpu_per_call:.2f}) = {run.longest_chain:.0f}",
            f"{num(run.longest_started, 0)} + {num(run.longest_took, 0)}",
            f"{against(run.ratio, RATIO_GOAL, at_most=True)} [{bound}]",
            num(run.ratio_with_longest),
            against(speed_up(runs, run.workload), SPEED_UP_GOAL, at_most=False, suffix="×") if run.mode == "a" else "",
            num(speed_up_bound(runs, run.workload), suffix="×") if run.mode == "a" else "",
        ])
    return table(["workload (worker)", "pool processes", "attempts (scored)", "model calls", "wall s",
                  "CPU floor s (tree CPU s / cores)", "latency floor s (calls × mean s / limit)",
                  "longest attempt's chain s: calls × (mean s + CPU s per call)",
                  "longest attempt: started s + took s",
                  "wall / max(floors) [larger floor]", "wall / max(floors, longest attempt)",
                  "speed-up (b)/(a)", "speed-up possible: (b) / max(floors, longest attempt) of (a)"], rows)


def report_resources(runs: list[Run]) -> list[str]:
    rows = []
    for run in runs:
        peak = run.peak
        others = (run.machine_busy - (run.cpu + run.bench_cpu) / CORES / run.wall
                  if run.machine_busy is not None and run.wall else None)
        rows.append([
            f"{run.workload.name} ({run.mode})",
            f"{run.idle_rss / MIB:.0f}",
            f"{peak.rss / MIB:.0f}" if peak else "n/a",
            f"{run.idle_pss / MIB:.0f} → {run.peak_pss / MIB:.0f}",
            f"{peak.processes}" if peak else "n/a",
            f"{run.most_browsers} ({run.most_chromium})",
            f"{run.most_engines}",
            f"{run.most_running}",
            f"{run.most_in_flight}",
            num(run.mean_duration, 1),
            f"{100 * run.cpu / CORES / run.wall:.0f} %" if run.wall else "n/a",
            f"{100 * run.saturated / run.wall:.0f} %" if run.wall else "n/a",
            f"{100 * run.at_limit / run.wall:.0f} %" if run.wall else "n/a",
            f"{100 * run.machine_busy:.0f} %" if run.machine_busy is not None else "n/a",
            f"{100 * others:.0f} %" if others is not None else "n/a",
            f"{run.bench_cpu:.0f}",
            f"{run.load_at_submit:.2f} → {run.load_at_end:.2f}",
        ])
    return table(["workload (worker)", "idle RSS MiB", "peak RSS MiB", "PSS MiB idle → peak",
                  "processes at peak",
                  "browsers (Chromium processes) at most", "Football engines at most",
                  "attempts running at most", "endpoint requests in flight at most", "mean s / attempt",
                  "tree CPU / (cores × wall)", "wall with the tree on ≥ 90 % of the cores",
                  f"wall with {ENDPOINT_LIMIT} attempts running (the endpoint limit)", "machine CPU busy",
                  "other processes' CPU", "bench process CPU s",
                  "load (1 min) submit → end"], rows)


def advice(runs: list[Run]) -> list[str]:
    """Processes per queue and memory per worker, sized from the (a) runs' measurements."""
    import math

    from submissions.worker_sizing import worker_sizing

    lines = []
    for workload in WORKLOADS:
        new = next((run for run in runs if run.workload == workload and run.mode == "a" and run.peak), None)
        if new is None or not new.attempts or not new.most_running or not new.calls or not new.cpu:
            continue
        sizing = worker_sizing([workload.queue])
        cpu_per_attempt = new.cpu / new.attempts
        calls_per_attempt = new.calls / new.attempts
        wait_per_attempt = calls_per_attempt * new.latency
        # A process is busy cpu / (cpu + wait) of its time: this many keep the cores busy.
        fill = math.ceil(CORES * (cpu_per_attempt + wait_per_attempt) / cpu_per_attempt)
        per_attempt = max(0.0, (new.peak_pss - new.idle_pss) / new.most_running) / MIB
        per_process = new.idle_pss / max(1, new.pool) / MIB + per_attempt
        head = (f"- `{workload.queue}` ({workload.env}): an attempt used {cpu_per_attempt:.1f} CPU s and waited "
                f"{wait_per_attempt:.0f} s on {calls_per_attempt:.0f} model call(s), so {fill} processes keep "
                f"{CORES} cores busy; a process holding an attempt takes about {per_process:.0f} MiB (PSS: "
                f"{per_attempt:.0f} MiB for the attempt; the plug-in declares {sizing.attempt_memory_mb}). ")
        if fill <= ENDPOINT_LIMIT:
            lines.append(head + f"The cores are the limit here: {fill} processes per {CORES} cores (`run_worker` "
                         f"gave {new.pool}), about {fill * per_process / 1024:.1f} GiB a worker; more "
                         "processes only wait for the CPU, more cores (or workers on other machines) help.")
        else:
            spare = new.pool - ENDPOINT_LIMIT
            lines.append(head + f"One submission keeps at most {ENDPOINT_LIMIT} processes busy (the endpoint "
                         f"limit), so give the queue {ENDPOINT_LIMIT} processes per submission expected to run at "
                         f"once, up to {fill}, where the cores become the limit: about "
                         f"{ENDPOINT_LIMIT * per_process / 1024:.1f} GiB per {ENDPOINT_LIMIT} processes. `run_worker` "
                         f"gave {new.pool}"
                         + (f"; with one submission its {spare} other processes only took messages and put them "
                            f"back ({new.quick_messages} of the {new.messages} messages here)." if spare > 0 else "."))
    if lines:
        lines.append("- Size against the cores a worker really gets: other work on the same cores (here other "
                     "jobs and PostgreSQL) stretches every CPU-bound attempt.")
    return lines


def report(runs: list[Run], started: float, wanted: list[Workload], command: str, data_note: str,
           latency: float) -> str:
    from submissions.worker_sizing import machine_memory_mb

    lines = [
        "# Throughput against slow models",
        "",
        f"- command: `{command}`",
        f"- run: {dt.datetime.now().isoformat(timespec='seconds')} on `{socket.gethostname()}`, "
        f"{CORES} cores ({psutil.cpu_count(logical=False)} physical), {machine_memory_mb() / 1024:.1f} GiB RAM, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}",
        "- load average (1/5/15 min) at start: " + ", ".join(f"{v:.2f}" for v in STARTING_LOAD)
        + "; at the end: " + ", ".join(f"{v:.2f}" for v in os.getloadavg())
        + " (other jobs share these cores)",
        f"- endpoints: `start_server(agent, latency=Latency({latency:g}, seed={LATENCY_SEED}))`, a fresh one "
        f"per run (lognormal, spread 0.5, no cap on requests at once); MAGEBENCH_ENDPOINT_CONCURRENCY="
        f"{ENDPOINT_LIMIT} in the workers' environment",
        f"- workloads, one submission of {REPEATS} repeats each, suite `{SUITE}`, subset mini, default settings: "
        + "; ".join(f"{w.name} on `{w.queue}` ({MINI[w.env]} scenarios, {AGENT_FOR_ENV[w.env]} baseline"
                    + (f", a generator per conversation, engine seed {ENGINE_SEED}" if w.env == "football" else "")
                    + ")" for w in wanted),
        f"- {data_note}",
        "- workers: " + "; ".join(f"({r.mode}) `{r.command}`" for r in runs),
        "",
        "## Time",
        "",
        "Wall: submission to the submission's `finished_at` (workers started and answering pings before). CPU "
        "floor: CPU seconds the worker's process tree used from submission to the end, over the cores. Latency "
        "floor: the endpoint's chat requests × the mean latency ÷ the endpoint limit (the same limit for both "
        "workers). The longest attempt's chain bounds the wall time too, whatever the workers and their "
        "order: its calls one after another, each a mean latency followed by the work its answer asks "
        "for (the run's CPU seconds per call, on a core of its own), as its next call waits for that "
        "work; `wall / max(floors, longest attempt)` divides by the largest of the three. When that "
        "attempt started at 0 s and the submission ended with it, the order added no wait.",
        "",
        *report_table(runs),
        "",
        "## Resources",
        "",
        f"Sampled every {SAMPLE_EVERY} s. RSS is summed over the worker's tree (pages shared between processes "
        "count once per process, so it is an upper bound); idle is before submission. PSS (proportional set "
        f"size: each shared page divided among its sharers) was read every {PSS_EVERY * SAMPLE_EVERY:g} s. "
        "Browsers are Chromium browser processes, in brackets every Chromium process (renderers, zygotes, "
        "utility); engines are pool processes that have loaded gfootball's engine. Attempts running at most: "
        "from the attempts' start and finish times. Machine CPU busy: every process on the machine over the "
        "run; other processes': that less the worker's tree and this bench's process (the endpoint and the "
        "sampling), i.e. other jobs and PostgreSQL. Each run started once the machine was less than the "
        "`--quiet` share busy over 5 s (or after `--settle` seconds of waiting).",
        "",
        *report_resources(runs),
        "",
        "## Notes",
        "",
    ]
    for run in runs:
        extra = []
        if run.not_scored:
            extra.append("not scored: " + ", ".join(f"{n} {kind}" for kind, n in run.not_scored.items()))
        if run.database_restarted:
            extra.append("PostgreSQL restarted during this run (another job's): the workers waited for it")
        if run.recorded_calls != run.calls:
            extra.append(f"attempts recorded {run.recorded_calls} model calls, the endpoint answered {run.calls}")
        lines.append(f"- {run.workload.name} ({run.mode}): mean score {num(run.mean_score, 1)}; the "
                     f"{run.calls} answers waited {run.drawn_latency:.0f} s in all (mean "
                     f"{run.drawn_latency / run.calls if run.calls else 0:.2f} s); machine {run.busy_before:.0f} % "
                     f"busy just before; the worker finished {run.messages} task messages, {run.quick_messages} of "
                     f"them in under 1 s (no attempt claimed); {run.samples} samples, {run.sampler_cpu:.1f} CPU s "
                     "of sampling"
                     + ("; " + "; ".join(extra) if extra else ""))
    for workload in wanted:
        pair = [run for run in runs if run.workload == workload]
        if len(pair) == 2:
            same = pair[0].episodes == pair[1].episodes
            lines.append(f"- {workload.name}: (a) and (b) played {'the same' if same else 'different'} episodes "
                         "(model calls per attempt, by scenario" + ("" if same else ": " + "; ".join(
                             f"{run.mode} {run.episodes}" for run in pair)) + ")")
    lines += ["", "## Deployment advice", "", *advice(runs), "",
              f"Total bench time: {time.perf_counter() - started:.0f} s."]
    return "\n".join(lines) + "\n"
