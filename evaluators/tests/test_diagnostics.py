from evaluators.agents.diagnostics import (RA_MAX_ACTION_RUN, RA_MAX_NOOP_DECISIONS, RA_MIN_TAIL_REPEATS,
                                           DiagnosticsTracker, longest_run, reply_is_repetitive, tail_repeats)


def test_longest_run_counts_identical_neighbours():
    assert longest_run([]) == 0
    assert longest_run(["Up"]) == 1
    assert longest_run(["Up", "Up", "Left", "Left", "Left", "Up"]) == 3


def test_tail_repeats_finds_the_repeated_final_ngram():
    assert tail_repeats("") == 0
    assert tail_repeats("move the box") == 1
    assert tail_repeats("so I go " + "left and up " * 5) == 5
    assert tail_repeats("a b a b a b c") == 1


def test_it_flags_a_reply_that_repeats_one_action_past_the_threshold():
    tokens = ["Up"] * RA_MAX_ACTION_RUN
    assert reply_is_repetitive(", ".join(tokens), tokens)
    shorter = ["Up"] * (RA_MAX_ACTION_RUN - 1) + ["Left"]
    assert not reply_is_repetitive(", ".join(shorter), shorter)


def test_it_flags_a_reply_that_degenerates_into_a_repeated_phrase():
    reply = "### Analyze\n" + "I need to think. " * RA_MIN_TAIL_REPEATS
    assert reply_is_repetitive(reply, [])
    assert not reply_is_repetitive("### Analyze\n" + "I need to think. " * (RA_MIN_TAIL_REPEATS - 1), [])


def test_an_attempt_with_a_failed_decision_has_an_invalid_action():
    tracker = DiagnosticsTracker()
    tracker.observe_reply("nothing", [], [], parse_ok=False)
    assert tracker.parse_errors == 1 and not tracker.invalid_action
    tracker.observe_failed_decision()
    assert tracker.invalid_action and not tracker.repeating_action


def test_foreign_tokens_make_an_invalid_action_even_when_the_reply_parsed():
    tracker = DiagnosticsTracker()
    tracker.observe_reply("Up, Jump", ["Up", "Jump"], ["Jump"], parse_ok=True)
    assert tracker.invalid_action and tracker.parse_errors == 0


def test_repeated_no_effect_decisions_make_a_repeating_action():
    tracker = DiagnosticsTracker()
    for _ in range(RA_MAX_NOOP_DECISIONS - 1):
        tracker.observe_online_action("Up", changed_state=False)
    assert not tracker.repeating_action
    tracker.observe_online_action("Up", changed_state=False)
    assert tracker.repeating_action


def test_a_decision_that_changes_the_state_resets_the_no_effect_streak():
    tracker = DiagnosticsTracker()
    for _ in range(RA_MAX_NOOP_DECISIONS - 1):
        tracker.observe_online_action("Up", changed_state=False)
    tracker.observe_online_action("Up", changed_state=True)
    tracker.observe_online_action("Up", changed_state=False)
    tracker.observe_online_action("Left", changed_state=False)
    assert tracker.longest_noop_streak == RA_MAX_NOOP_DECISIONS - 1 and not tracker.repeating_action
