"""Small Go: the model plays Black on a small board against GNU Go, a native engine declared in this
folder's ``install/`` (the second example of an environment that is one folder).

The package's ``plugin`` is what MAGEBENCH_ENVIRONMENTS loads; the default setting leaves it out.
Its modules import one another relatively, so the folder works under any package name.
"""
from .plugin import SmallGoPlugin

plugin = SmallGoPlugin()

__all__ = ["SmallGoPlugin", "plugin"]
