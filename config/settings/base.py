"""Settings for every deployment; each value comes from the environment.

Development (the default) runs on embedded parts: SQLite and a file-system Celery broker, so the
site and a real worker process start with no services. Production (MAGEBENCH_ENV=production)
refuses to start without its secrets; DATABASE_URL and CELERY_BROKER_URL switch to PostgreSQL and
Redis in any mode.
"""
from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from config.env import env_bool, env_float, env_int, env_list, env_secret, env_str, operator_setting
from config.heartbeat import DEFAULT_HEARTBEAT_FILE
from evaluators.base import PluginConfigurationError, declared_operator_settings, declared_queues, default_environments

BASE_DIR = Path(__file__).resolve().parent.parent.parent

MAGEBENCH_ENV = env_str("MAGEBENCH_ENV", "development")
if MAGEBENCH_ENV not in {"development", "test", "production"}:
    raise ImproperlyConfigured("MAGEBENCH_ENV must be development, test or production")
PRODUCTION = MAGEBENCH_ENV == "production"

DEBUG = env_bool("DJANGO_DEBUG", not PRODUCTION)

SECRET_KEY = env_secret("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) is required in production")
    SECRET_KEY = "development-only-not-secret"

# Endpoint API keys are encrypted with this key; rotating SECRET_KEY must not orphan them.
_field_key = env_secret("FIELD_ENCRYPTION_KEY")
if not _field_key:
    if PRODUCTION:
        raise ImproperlyConfigured("FIELD_ENCRYPTION_KEY (a Fernet key) is required in production")
    _field_key = base64.urlsafe_b64encode(hashlib.sha256(SECRET_KEY.encode()).digest()).decode()
FIELD_ENCRYPTION_KEY = _field_key

# The site's own name (the compose stack's DOMAIN): the host it answers to unless DJANGO_ALLOWED_HOSTS
# names others.
MAGEBENCH_DOMAIN = env_str("MAGEBENCH_DOMAIN", "")
_default_hosts = [MAGEBENCH_DOMAIN] if MAGEBENCH_DOMAIN else [] if PRODUCTION else ["*"]
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", _default_hosts)
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "evaluators",
    "catalogue",
    "accounts",
    "submissions",
    "leaderboard",
    "monitoring",
]

MIDDLEWARE = [
    # First: answers the operator's paths (/metrics, /-/live, /-/ready) itself, over plain HTTP and
    # whatever the Host, so that a scrape or health check from inside the stack is never redirected
    # to HTTPS nor refused for its host; times every other request.
    "monitoring.middleware.OperationsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Around everything that may query the database: a request running long is answered 503.
    "config.deadline.RequestDeadlineMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: refuses an upload on its headers, before anything reads the body.
    "submissions.middleware.RequestBodyLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Inside CommonMiddleware, which still redirects a missing page to its address with a slash.
    "config.notfound.SiteNotFoundMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "OPTIONS": {
            # Django's default loaders (cached, as it caches them unasked), then the environments' folders.
            "loaders": [("django.template.loaders.cached.Loader", [
                "django.template.loaders.filesystem.Loader",
                "django.template.loaders.app_directories.Loader",
                "config.pluginfiles.PluginTemplateLoader",
            ])],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "leaderboard.context_processors.environments",
            ],
        },
    },
]

DATA_DIR = Path(env_str("MAGEBENCH_DATA_DIR", str(BASE_DIR / "var")))

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The worker and the web process write the same file; wait for the lock instead of failing.
    # Transactions take the write lock when they begin: one that read first and then wrote would
    # otherwise fail at once ("database is locked") while another process writes, without waiting.
    DATABASES["default"].setdefault("OPTIONS", {}).update(timeout=30, transaction_mode="IMMEDIATE")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "config.staticfinders.PlotlyFinder",
    "config.pluginfiles.PluginStaticFinder",
]
# Static files collected by collectstatic, compressed (gzip) and named by a hash of their content:
# WhiteNoise serves them compressed, with a year-long immutable Cache-Control (plotly.js alone is
# 4.8 MB). Production and the demo collect them; development without collectstatic, and the tests,
# serve the source folders under plain names instead.
MAGEBENCH_STATIC_MANIFEST = env_bool("MAGEBENCH_STATIC_MANIFEST", PRODUCTION)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "config.staticstorage.CollectedStaticStorage"
            if MAGEBENCH_STATIC_MANIFEST
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
if MAGEBENCH_STATIC_MANIFEST:
    # Only what collectstatic wrote (with its compressed copies) is served, read once at start;
    # development's default (DEBUG) would look files up in the source folders at every request.
    WHITENOISE_USE_FINDERS = False
    WHITENOISE_AUTOREFRESH = False
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env_str("MAGEBENCH_MEDIA_ROOT", str(DATA_DIR / "media")))
# Scenario resources (pickled levels, pages) live outside MEDIA_ROOT: they are never served.
SCENARIO_ROOT = Path(env_str("MAGEBENCH_SCENARIO_ROOT", str(DATA_DIR / "scenarios")))
# The command-line client's wheel and its sha256, written by manage.py build_client_wheel (the image
# builds it) and only read by the site: outside DATA_DIR, which the web process and every worker write.
MAGEBENCH_CLIENT_WHEEL_DIR = Path(env_str("MAGEBENCH_CLIENT_WHEEL_DIR", str(BASE_DIR / "build" / "client-wheel")))
if PRODUCTION and MAGEBENCH_CLIENT_WHEEL_DIR.resolve().is_relative_to(DATA_DIR.resolve()):
    raise ImproperlyConfigured("MAGEBENCH_CLIENT_WHEEL_DIR must be outside MAGEBENCH_DATA_DIR, which the site's "
                               "processes can write")

REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.BearerTokenAuthentication",
                                       "rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    # Anonymous callers are counted per address, an IPv6 one per /64 (accounts.selectors.address_key).
    "DEFAULT_THROTTLE_CLASSES": ["accounts.throttling.AddressAnonRateThrottle",
                                 "accounts.throttling.AddressUserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"anon": env_str("MAGEBENCH_THROTTLE_ANON", "120/minute"),
                               "user": env_str("MAGEBENCH_THROTTLE_USER", "600/minute")},
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "submissions.apis.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MageBench Leaderboard API",
    "DESCRIPTION": "Boards, submissions (endpoint or upload), their progress, attempts and replays. "
                   "Write calls take a team's read-write token: `Authorization: Bearer mbw_…`.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Operations are tagged by the path segment after this prefix (boards, submissions, …); guessed,
    # it would take in the documentation pages under /api/ and tag every operation "v1".
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # The API documentation pages (config/apidocs.py) load Swagger UI and ReDoc from the site's own
    # static files, never a CDN: the site's pages request nothing from another host.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No validator badge (it would send the schema to swagger.io); "Try it out" sends the team token.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None, "persistAuthorization": False,
                            "displayRequestDuration": True, "docExpansion": "list", "filter": True},
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "config.apidocs.summaries_from_docstrings"],
    "TAGS": [
        {"name": "boards", "description": "The ranked entries of a board, as on the site and in its CSV export."},
        {"name": "submissions", "description": "Endpoint submissions: create, list, follow, cancel, resume, "
                                               "re-run and publish."},
        {"name": "uploads", "description": "Submissions of model outputs produced offline, re-scored by the site."},
        {"name": "endpoint-checks", "description": "Test calls of an endpoint: the first request an attempt would "
                                                   "send, made alone, and what came back."},
        {"name": "attempts", "description": "One episode of a submission: its trajectory and stored artifacts."},
        {"name": "models", "description": "The models teams have registered, with their metadata."},
        {"name": "queue", "description": "What runs now and what waits, in serving order."},
        {"name": "me", "description": "Who the credentials belong to, their teams and quotas."},
        {"name": "snapshots", "description": "Dated, immutable releases of every public board: Parquet, a dataset "
                                             "card, a version and a content hash to cite."},
    ],
    "ENUM_NAME_OVERRIDES": {"SubmissionStatusEnum": "submissions.models.Submission.Status",
                            "AttemptStatusEnum": "submissions.models.Attempt.Status",
                            "EndpointCheckStatusEnum": "submissions.models.EndpointCheck.Status",
                            "FlowEnum": [("global", "Global"), ("online", "Online")]},
}

