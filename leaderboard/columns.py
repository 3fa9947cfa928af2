"""The column dictionary: every column of a board's export (one row per entry) and of the per-attempt
export (one row per attempt), with its type, what it means and its unit.

One definition read by everything that describes the data: the dataset card of each snapshot
(``leaderboard.dataset_card``), the columns page (``/data/columns/``), the API schema (the board's
rows and the export endpoints, ``leaderboard.column_schema``) and the snapshot's typed Parquet. A test
compares it with the real exports' headers, so that a column added or removed there fails until it
is described here.

Types are Parquet's, as pandas and ``datasets`` read them: "string", "int64" (nullable), "float64",
"bool", "timestamp" (UTC, microseconds) and "list<string>". The per-attempt types are the exporter's
own (``submissions.exports.COLUMNS``); the board's are declared here, where its Parquet is written.
"""
from __future__ import annotations

from dataclasses import dataclass

from evaluators.base import EnvironmentPlugin, all_plugins
from submissions.exports import COLUMNS as ATTEMPT_EXPORT_COLUMNS

TYPES = ("string", "int64", "float64", "bool", "timestamp", "list<string>")
#: A score's unit: each environment's own scale, which the dataset card and the columns page list.
SCORE = "score (the environment's scale)"
#: Where a board's lost-score columns come from: one per part the environment breaks its score into.
LOST_PREFIX, LOST_SUFFIX = "lost_", "_pct"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    meaning: str
    unit: str = ""
    #: Only on the boards of environments whose plug-in declares it (``""``: on every board).
    only_for: str = ""

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"a column's type is one of {', '.join(TYPES)}, not {self.type!r}")

    @property
    def nullable(self) -> bool:
        return self.type not in ("bool", "list<string>")


def _board(name: str, kind: str, meaning: str, unit: str = "") -> Column:
    return Column(name=name, type=kind, meaning=meaning, unit=unit)


