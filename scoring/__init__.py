"""The platform's scoring maths, as plain Python beside ``evaluators``: statistics over scenarios and
repeats, what runs cost, and how scenario names are ordered. Nothing here imports Django; the
submissions and the boards both read it."""