# Submissions a team may make: per rolling 24 hours, in total, and waiting or running at once.
# Submissions that end with no scored attempt (infrastructure failures, early cancels) do not count.
MAGEBENCH_QUOTA_PER_DAY = env_int("MAGEBENCH_QUOTA_PER_DAY", 5)
MAGEBENCH_QUOTA_TOTAL = env_int("MAGEBENCH_QUOTA_TOTAL", 200)
MAGEBENCH_QUOTA_CONCURRENT = env_int("MAGEBENCH_QUOTA_CONCURRENT", 2)
# The same limits for one user across all their teams (a submission counts against its team and
# against the user who started it): making more teams multiplies neither.
MAGEBENCH_QUOTA_PER_USER_PER_DAY = env_int("MAGEBENCH_QUOTA_PER_USER_PER_DAY", MAGEBENCH_QUOTA_PER_DAY)
MAGEBENCH_QUOTA_PER_USER_TOTAL = env_int("MAGEBENCH_QUOTA_PER_USER_TOTAL", MAGEBENCH_QUOTA_TOTAL)
MAGEBENCH_QUOTA_PER_USER_CONCURRENT = env_int("MAGEBENCH_QUOTA_PER_USER_CONCURRENT", MAGEBENCH_QUOTA_CONCURRENT)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "account"
LOGOUT_REDIRECT_URL = "home"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed log-ins on the site and the admin (and wrong old passwords on the password-change form):
# after MAX_FAILURES for one user name from one address, or MAX_FAILURES_PER_IP from one address,
# within WINDOW seconds, that pair (or address) is refused, the right password included, for LOCKOUT
# seconds, doubled at each further lock up to LOCKOUT_MAX. Counted per (user name, address), a
# stranger's guesses hold the stranger, never the account's owner logging in from elsewhere.
MAGEBENCH_LOGIN_MAX_FAILURES = env_int("MAGEBENCH_LOGIN_MAX_FAILURES", 5)
MAGEBENCH_LOGIN_MAX_FAILURES_PER_IP = env_int("MAGEBENCH_LOGIN_MAX_FAILURES_PER_IP", 20)
MAGEBENCH_LOGIN_WINDOW_SECONDS = env_int("MAGEBENCH_LOGIN_WINDOW_SECONDS", 900)
MAGEBENCH_LOGIN_LOCKOUT_SECONDS = env_int("MAGEBENCH_LOGIN_LOCKOUT_SECONDS", 900)
MAGEBENCH_LOGIN_LOCKOUT_MAX_SECONDS = env_int("MAGEBENCH_LOGIN_LOCKOUT_MAX_SECONDS", 24 * 3600)
# Failed log-ins of one account from every address together, within ACCOUNT_WINDOW seconds, after
# which a right password alone no longer logs in: the account's owner is mailed a one-time link
# (valid PROOF seconds, at most PROOF_MAX_MAILS mails per PROOF seconds) that does. Many addresses
# guessing at one account are held, and its owner is never locked out.
MAGEBENCH_LOGIN_MAX_FAILURES_PER_ACCOUNT = env_int("MAGEBENCH_LOGIN_MAX_FAILURES_PER_ACCOUNT", 30)
MAGEBENCH_LOGIN_ACCOUNT_WINDOW_SECONDS = env_int("MAGEBENCH_LOGIN_ACCOUNT_WINDOW_SECONDS", 24 * 3600)
MAGEBENCH_LOGIN_PROOF_SECONDS = env_int("MAGEBENCH_LOGIN_PROOF_SECONDS", 900)
MAGEBENCH_LOGIN_PROOF_MAX_MAILS = env_int("MAGEBENCH_LOGIN_PROOF_MAX_MAILS", 3)
# Wrong API tokens from one address within the log-in window before that address's further wrong
# tokens are answered 429 (with Retry-After) for the log-in lockout; a right token always works.
MAGEBENCH_TOKEN_MAX_FAILURES_PER_IP = env_int("MAGEBENCH_TOKEN_MAX_FAILURES_PER_IP", 20)
# Sign-ups per address, and accounts created on the whole site, per hour; past them the form says so.
# Every per-address counter (log-ins, tokens, sign-ups, resets, API throttles) counts an IPv6
# address as its /64 network, which one host usually holds whole.
MAGEBENCH_SIGNUP_MAX_PER_ADDRESS = env_int("MAGEBENCH_SIGNUP_MAX_PER_ADDRESS", 5)
MAGEBENCH_SIGNUP_MAX_PER_HOUR = env_int("MAGEBENCH_SIGNUP_MAX_PER_HOUR", 200)
# Teams one user may own: each team has its own quota and its own turn in the fair order.
MAGEBENCH_MAX_TEAMS_PER_USER = env_int("MAGEBENCH_MAX_TEAMS_PER_USER", 3)
# Password-reset requests within the log-in window: past MAX_PER_ADDRESS from one address the form is
# refused; past MAX_PER_EMAIL mails for one e-mail address no more are sent (the page reads the same,
# and the links already sent work), so the form floods no mailbox and strangers cannot stop the
# owner's reset. A signed-in user asking for their own address is always sent one.
MAGEBENCH_PASSWORD_RESET_MAX_PER_ADDRESS = env_int("MAGEBENCH_PASSWORD_RESET_MAX_PER_ADDRESS", 5)
MAGEBENCH_PASSWORD_RESET_MAX_PER_EMAIL = env_int("MAGEBENCH_PASSWORD_RESET_MAX_PER_EMAIL", 3)
# Mail (password-reset links). Development writes each mail to the console, or with "file" to
# EMAIL_FILE_PATH; production sends it through the SMTP server named by EMAIL_HOST.
_email_backends = {"console": "console", "file": "filebased", "smtp": "smtp", "locmem": "locmem"}
_email_backend = env_str("MAGEBENCH_EMAIL_BACKEND", "smtp" if PRODUCTION else "console")
if _email_backend not in _email_backends:
    raise ImproperlyConfigured(f"MAGEBENCH_EMAIL_BACKEND must be one of {', '.join(_email_backends)}")
