"""WebUI (pages rebuilt from descriptions, scored by AES). The package's ``plugin`` is what
MAGEBENCH_ENVIRONMENTS loads; the browser and the metric load lazily."""
from evaluators.webui.plugin import WebUIPlugin

plugin = WebUIPlugin()

__all__ = ["WebUIPlugin", "plugin"]
