from django.apps import AppConfig


class EvaluatorsConfig(AppConfig):
    name = "evaluators"

    def ready(self) -> None:
        # evaluators/ reads no Django settings itself: the browser policy is handed over once here,
        # so workers and management commands evaluate pages under the configured limits.
        from django.conf import settings

        from evaluators.browser import EvaluationPolicy, set_evaluation_policy

        set_evaluation_policy(EvaluationPolicy(
            page_memory_mb=settings.MAGEBENCH_WEBUI_PAGE_MEMORY_MB,
            page_cpu_seconds=settings.MAGEBENCH_WEBUI_PAGE_CPU_SECONDS,
            require_network_namespace=settings.MAGEBENCH_WEBUI_REQUIRE_NETWORK_NAMESPACE,
        ))
