"""WebUI (pages rebuilt from descriptions, scored by AES). Importing registers the plug-in; the
browser and the metric load lazily."""
from evaluators.base import register
from evaluators.webui.plugin import WebUIPlugin

register(WebUIPlugin())

__all__ = ["WebUIPlugin"]