EMAIL_BACKEND = f"django.core.mail.backends.{_email_backends[_email_backend]}.EmailBackend"
EMAIL_FILE_PATH = env_str("MAGEBENCH_EMAIL_FILE_PATH", str(DATA_DIR / "mail"))
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_secret("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "MageBench Leaderboard <noreply@localhost>")
# Reverse proxies in front of the site that append to X-Forwarded-For. The client is the address
# the outermost of them saw; with 0 it is the connection's own (anything else could be forged).
MAGEBENCH_NUM_PROXIES = env_int("MAGEBENCH_NUM_PROXIES", 0)
# Production expects a reverse proxy (see README). Behind one, with no proxy counted, every client
# would have the proxy's address, and twenty failed log-ins by anyone would lock everyone out:
# production refuses to start so. A site served directly says MAGEBENCH_BEHIND_PROXY=false.
MAGEBENCH_BEHIND_PROXY = env_bool("MAGEBENCH_BEHIND_PROXY", PRODUCTION)
if PRODUCTION and not DEBUG and MAGEBENCH_BEHIND_PROXY and MAGEBENCH_NUM_PROXIES < 1:
    raise ImproperlyConfigured("MAGEBENCH_NUM_PROXIES must be 1 or more behind a reverse proxy (the number of "
                               "proxies that append to X-Forwarded-For); set MAGEBENCH_BEHIND_PROXY=false "
                               "if clients reach the site directly")
REST_FRAMEWORK["NUM_PROXIES"] = MAGEBENCH_NUM_PROXIES
# Log-in failure counters and API throttles are kept in this cache: in production every web
# process must share one (CACHE_URL=redis://…), or each counts on its own.
_cache_url = env_str("CACHE_URL", "")
if _cache_url.startswith(("redis://", "rediss://", "unix://")):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _cache_url}}
elif _cache_url in ("", "locmem://"):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
else:
    raise ImproperlyConfigured(f"CACHE_URL must be redis://…, rediss://…, unix://… or locmem://, not {_cache_url!r}")