#: A board's columns, in the export's order; the lost-score parts go where ``LOST_AFTER`` says.
BOARD_COLUMNS: tuple[Column, ...] = (
    _board("rank", "int64", "Rank among the ranked entries (equal means share a rank); empty for baselines, reported "
                            "results, variants, private and incomplete entries, which are shown but not ranked.",
           "rank (1 = best)"),
    _board("rank95_low", "int64", "Best rank the entry reaches in 95% of bootstrap resamples of the board's scenarios.",
           "rank"),
    _board("rank95_high", "int64", "Worst rank the entry reaches in 95% of bootstrap resamples of the scenarios.",
           "rank"),
    _board("submission", "int64", "The submission's id on the platform (its page: /submissions/<id>/); empty for a "
                                  "result reported in a publication, which the platform did not run."),
    _board("model", "string", "The model's name as its team registered it (or as the publication names it)."),
    _board("team", "string", "The team that submitted the entry."),
    _board("organisation", "string", "The organisation that made the model, as its team states it."),
    _board("parameter_count", "int64", "The model's parameter count, as its team states it; empty when not given.",
           "parameters"),
    _board("open_weights", "bool", "Whether the model's weights are published, as its team states it."),
    _board("baseline", "bool", "A baseline agent the platform runs itself (idle, random, oracle, …): never ranked."),
    _board("status", "string", "The submission's status: completed, incomplete (some attempts failed for good), or "
                               "reported for a published number."),
    _board("mean", "float64", "Mean score over scenarios: each scenario's mean over its repeats, then the mean of "
                              "those.", SCORE),
    _board("se", "float64", "Standard error of the mean over the per-scenario means.", SCORE),
    _board("ci95_low", "float64", "Lower end of the mean's 95% confidence interval (bootstrap over scenarios).", SCORE),
    _board("ci95_high", "float64", "Upper end of the mean's 95% confidence interval.", SCORE),
    _board("standing", "string", "\"leader\" for the top ranked entry, \"tied\" for an entry a paired t-test on the "
                                 "scenarios both ran cannot separate from it (p ≥ 0.05), otherwise empty."),
    _board("tie_p_value", "float64", "The p-value of that paired t-test against the leader; empty for the leader and "
                                     "for entries not tested.", "probability"),
    _board("scenarios", "int64", "Scenarios with at least one scored attempt.", "scenarios"),
    _board("scored_attempts", "int64", "Attempts that ended with a score.", "attempts"),
    _board("attempts", "int64", "Attempts the entry has (scenarios × repeats).", "attempts"),
    _board("infra_failed_attempts", "int64", "Attempts that failed for good on an infrastructure error (endpoint, "
                                             "network, worker), not scored.", "attempts"),
    _board("ia_pct", "float64", "IA: share of scored attempts with an invalid action (the metric card defines it per "
                                "environment); empty where the environment has no action diagnostics.",
           "% of attempts"),
    _board("ra_pct", "float64", "RA: share of scored attempts that repeat actions without progress.", "% of attempts"),
    _board("incomplete", "bool", "Whether some attempts were not scored (the mean is over fewer attempts)."),
    _board("prompt_version", "string", "The version of the prompt set the entry ran with (entries of different "
                                       "prompt sets are never ranked together)."),
    _board("verified", "bool", "Whether the platform's operators verified the entry."),
    _board("private", "bool", "Seen by its own team only; always false in a public snapshot."),
    _board("rescoring", "string", "For an uploaded run: \"re-scored\" (its replies replayed exactly) or "
                                  "\"re-simulated\" (played again on a stochastic engine); otherwise empty."),
    _board("reported", "bool", "A number reported in a publication, not evaluated by the platform."),
    _board("source", "string", "Where a reported number comes from (publication and table); empty otherwise."),
    _board("reported_repeats", "int64", "Repeats per scenario the publication states for a reported number.",
           "repeats"),
    _board("reported_uncertainty", "float64", "The ± the publication gives for a reported score (e.g. the spread "
                                              "between repeats).", SCORE),
    _board("note", "string", "A caveat on the entry (e.g. how a reported number was obtained)."),
    _board("variant", "list<string>", "The non-official settings that make the entry a labelled variant of the "
                                      "protocol (shown, never ranked); empty for the official protocol."),
    _board("complete", "bool", "Whether the entry's scored scenarios cover all of the board's (only complete entries "
                               "are ranked by default)."),
    _board("submitted_at", "timestamp", "When the entry was submitted; empty for reported numbers.", "UTC"),
    _board("measured_attempts", "int64", "Scored attempts whose effort (calls, time) was measured: an upload's "
                                         "replies are played back, so its effort is not the model's.", "attempts"),
    _board("token_attempts", "int64", "Measured attempts whose endpoint reported token counts.", "attempts"),
    _board("model_calls_per_scenario", "float64", "Model calls for one run of a scenario, averaged over scenarios.",
           "calls"),
    _board("prompt_tokens_per_scenario", "float64", "Prompt tokens for one run of a scenario, averaged over "
                                                    "scenarios.", "tokens"),
    _board("completion_tokens_per_scenario", "float64", "Completion tokens for one run of a scenario, averaged over "
                                                        "scenarios.", "tokens"),
    _board("tokens_per_scenario", "float64", "Prompt plus completion tokens for one run of a scenario.", "tokens"),
    _board("seconds_per_scenario", "float64", "Wall time of one run of a scenario, averaged over scenarios.",
           "seconds"),
    _board("prompt_tokens_total", "int64", "Prompt tokens over every measured attempt.", "tokens"),
    _board("completion_tokens_total", "int64", "Completion tokens over every measured attempt.", "tokens"),
    _board("price_input_per_mtok", "float64", "The model's price per million prompt tokens, as its team gives it.",
           "USD per million tokens"),
    _board("price_output_per_mtok", "float64", "The model's price per million completion tokens.",
           "USD per million tokens"),
    _board("cost_per_scenario_usd", "float64", "One run of a scenario at the model's prices (measured tokens × "
                                               "prices); empty without prices or tokens.", "USD"),
)
#: The lost-score columns come right after this one, in the plug-in's order.
LOST_AFTER = "submitted_at"


def lost_columns(plugin: EnvironmentPlugin) -> tuple[Column, ...]:
    """The columns of the parts an environment breaks its lost score into (none for most)."""
    return tuple(Column(name=f"{LOST_PREFIX}{part.key}{LOST_SUFFIX}", type="float64",
                        meaning=f"Mean score lost to {part.label}, in % of the maximum score.",
                        unit="% of the maximum score", only_for=plugin.slug)
                 for part in plugin.breakdown_parts)


