"""Football (gfootball). For now: scenario files read as data; the environment plug-in registers
here once the engine runs."""