# Boards, exports, the home page and the analysis pages are kept in that cache for this long; any
# write that changes a board (a submission finishing, published, hidden, re-scored) drops them at
# once. 0 turns the cache off.
MAGEBENCH_BOARD_CACHE_SECONDS = env_int("MAGEBENCH_BOARD_CACHE_SECONDS", 24 * 3600)
# Once a change commits, a Celery task (leaderboard.warm_boards, on the default queue) computes the data
# anonymous visitors' pages read of the changed boards and the home page (no page is rendered), this
# many seconds later so that a burst of changes is computed for once. On by default only with a shared
# cache: a worker warming its own memory (LocMem) would help no web process.
MAGEBENCH_WARM_BOARDS = env_bool("MAGEBENCH_WARM_BOARDS", _cache_url.startswith(("redis://", "rediss://", "unix://")))
MAGEBENCH_WARM_DELAY_SECONDS = env_float("MAGEBENCH_WARM_DELAY_SECONDS", 5.0)
# A warm sent but not run this long after its delay (its worker died) no longer holds later ones back.
MAGEBENCH_WARM_PENDING_SECONDS = env_int("MAGEBENCH_WARM_PENDING_SECONDS", 300)
# Per-attempt exports (CSV, Parquet, trajectories zip) are files built once by a worker (on the
# default queue, or the one MAGEBENCH_QUEUE_ROUTES names for "exports") and kept here, one generation
# per board; a request for one not built yet is answered 202 with this Retry-After. A build sent but
# not finished this long after (its worker died) no longer keeps a later request from sending another.
MAGEBENCH_EXPORT_ROOT = Path(env_str("MAGEBENCH_EXPORT_ROOT", str(DATA_DIR / "exports")))
MAGEBENCH_EXPORT_RETRY_AFTER_SECONDS = env_int("MAGEBENCH_EXPORT_RETRY_AFTER_SECONDS", 5)
MAGEBENCH_EXPORT_PENDING_SECONDS = env_int("MAGEBENCH_EXPORT_PENDING_SECONDS", 900)
# At most this many builds wait or run at once (a request past it is answered 202 and sends its build
# when it asks again): each search of a board is a file of its own, and the queue also runs attempts.
MAGEBENCH_EXPORT_MAX_BUILDS = env_int("MAGEBENCH_EXPORT_MAX_BUILDS", 12)
# Dated snapshots of every public board (leaderboard.snapshots): Parquet and a dataset card, written
# once into a folder of their own (never pruned, unlike the exports above). Beat sends the task this
# often; it makes a new version of a board only when its content differs from its latest snapshot.
MAGEBENCH_SNAPSHOT_ROOT = Path(env_str("MAGEBENCH_SNAPSHOT_ROOT", str(DATA_DIR / "snapshots")))
MAGEBENCH_SNAPSHOT_EVERY_SECONDS = env_float("MAGEBENCH_SNAPSHOT_EVERY_SECONDS", 24 * 3600.0)
# The licence the snapshots are released under (a Hugging Face licence identifier) and how to cite them.
MAGEBENCH_DATA_LICENSE = env_str("MAGEBENCH_DATA_LICENSE", "cc-by-4.0")
MAGEBENCH_DATA_PUBLISHER = env_str("MAGEBENCH_DATA_PUBLISHER", "MageBench Leaderboard")

# Content-Security-Policy of every response (config/security.py): scripts and styles from the
# site itself, images also as data: URLs (charts), no plugins, no framing, forms post to the site.
MAGEBENCH_CONTENT_SECURITY_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}

# --- Celery ---------------------------------------------------------------------------------
# The default broker is kombu's file-system transport: a real worker process with no server.
_BROKER_DIR = DATA_DIR / "broker"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for _sub in ("queue", "processed", "control"):
        (_BROKER_DIR / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
        # kombu looks for new message files once a second by default: up to a second lost after
        # every attempt, most of the time of a short one. Listing one folder is cheap.
        "polling_interval": env_float("MAGEBENCH_BROKER_POLLING_SECONDS", 0.1),
    }
else:
    # A message not acknowledged this long after delivery (its worker died) is delivered again. A
    # long episode outliving it gets a duplicate, which finds the attempt claimed and does nothing.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("MAGEBENCH_BROKER_VISIBILITY_TIMEOUT", 3600),
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Running episodes carry on through a broker restart; what the broker lost, the watchdog re-sends.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# The database is the record of every attempt, so attempt tasks store no result; the watchdog's
# rounds (counts of what it re-queued) do go to the result backend when one is set, for operators.
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", "") or None
CELERY_RESULT_EXPIRES = env_int("CELERY_RESULT_EXPIRES", 86400)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# The environments: the modules whose ``plugin`` is an evaluators.base.EnvironmentPlugin. By default
# every package of evaluators/ that defines one, except the examples (their plug-ins are ``opt_in``):
# a new environment is its folder.
try:
    MAGEBENCH_ENVIRONMENTS = env_list("MAGEBENCH_ENVIRONMENTS", []) or default_environments()
except PluginConfigurationError as exc:
    raise ImproperlyConfigured(f"MAGEBENCH_ENVIRONMENTS: {exc}") from exc
# One queue per kind of work, so that one kind cannot starve the others: "light" (attempts mostly
# waiting on model calls, and the site's own tasks) and each kind the configured environments'
# plug-ins declare (``EnvironmentPlugin.queue``: "browser" for WebUI, "engine" for Football). The
# plug-in modules import without Django and register nothing, so reading them here is cheap and
# leaves the registry to catalogue/apps.py. A worker started without -Q consumes them all;
# production runs one pool per queue (docker-compose.yml).
CELERY_TASK_DEFAULT_QUEUE = "light"
try:
    _declared_queues = declared_queues(MAGEBENCH_ENVIRONMENTS)
    _operator_settings = declared_operator_settings(MAGEBENCH_ENVIRONMENTS)
except PluginConfigurationError as exc:
    raise ImproperlyConfigured(f"MAGEBENCH_ENVIRONMENTS: {exc}") from exc