def board_columns(plugin: EnvironmentPlugin | None = None) -> tuple[Column, ...]:
    """A board's columns in order: with ``plugin``, those of its environment's boards; without, the
    columns of every environment's boards (each lost-score part once, for the schema and the page)."""
    plugins = [plugin] if plugin is not None else all_plugins()
    lost = {column.name: column for found in plugins for column in lost_columns(found)}
    at = next(index for index, column in enumerate(BOARD_COLUMNS) if column.name == LOST_AFTER) + 1
    return (*BOARD_COLUMNS[:at], *lost.values(), *BOARD_COLUMNS[at:])


_ATTEMPT_MEANINGS: dict[str, tuple[str, str]] = {
    "submission": ("The submission's id (its page: /submissions/<id>/).", ""),
    "model": ("The model's name.", ""),
    "team": ("The team that submitted it.", ""),
    "env": ("The environment (its slug).", ""),
    "flow": ("The agent flow: global (plan every action from the first observation) or online (one decision per "
             "observation).", ""),
    "subset": ("The scenario set: mini or full.", ""),
    "suite": ("The scenario suite: official (MageBench's own resources) or another imported one.", ""),
    "scenario": ("The scenario's key within its suite.", ""),
    "repeat": ("The repeat's number, from 0.", "repeat"),
    "status": ("The attempt's status: scored, infra_failed (an infrastructure error ended it for good), cancelled, "
               "or pending/running/retrying while its submission runs.", ""),
    "score": ("The attempt's score; empty when not scored.", SCORE),
    "outcome": ("How the episode ended, in the environment's words (e.g. solved, max steps).", ""),
    "error_kind": ("The kind of the last infrastructure error (timeout, http_5xx, …); empty when none.", ""),
    "error_message": ("That error's message, with the team's endpoint struck out.", ""),
    "invalid_action": ("IA: the attempt had an invalid action (the metric card defines it per environment).", ""),
    "repeating_action": ("RA: the attempt repeated actions without progress.", ""),
    "invalid_replies": ("Replies with no valid action (what IA counts).", "replies"),
    "invalid_decisions": ("Decisions whose every reply was invalid.", "decisions"),
    "repetitive_replies": ("Replies repeating an earlier sequence of actions (what RA counts).", "replies"),
    "longest_noop_streak": ("The longest run of decisions that changed nothing.", "decisions"),
    "ia_ra_reasons": ("Why IA or RA was set, one reason after another (\"; \" between them).", ""),
    "parse_errors": ("Replies the parser could not read.", "replies"),
    "steps": ("Environment steps the episode took.", "steps"),
    "model_calls": ("Calls to the model.", "calls"),
    "tries": ("Times the attempt was run (1 unless infrastructure errors made it retry).", "tries"),
    "measured": ("Whether calls, tokens and time are the model's own: false for an upload, whose replies were "
                 "played back.", ""),
    "prompt_tokens": ("Prompt tokens over the attempt's calls, as the endpoint reported them; empty if not "
                      "measured.", "tokens"),
    "completion_tokens": ("Completion tokens over the attempt's calls.", "tokens"),
    "cost_usd": ("The attempt's tokens at the model's prices; empty without prices or tokens.", "USD"),
    "seconds": ("Wall time of the attempt; empty if not measured.", "seconds"),
    "seconds_per_call": ("Wall time per model call.", "seconds"),
    "started_at": ("When the attempt started.", "UTC"),
    "finished_at": ("When the attempt ended.", "UTC"),
    "trajectory": ("The attempt's folder in the trajectories zip of the per-attempt export (trajectory.json with "
                   "replies, parsed actions and per-step scores, and its trace); empty when none was kept.", ""),
}

#: The per-attempt export's columns, in its order, typed as the exporter writes them.
ATTEMPT_COLUMNS: tuple[Column, ...] = tuple(
    Column(name=name, type=kind, meaning=_ATTEMPT_MEANINGS[name][0], unit=_ATTEMPT_MEANINGS[name][1])
    for name, kind in ATTEMPT_EXPORT_COLUMNS if name in _ATTEMPT_MEANINGS)
#: Exported columns this dictionary does not describe (the test of the dictionary asserts there are none).
UNDESCRIBED_ATTEMPT_COLUMNS = tuple(name for name, _ in ATTEMPT_EXPORT_COLUMNS if name not in _ATTEMPT_MEANINGS)
#: Described columns the exporter no longer writes.
STALE_ATTEMPT_MEANINGS = tuple(sorted(set(_ATTEMPT_MEANINGS) - {name for name, _ in ATTEMPT_EXPORT_COLUMNS}))
