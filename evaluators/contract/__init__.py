"""The declaration groups an environment plug-in inherits, one module per part of the platform it meets.

:class:`evaluators.interface.EnvironmentPlugin` holds only what every plug-in must write (its names,
its default settings and the three abstract methods) and inherits one class from each module here;
each group's attributes and hooks have defaults that suit a light, deterministic, action-based
environment, so a plug-in overrides only what differs. The groups, in the order the guide
(docs/adding-an-environment.md) walks them:

* :mod:`.flows`: how the model plays (flows, own settings, official prompts, runners);
* :mod:`.scoring`: what the score means (actions, diagnostics, lost-score parts, floor and ceiling);
* :mod:`.scenarios`: where scenarios come from (import, import-time checks, notes);
* :mod:`.workers`: where attempts run (queue, memory, operator settings);
* :mod:`.pages`: how the site shows it (boards, analysis, replay);
* :mod:`.uploads`: how uploaded runs are read and re-scored;
* :mod:`.baselines`: what the baseline agents do and what the demo runs;
* :mod:`.release`: loading, the official release and the paper.

A plug-in still reads and declares every name flat (``plugin.queue``), so the groups change no caller.
"""
