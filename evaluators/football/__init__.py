"""Football (gfootball). Importing the package registers its plug-in; the engine loads lazily."""
from evaluators.base import register
from evaluators.football.plugin import FootballPlugin

register(FootballPlugin())

__all__ = ["FootballPlugin"]
