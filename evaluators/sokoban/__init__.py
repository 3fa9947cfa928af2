"""Sokoban (gym-sokoban levels). The package's ``plugin`` is what MAGEBENCH_ENVIRONMENTS loads; gym loads
lazily."""
from evaluators.sokoban.plugin import SokobanPlugin

plugin = SokobanPlugin()

__all__ = ["SokobanPlugin", "plugin"]
