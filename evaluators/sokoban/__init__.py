"""Sokoban (gym-sokoban levels). Importing the package registers its plug-in; gym loads lazily."""
from evaluators.base import register
from evaluators.sokoban.plugin import SokobanPlugin

register(SokobanPlugin())

__all__ = ["SokobanPlugin"]
