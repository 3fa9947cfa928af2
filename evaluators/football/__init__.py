"""Football (gfootball). The package's ``plugin`` is what MAGEBENCH_ENVIRONMENTS loads; the engine loads
lazily."""
from evaluators.football.plugin import FootballPlugin

plugin = FootballPlugin()

__all__ = ["FootballPlugin", "plugin"]