CELERY_TASK_QUEUES = [Queue(name) for name in dict.fromkeys([CELERY_TASK_DEFAULT_QUEUE, *_declared_queues])]
# A kind of work sent to a queue of another name, as kind=queue (e.g. "engine=heavy").
MAGEBENCH_QUEUE_ROUTES = dict(item.split("=", 1) for item in env_list("MAGEBENCH_QUEUE_ROUTES", []) if "=" in item)
CELERY_BEAT_SCHEDULE = {
    "watchdog": {"task": "submissions.watchdog", "schedule": env_float("MAGEBENCH_WATCHDOG_EVERY_SECONDS", 60.0)},
    "snapshot-boards": {"task": "leaderboard.snapshot_boards", "schedule": MAGEBENCH_SNAPSHOT_EVERY_SECONDS},
}
# A running attempt whose heartbeat is older than this is taken to be on a dead worker.
MAGEBENCH_STALLED_AFTER_SECONDS = env_float("MAGEBENCH_STALLED_AFTER_SECONDS", 300.0)
MAGEBENCH_HEARTBEAT_EVERY_SECONDS = env_float("MAGEBENCH_HEARTBEAT_EVERY_SECONDS", 2.0)
# A stopped worker's attempts hand themselves back at their next step; after this long the worker
# takes back the rest itself and ends its pool, so SIGTERM or Ctrl-C stops it within about 10 s.
MAGEBENCH_WORKER_STOP_GRACE_SECONDS = env_float("MAGEBENCH_WORKER_STOP_GRACE_SECONDS", 5.0)
# Each worker says it is up this often (submissions.LiveWorker); one silent for longer than the
# stale limit is taken to be down: the queue page warns about queues no live worker reads.
MAGEBENCH_WORKER_BEAT_SECONDS = env_float("MAGEBENCH_WORKER_BEAT_SECONDS", 30.0)
MAGEBENCH_WORKER_STALE_AFTER_SECONDS = env_float("MAGEBENCH_WORKER_STALE_AFTER_SECONDS", 180.0)
# How long a worker holding a finished episode waits for the database to come back before giving
# the result up (the watchdog then runs the attempt again).
MAGEBENCH_DB_OUTAGE_SECONDS = env_float("MAGEBENCH_DB_OUTAGE_SECONDS", 120.0)
# How many attempts a worker started with ``manage.py run_worker`` runs at once (submissions.worker_sizing):
# 0 sizes it from its cores (several attempts per core, as each waits on its model) within a memory
# budget in MiB (0: half of the machine's memory).
MAGEBENCH_WORKER_IN_FLIGHT = env_int("MAGEBENCH_WORKER_IN_FLIGHT", 0)
MAGEBENCH_WORKER_MEMORY_MB = env_int("MAGEBENCH_WORKER_MEMORY_MB", 0)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# A message only says "run the fairest attempt due on this queue", chosen when a process is free,
# so how many messages a worker holds ahead does not change who is served first; one ahead per
# process keeps a busy worker from sitting on messages another one could run.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 3 * 3600)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 3 * 3600 + 300)
CELERY_TASK_ALWAYS_EAGER = False

