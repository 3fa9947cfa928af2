"""GridWalk: a small grid puzzle of the platform's own, to show that an environment is one folder.

The package's ``plugin`` is what MAGEBENCH_ENVIRONMENTS loads; the default setting leaves it out.
"""
from evaluators.gridwalk.plugin import GridWalkPlugin

plugin = GridWalkPlugin()

__all__ = ["GridWalkPlugin", "plugin"]
