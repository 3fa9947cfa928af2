from django.apps import AppConfig


class MonitoringConfig(AppConfig):
    """What an operator of the running stack reads: /metrics, /-/live and /-/ready (README: Operating it)."""

    name = "monitoring"
    default_auto_field = "django.db.models.BigAutoField"