# --- Evaluation policy ------------------------------------------------------------------------
# Infrastructure failures are retried this many times per attempt before the attempt is given up.
MAGEBENCH_INFRA_MAX_TRIES = env_int("MAGEBENCH_INFRA_MAX_TRIES", 4)
MAGEBENCH_INFRA_RETRY_BASE_SECONDS = env_float("MAGEBENCH_INFRA_RETRY_BASE_SECONDS", 30.0)
MAGEBENCH_ENDPOINT_TIMEOUT = env_float("MAGEBENCH_ENDPOINT_TIMEOUT", 120.0)
MAGEBENCH_ENDPOINT_MAX_RETRIES = env_int("MAGEBENCH_ENDPOINT_MAX_RETRIES", 3)
MAGEBENCH_ENDPOINT_BACKOFF = env_float("MAGEBENCH_ENDPOINT_BACKOFF", 2.0)
# The longest Retry-After honoured (seconds): a shorter one is waited out, a worker freed meanwhile
# when it is long, and no request goes to that endpoint before it ends; a longer one pauses.
MAGEBENCH_ENDPOINT_MAX_RETRY_AFTER = env_float("MAGEBENCH_ENDPOINT_MAX_RETRY_AFTER", 600.0)
# A submission pauses (no more requests) once one failure has ended tries of this many attempts in a row.
MAGEBENCH_BREAKER_ATTEMPTS = env_int("MAGEBENCH_BREAKER_ATTEMPTS", 3)
# Attempts of one team calling one endpoint at once, however many workers run (0: no limit), so the
# platform never floods a team's server; a team may set a lower limit for its own calls, which
# never limits another team's calls to the same URL. An attempt finding no room waits this long
# and looks again.
MAGEBENCH_ENDPOINT_CONCURRENCY = env_int("MAGEBENCH_ENDPOINT_CONCURRENCY", 8)
# The operators' ceiling on attempts calling one endpoint URL at once across every team (0: none),
# e.g. for a shared provider whose URL many teams use.
MAGEBENCH_ENDPOINT_URL_MAX_CALLS = env_int("MAGEBENCH_ENDPOINT_URL_MAX_CALLS", 0)
MAGEBENCH_ENDPOINT_BUSY_RETRY_SECONDS = env_float("MAGEBENCH_ENDPOINT_BUSY_RETRY_SECONDS", 5.0)
# Which addresses the workers may call for a team: public ones only in production, where an endpoint
# URL must not reach the operator's own network; loopback and private ones too in development and
# tests. The allow-list (comma-separated networks, addresses or host names) lets trusted private
# endpoints through; metadata services, link-local and multicast addresses are never called.
MAGEBENCH_ENDPOINT_ALLOW_PRIVATE = env_bool("MAGEBENCH_ENDPOINT_ALLOW_PRIVATE", not PRODUCTION)
MAGEBENCH_ENDPOINT_ALLOWED_NETWORKS = env_list("MAGEBENCH_ENDPOINT_ALLOWED_NETWORKS", [])
# A chat completion is kilobytes; a larger body is refused rather than held in a worker's memory.
MAGEBENCH_ENDPOINT_MAX_RESPONSE_BYTES = env_int("MAGEBENCH_ENDPOINT_MAX_RESPONSE_BYTES", 8 * 1024 * 1024)
# Test calls of an endpoint (one real request each, made by a worker): at most this many per team
# within the window, one at a time. A check no worker has finished after the stale limit (its
# worker died) no longer blocks the team's next one and reads as failed.
MAGEBENCH_ENDPOINT_CHECKS_PER_WINDOW = env_int("MAGEBENCH_ENDPOINT_CHECKS_PER_WINDOW", 10)
MAGEBENCH_ENDPOINT_CHECK_WINDOW_SECONDS = env_int("MAGEBENCH_ENDPOINT_CHECK_WINDOW_SECONDS", 3600)
MAGEBENCH_ENDPOINT_CHECK_STALE_SECONDS = env_int("MAGEBENCH_ENDPOINT_CHECK_STALE_SECONDS", 600)
# Uploads of model outputs (a zip of the official output folder, or per-sample JSONL).
# Both limits are checked against the Content-Length before the body is read (an upload may add
# 64 KiB of form fields and multipart framing); the reverse proxy should cap bodies as well.
MAGEBENCH_UPLOAD_MAX_BYTES = env_int("MAGEBENCH_UPLOAD_MAX_BYTES", 50 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAGEBENCH_REQUEST_MAX_BYTES", 2_621_440)
# Seconds a web request may run before it is answered 503 with Retry-After (config.deadline; 0: no
# limit): below gunicorn's worker timeout (--timeout, 30 s by default, as the Dockerfile runs it),
# so that a slow request is refused instead of its worker being killed.
MAGEBENCH_REQUEST_DEADLINE = env_float("MAGEBENCH_REQUEST_DEADLINE", 20.0)
# Caps on what a file may hold: the check stops at the first one reached, naming it. The defaults
# fit the largest legitimate upload (483 scenarios × 20 repeats, 50 model calls a run on average
# and at most 1000, max_loop's upper bound), with room for blank lines.
MAGEBENCH_UPLOAD_MAX_LINES = env_int("MAGEBENCH_UPLOAD_MAX_LINES", 20_000)
MAGEBENCH_UPLOAD_MAX_RUNS = env_int("MAGEBENCH_UPLOAD_MAX_RUNS", 10_000)
MAGEBENCH_UPLOAD_MAX_REPLIES_PER_RUN = env_int("MAGEBENCH_UPLOAD_MAX_REPLIES_PER_RUN", 1_000)
MAGEBENCH_UPLOAD_MAX_REPLIES = env_int("MAGEBENCH_UPLOAD_MAX_REPLIES", 500_000)
# Seconds a check of a file may take in a web request (below the application server's 30 s timeout,
# which would kill the request with nothing said) and on a worker; past it the file is refused.
MAGEBENCH_UPLOAD_CHECK_SECONDS = env_float("MAGEBENCH_UPLOAD_CHECK_SECONDS", 20.0)
MAGEBENCH_UPLOAD_WORKER_CHECK_SECONDS = env_float("MAGEBENCH_UPLOAD_WORKER_CHECK_SECONDS", 300.0)
# A file checked (not uploaded) above this size is checked by a worker: the request answers at once
# with the stored check to read until it is done, and no web process is held for it.
MAGEBENCH_UPLOAD_CHECK_ASYNC_BYTES = env_int("MAGEBENCH_UPLOAD_CHECK_ASYNC_BYTES", 2 * 1024 * 1024)
# A worker's check still pending after this long (its worker died, its message was lost) reads as failed.
MAGEBENCH_UPLOAD_CHECK_STALE_SECONDS = env_int("MAGEBENCH_UPLOAD_CHECK_STALE_SECONDS", 3600)
# Uploads and checks of files, on the site and the API together: at most this many per user and
# per address (a DRF rate, "<n>/<second|minute|hour|day>").
MAGEBENCH_THROTTLE_UPLOADS = env_str("MAGEBENCH_THROTTLE_UPLOADS", "60/hour")
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_HANDLERS = ["submissions.middleware.UploadSizeLimitHandler",
                        "django.core.files.uploadhandler.MemoryFileUploadHandler",
                        "django.core.files.uploadhandler.TemporaryFileUploadHandler"]
MAGEBENCH_DEFAULT_SUITE = env_str("MAGEBENCH_DEFAULT_SUITE", "")
# The settings each environment's plug-in declares for its operator (limits of its workers), by
# environment and name, read from variables of those names; submissions/apps.py hands each plug-in its own.
MAGEBENCH_OPERATOR_SETTINGS = {slug: {setting.name: operator_setting(setting, production=PRODUCTION)
                                      for setting in declared}
                               for slug, declared in _operator_settings.items()}

# --- Operations (README: Operating it) ----------------------------------------------------------
# One JSON object per log line (with the submission, attempt and task ids when known) for a log
# collector, or plain lines for a person at a terminal. Celery's own lines follow it (config/celery.py).
MAGEBENCH_LOG_FORMAT = env_str("MAGEBENCH_LOG_FORMAT", "json" if PRODUCTION else "plain")
if MAGEBENCH_LOG_FORMAT not in {"json", "plain"}:
    raise ImproperlyConfigured("MAGEBENCH_LOG_FORMAT must be json or plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"site": {"()": "config.logs.formatter_for", "log_format": MAGEBENCH_LOG_FORMAT}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "site"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
# /metrics answers a request that came through the reverse proxy only with this bearer token; a
# scrape from inside the stack (no X-Forwarded-For: it reached gunicorn directly) needs none. Empty:
# no token opens it from outside.
MAGEBENCH_METRICS_TOKEN = env_secret("MAGEBENCH_METRICS_TOKEN") or ""
# Where gunicorn is reachable other than through the proxy by more than the stack (e.g. published
# beyond the host's loopback), a request without forwarding headers proves nothing: always ask the token.
MAGEBENCH_METRICS_REQUIRE_TOKEN = env_bool("MAGEBENCH_METRICS_REQUIRE_TOKEN", False)
# The database's numbers in /metrics are counted at most this often, however often it is scraped.
MAGEBENCH_METRICS_CACHE_SECONDS = env_float("MAGEBENCH_METRICS_CACHE_SECONDS", 5.0)
# How long /-/ready waits for the database and for the broker, each, before answering 503.
MAGEBENCH_READY_TIMEOUT_SECONDS = env_float("MAGEBENCH_READY_TIMEOUT_SECONDS", 2.0)
# Touched by a worker each time it refreshes its LiveWorker row; its container's health check reads
# its age (python config/heartbeat.py) without starting Django.
MAGEBENCH_WORKER_HEARTBEAT_FILE = Path(env_str("MAGEBENCH_WORKER_HEARTBEAT_FILE", DEFAULT_HEARTBEAT_FILE))

if PRODUCTION:
    # TLS ends at the reverse proxy, which must set X-Forwarded-Proto (and overwrite any sent by clients).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    # Paths (regular expressions) answered over plain HTTP too, e.g. a load balancer's health check.
    SECURE_REDIRECT_EXEMPT = env_list("DJANGO_SECURE_REDIRECT_EXEMPT", [])
    SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 365 * 24 * 3600)
    # Both default to on; turn them off when another host of the domain is still served over HTTP.
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", True)
