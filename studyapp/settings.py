"""The one place that reads the environment. No variables set → embedded defaults: a SQLite file,
the in-memory channel layer, Celery tasks run in-process, offline agents."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from games.llm.servers import parse_servers, server_key_name
from studyapp import proxy as _proxy
from studyapp.env import env_bool, env_float, env_int, env_spec_counts, env_str, local_secret_key
from studyapp.logging_config import logging_config
from studyapp.stores import caches, channel_layers, database, default_channel_prefix

BASE_DIR = Path(__file__).resolve().parent.parent

# Debug pages show settings, engine state and secret words: only for a developer who asks for them
# (`DEBUG=1 make run`), never by default.
DEBUG = env_bool("DEBUG", False)
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))
SECRET_KEY = env_str("SECRET_KEY") or local_secret_key(VAR_DIR / "secret_key")
ALLOWED_HOSTS = [
    h for h in env_str("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h
]
CSRF_TRUSTED_ORIGINS = [o for o in env_str("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "studyapp.tables",
    "studyapp.participants",
    "studyapp.pipelines",
    "studyapp.dashboard",
]

# Where the tables app asks for answers it cannot give itself (studyapp/tables/hooks.py): a group
# lobby closing, an idle seat, the sweep's tick, a table's page, a final board. The participants
# app answers for studies.
TABLES_HOOKS = "studyapp.participants.hooks.ParticipantsHooks"

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "studyapp.middleware.ContentSecurityPolicy",
    "studyapp.middleware.RetryTransientDatabaseErrors",
    "studyapp.middleware.RefuseNulMiddleware",
    "studyapp.middleware.SecureCookiesOverHTTPS",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "studyapp.urls"
ASGI_APPLICATION = "studyapp.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    },
    # The board partials of studyapp/tables/jinja2/, rendered on every move: Jinja2 with Django's
    # i18n tags and escaping (studyapp.tables.jinja).
    {
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "APP_DIRS": True,
        "OPTIONS": {"environment": "studyapp.tables.jinja.environment"},
    },
]

DATABASE_URL = env_str("DATABASE_URL")
# PostgreSQL connections come from a pool per process (psycopg_pool, through Django's "pool"
# option): a request or a socket's database call takes one and gives it back when it is done
# (CONN_MAX_AGE 0), so a process never holds more than DB_POOL_SIZE, however many threads daphne
# starts for a burst of requests; past that, a call waits up to DB_POOL_TIMEOUT seconds for one to
# come back instead of failing. Connections left idle for DB_POOL_MAX_IDLE seconds are closed, one
# at a time, down to DB_POOL_MIN. DB_POOL_SIZE is daphne's (and a management command's) size;
# Celery sizes its own processes (studyapp.celery): WORKER_DB_POOL_SIZE for each process of a
# worker's pool (its task thread and the thread its database calls run in), one for a worker's
# main process and one for beat. docs/production.md counts the budget. DB_POOL_SIZE=0 turns the
# pool off: a connection per thread, kept DB_CONN_MAX_AGE seconds (for PgBouncer in front).
DB_POOL_SIZE = env_int("DB_POOL_SIZE", 8)
DB_POOL_MIN = env_int("DB_POOL_MIN", 1)
DB_POOL_TIMEOUT = env_float("DB_POOL_TIMEOUT", 10.0)
DB_POOL_MAX_IDLE = env_float("DB_POOL_MAX_IDLE", 60.0)
WORKER_DB_POOL_SIZE = env_int("WORKER_DB_POOL_SIZE", 2)
if DB_POOL_SIZE < 0 or WORKER_DB_POOL_SIZE < 1 or DB_POOL_MIN < 0 or DB_POOL_TIMEOUT <= 0:
    raise ImproperlyConfigured(
        "DB_POOL_SIZE must be 0 (no pool) or more, WORKER_DB_POOL_SIZE at least 1, DB_POOL_MIN "
        "0 or more and DB_POOL_TIMEOUT more than 0"
    )
# A table socket's database read waits at most this long for a pooled connection, then is tried
# again after the database pauses (studyapp.retry): a database that is away costs a socket a few
# seconds before its person is told, not DB_POOL_TIMEOUT per read (studyapp.postgres).
DB_SOCKET_WAIT = min(env_float("DB_SOCKET_WAIT", 2.0), DB_POOL_TIMEOUT)
if DB_SOCKET_WAIT <= 0:
    raise ImproperlyConfigured("DB_SOCKET_WAIT must be more than 0 (seconds)")
# Of a daphne's pool, the connections page views never hold: its sockets' reads and moves' commits
# keep them through a burst of arrivals (studyapp.db.current_share). At most DB_POOL_SIZE - 1.
DB_POOL_SOCKETS = min(env_int("DB_POOL_SOCKETS", 3), max(DB_POOL_SIZE - 1, 0))
# PostgreSQL through the pool above, or with no DATABASE_URL the embedded SQLite file in VAR_DIR
# (studyapp.stores.database).
DATABASES = {
    "default": database(
        DATABASE_URL,
        VAR_DIR,
        pool_size=DB_POOL_SIZE,
        pool_min=DB_POOL_MIN,
        pool_timeout=DB_POOL_TIMEOUT,
        pool_max_idle=DB_POOL_MAX_IDLE,
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL")
# Redis pub/sub: a broadcast is one PUBLISH, and each daphne process holds one subscription per
# table group it has sockets for. The core layer (CHANNEL_LAYER=core) keeps groups and per-channel
# queues in Redis: several round trips per broadcast and a blocking receive per socket, which at
# 200 sockets doubled the CPU of a move (docs/production.md). Pub/sub keeps nothing: a socket that
# is not connected misses the frame, and gets the board on connect. No REDIS_URL: the in-memory
# layer of this one process.
CHANNEL_LAYER = env_str("CHANNEL_LAYER", "pubsub")
# Redis pub/sub channels are server-wide, whatever database number REDIS_URL names: two sites on
# one Redis server (a staging and a live site, two studies' deployments) with the default prefix
# would each receive the other's broadcasts for tables of the same id, boards and secret words
# included. The prefix names this site by its Redis database and its database's name, the same on
# every machine of one deployment; CHANNEL_PREFIX overrides it.
CHANNEL_PREFIX = env_str(
    "CHANNEL_PREFIX",
    default_channel_prefix(REDIS_URL, DATABASES["default"]["NAME"]) if REDIS_URL else "",
)
CHANNEL_LAYERS = channel_layers(REDIS_URL, CHANNEL_LAYER, CHANNEL_PREFIX)

# A Redis connection that was cut (a restart, a failover, CLIENT KILL, a proxy's idle timeout) is
# found out and replaced before it loses a command, in the channel layer's pools and the cache's:
# one idle longer than REDIS_HEALTH_CHECK_SECONDS is pinged before use, and a command that meets a
# broken connection is sent again on a new one, up to REDIS_RETRIES times with a short backoff
# (studyapp.cache.redis_resilience). Without it every pooled connection of every process failed
# once, each on its next command, even minutes later: a lost broadcast each.
REDIS_HEALTH_CHECK_SECONDS = env_float("REDIS_HEALTH_CHECK_SECONDS", 10)
REDIS_RETRIES = env_int("REDIS_RETRIES", 3)

# Celery: with no broker configured, tasks run in the calling process (embedded default).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
# Kombu's Redis transport with the fix that keeps a worker alive through a Redis outage
# (studyapp/broker.py); other brokers as given.
if CELERY_BROKER_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "studyapp.broker:Transport"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True  # a task on a worker that dies is delivered again
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery closes the database connection after every task unless told to reuse it, and with a pool
# closes the whole pool: a new PostgreSQL backend per agent turn. studyapp.celery gives the
# connection back to the process's pool around each task instead, as Django does per request.
CELERY_DB_REUSE_MAX = 1000
# Redis hands an unacknowledged task to another worker after the visibility timeout. Table jobs
# do not wait for it (their leases and the sweep below recover them within about 20 s); it must
# outlast the longest task, or a running one would be delivered again, and every countdown, which
# is why table jobs are only sent when due within TABLE_SCHEDULE_HORIZON_SECONDS.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 300),
    "unacked_restore_interval": 10,
    "unacked_restore_throttle": 1,
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# The table driver (studyapp.tables.driver): a job's lease in the cache lapses this long after
# its worker stops renewing it; the sweep runs this often and looks at tables quiet this long.
TABLE_JOB_LEASE_SECONDS = env_float("TABLE_JOB_LEASE_SECONDS", 12)
TABLE_SWEEP_SECONDS = env_float("TABLE_SWEEP_SECONDS", 5)
TABLE_SCHEDULE_HORIZON_SECONDS = 60.0
# The executors of the tables' real-time steps (studyapp.steps; `manage.py run_steps`, STEPS
# processes under `make production`): each holds at most STEPS_IN_FLIGHT steps at once (waiting
# for their time, or a model's answer, on one event loop) and runs their database work in
# STEPS_DB_THREADS threads (and as many pooled connections: STEPS_DB_POOL_SIZE). A step an
# executor holds is claimed by another once it has been silent STEPS_STALE_SECONDS (its executor
# died); a stopping executor lets its steps finish for up to STEPS_STOP_SECONDS.
STEPS_IN_FLIGHT = env_int("STEPS_IN_FLIGHT", 1000)
STEPS_DB_THREADS = env_int("STEPS_DB_THREADS", 4)
STEPS_STALE_SECONDS = env_float("STEPS_STALE_SECONDS", 6)
STEPS_STOP_SECONDS = env_float("STEPS_STOP_SECONDS", 10)
STEPS_STREAM_MAXLEN = env_int("STEPS_STREAM_MAXLEN", 1_000_000)
if STEPS_IN_FLIGHT < 1 or STEPS_DB_THREADS < 1 or STEPS_STALE_SECONDS <= 1:
    raise ImproperlyConfigured(
        "STEPS_IN_FLIGHT and STEPS_DB_THREADS must be at least 1 and STEPS_STALE_SECONDS more "
        "than 1 (seconds)"
    )
CELERY_BEAT_SCHEDULE = {
    "sweep-tables": {
        "task": "studyapp.tables.tasks.sweep_tables",
        "schedule": TABLE_SWEEP_SECONDS,
        "options": {"expires": TABLE_SWEEP_SECONDS * 2},
    }
}

# The cache holds the table driver's job leases (and rate limits): Redis when configured, so all
# daphne processes and workers share it; else this process's memory (the embedded mode).
CACHES = caches(REDIS_URL)

# Model providers. Offline agents need none of these.
OPENAI_API_KEY = env_str("OPENAI_API_KEY")  # OpenAI's own API only, never a compatible server
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
# openai-compatible:MODEL goes to OPENAI_COMPATIBLE_BASE_URL (OPENAI_BASE_URL, the older name, when
# unset) with OPENAI_COMPATIBLE_API_KEY; openai-compatible@NAME:MODEL goes to the server NAME of
# COMPATIBLE_SERVERS ("vllm=http://127.0.0.1:8000/v1,ollama=http://127.0.0.1:11434/v1") with the
# key in OPENAI_COMPATIBLE_API_KEY_NAME (games.llm.servers).
OPENAI_COMPATIBLE_BASE_URL = env_str("OPENAI_COMPATIBLE_BASE_URL")
OPENAI_COMPATIBLE_API_KEY = env_str("OPENAI_COMPATIBLE_API_KEY")
try:
    COMPATIBLE_SERVERS = parse_servers(env_str("COMPATIBLE_SERVERS"))
except ValueError as err:
    raise ImproperlyConfigured(str(err)) from err
COMPATIBLE_SERVER_KEYS = {name: env_str(server_key_name(name)) for name in COMPATIBLE_SERVERS}
ANTHROPIC_API_KEY = env_str("ANTHROPIC_API_KEY")
ANTHROPIC_BASE_URL = env_str("ANTHROPIC_BASE_URL")
DEFAULT_AGENT_SPEC = env_str("DEFAULT_AGENT_SPEC", "offline:kb")
LLM_CACHE_DIR = env_str("LLM_CACHE_DIR", str(VAR_DIR / "llm-cache"))

# Tables: how long humans wait and how agents pace themselves next to humans.
AGENT_DELAY_SECONDS = env_float("AGENT_DELAY_SECONDS", 1.5)
# Per socket: a burst of moves, then this many a second (a person never notices; a flood is told
# to slow down). Browser tests that type faster than anyone raise it for their site.
SOCKET_MOVE_BURST = env_int("SOCKET_MOVE_BURST", 5)
SOCKET_MOVES_PER_SECOND = env_float("SOCKET_MOVES_PER_SECOND", 2.0)
# Every frame a socket sends (moves, heartbeats, junk): a burst, then per second. Frames beyond
# are dropped before they are read, with no database or rendering work.
SOCKET_FRAME_BURST = env_int("SOCKET_FRAME_BURST", 20)
SOCKET_FRAMES_PER_SECOND = env_float("SOCKET_FRAMES_PER_SECOND", 10.0)
# Open sockets per seat and per browser session, in each daphne process: one more is refused.
SOCKETS_PER_SEAT = env_int("SOCKETS_PER_SEAT", 3)
SOCKETS_PER_SESSION = env_int("SOCKETS_PER_SESSION", 6)
LOBBY_WAIT_SECONDS = env_int("LOBBY_WAIT_SECONDS", 120)
TURN_DEADLINE_SECONDS = env_int("TURN_DEADLINE_SECONDS", 120)
# An answer page (policy question, questionnaire) tells the server its person is there this often
# while it is visible and in use, so the study's idle limit counts from the last sign of life; it
# stops after the page has gone unused for the idle limit (at least the QUIET seconds).
PARTICIPANT_HEARTBEAT_SECONDS = env_int("PARTICIPANT_HEARTBEAT_SECONDS", 25)
PARTICIPANT_HEARTBEAT_QUIET_SECONDS = env_int("PARTICIPANT_HEARTBEAT_QUIET_SECONDS", 900)
# A Twenty Questions table pauses after this many questions in a row that its answering model
# could not answer (each is withdrawn, not counted); staff resume it from the live monitor.
MAX_ORACLE_FAILURES = env_int("MAX_ORACLE_FAILURES", 3)
# Model calls for agents at tables with people get a tighter budget than batch experiments (whose
# ProviderConfig defaults are a 60 s timeout and 4 retries): each call LIVE_MODEL_TIMEOUT_SECONDS
# with LIVE_MODEL_RETRIES retries, and the whole turn (a corrective follow-up included) at most
# LIVE_AGENT_TURN_SECONDS, after which the seat's failed move is made (an oracle withdraws the
# question). A person waiting on an agent is told after SLOW_AGENT_NOTICE_SECONDS that it is slow
# and what happens when the budget runs out.
LIVE_MODEL_TIMEOUT_SECONDS = env_float("LIVE_MODEL_TIMEOUT_SECONDS", 20)
LIVE_MODEL_RETRIES = env_int("LIVE_MODEL_RETRIES", 1)
LIVE_AGENT_TURN_SECONDS = env_float("LIVE_AGENT_TURN_SECONDS", 45)
SLOW_AGENT_NOTICE_SECONDS = env_float("SLOW_AGENT_NOTICE_SECONDS", 5)
# Model calls in flight at once, per spec, across the whole site (studyapp.slots; a hosted tier's
# limit on concurrent requests): MODEL_CALL_LIMITS="openai:gpt-4o=50,anthropic:claude-x=20" names
# specs, MODEL_CALL_LIMIT is every other spec's (0: no limit). A call waiting for a slot waits on
# its executor's loop, within the turn's live budget. A slot held longer than MODEL_SLOT_SECONDS
# is taken to be a dead holder's. MODEL_CALLS_PER_PROCESS caps one process's calls per provider.
MODEL_CALL_LIMIT = env_int("MODEL_CALL_LIMIT", 0)
MODEL_CALL_LIMITS = env_spec_counts("MODEL_CALL_LIMITS")
MODEL_SLOT_SECONDS = env_float(
    "MODEL_SLOT_SECONDS", LIVE_MODEL_TIMEOUT_SECONDS * (LIVE_MODEL_RETRIES + 1) + 30
)
MODEL_CALLS_PER_PROCESS = env_int("MODEL_CALLS_PER_PROCESS", 1000)
if MODEL_CALL_LIMIT < 0 or MODEL_CALLS_PER_PROCESS < 1 or MODEL_SLOT_SECONDS <= 0:
    raise ImproperlyConfigured(
        "MODEL_CALL_LIMIT must be 0 (no limit) or more, MODEL_CALLS_PER_PROCESS at least 1 and "
        "MODEL_SLOT_SECONDS more than 0"
    )
# A paused table no one resumed within this many seconds of its pause is ended by the sweep (an
# abort turn): a study books the round as ended and the person goes on (0: wait for staff).
PAUSED_TABLE_LIMIT_SECONDS = env_float("PAUSED_TABLE_LIMIT_SECONDS", 300)
# The live monitor marks a table stuck when an agent's turn (after its pause or blinded think
# time: studyapp.tables.timing.stuck_after) or a person's turn past their deadline has taken
# longer than this.
STUCK_AGENT_TURN_SECONDS = env_float("STUCK_AGENT_TURN_SECONDS", 60)
HEARTBEAT_SECONDS = env_int("HEARTBEAT_SECONDS", 15)

# Background jobs: a thread of the process running a job beats its heart every
# JOB_HEARTBEAT_SECONDS, however long the job itself stays silent (a model.generate loop, a slow
# model call); a running job whose heart has not beaten for JOB_STALE_SECONDS lost its process and
# is marked failed (resumable).
JOB_STALE_SECONDS = env_int("JOB_STALE_SECONDS", 600)
JOB_HEARTBEAT_SECONDS = env_float("JOB_HEARTBEAT_SECONDS", min(30.0, JOB_STALE_SECONDS / 4))
if not 0 < JOB_HEARTBEAT_SECONDS < JOB_STALE_SECONDS:
    raise ImproperlyConfigured("JOB_HEARTBEAT_SECONDS must be positive and below JOB_STALE_SECONDS")
# The dashboard's analysis (studyapp.dashboard.analysis_job): a computation queued or running whose row
# has been silent this long lost its process and is started again; a failed one is tried again.
# These limits and TABLE_JOB_LEASE_SECONDS are the claims' (studyapp.claims).
ANALYSIS_STALE_SECONDS = env_float("ANALYSIS_STALE_SECONDS", 600)

MEDIA_ROOT = VAR_DIR / "media"
MEDIA_URL = "/media/"
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"

LANGUAGE_CODE = "en"
# The languages a study can run in (Study.language): the participant and game pages are translated
# (locale/<code>/LC_MESSAGES/django.po); staff pages stay in English.
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
# Celery's own defaults, named: Celery reads each of these for every task it receives with a
# countdown (an agent turn) or sends, and a key missing from these settings is four times as slow
# to read (12 us against 3: it falls through the settings object to Celery's defaults).
CELERY_TIMEZONE = TIME_ZONE
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_SEND_SENT_EVENT = False
CELERY_BROKER_POOL_ACQUIRE_TIMEOUT = None
USE_I18N = True
USE_TZ = True

LOGIN_URL = "/admin/login/"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
# daphne serves /static/ itself (from the apps and static/, no collectstatic needed), so `make run`
# works with DEBUG off; SERVE_STATIC=0 when a proxy serves STATIC_ROOT instead.
SERVE_STATIC = env_bool("SERVE_STATIC", True)

# HTTPS, behind a TLS proxy (docs/production.md): HTTPS=1 makes the cookies secure, redirects plain
# HTTP and sends HSTS; SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto tells Django which header the proxy
# sets (only when the proxy always sets it). With these `manage.py check --deploy` is clean.
HTTPS = env_bool("HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS)
PROXY_SSL_HEADER = env_str("SECURE_PROXY_SSL_HEADER")
if PROXY_SSL_HEADER:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + PROXY_SSL_HEADER.upper().replace("-", "_"), "https")

# Whatever HTTPS says, the session and CSRF cookies are Secure on every response to a request
# that came over HTTPS (a trusted proxy's X-Forwarded-Proto counts; studyapp.middleware).

# Content-Security-Policy of every response (studyapp.middleware.ContentSecurityPolicy; empty: none).
# Scripts, styles, images and sockets from this site only ('self' covers ws:/wss: to it); the
# dashboard's figures may be data: URLs. No inline script or style on any page.
CONTENT_SECURITY_POLICY = env_str(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "frame-ancestors 'none'",
)

# Reverse proxies whose X-Forwarded-For is believed (addresses or networks, comma-separated; empty
# believes none): behind them a request's address (REMOTE_ADDR, a socket's client) is the one the
# proxy forwarded (studyapp.proxy). Loopback by default: a proxy on the same machine.
try:
    TRUSTED_PROXIES = _proxy.parse_networks(env_str("TRUSTED_PROXIES", "127.0.0.1/8,::1"))
except ValueError as _err:
    raise ImproperlyConfigured(str(_err)) from _err

# New participants per client address (REMOTE_ADDR, the forwarded one behind a trusted proxy): at
# most this many in 10 seconds and in a minute, then a 429 page.
# Pilot bots (a staff pilot token on the link) are not counted.
PARTICIPANT_RATE_BURST = env_int("PARTICIPANT_RATE_BURST", 10)
PARTICIPANT_RATE_PER_MINUTE = env_int("PARTICIPANT_RATE_PER_MINUTE", 30)
# Form posts of one participant (consent, checks, rounds, questionnaire, policy, withdraw) in a
# minute; more get a 429 page that says to wait a minute. A person posts a few a minute at most.
PARTICIPANT_POSTS_PER_MINUTE = env_int("PARTICIPANT_POSTS_PER_MINUTE", 30)

# Prolific's researcher API, for `manage.py prolific approve|pay SLUG` (docs/participants.md).
PROLIFIC_API_TOKEN = env_str("PROLIFIC_API_TOKEN")
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
# A bulk bonus payment whose pay call got no answer is paid again only if Prolific still shows
# none of it this long after (Prolific pays asynchronously, "in the following minutes").
PROLIFIC_SETTLE_SECONDS = env_int("PROLIFIC_SETTLE_SECONDS", 1800)
# A study's launch (docs/participants.md, Launching a study): the site's address for the study link
# a Prolific draft carries, and Prolific's fee on rewards when no token asks its cost calculator.
SITE_URL = env_str("SITE_URL")
PROLIFIC_FEE_RATE = env_str("PROLIFIC_FEE_RATE", "0.333")
# Model prices for a study's spend plan and budget (studyapp.participants.spend_plan), per million
# tokens (input, output) in MODEL_PRICE_CURRENCY; a study's model_prices replace them (in its own
# currency). Offline and local agents cost nothing; a model listed nowhere has no price, and the
# plan says so.
MODEL_PRICE_CURRENCY = "USD"
MODEL_PRICES = {
    "openai:gpt-4o-mini": ("0.15", "0.60"),
    "openai:gpt-4o": ("2.50", "10.00"),
    "openai:gpt-4.1-mini": ("0.40", "1.60"),
    "anthropic:claude-3-5-haiku-latest": ("0.80", "4.00"),
    "anthropic:claude-sonnet-4-0": ("3.00", "15.00"),
}

# Logs: warnings and errors to stderr. Nothing at INFO carries a secret word, a completion code or
# a session key (tests/studyapp/test_secrecy_attacks.py checks the captured log).
# Log lines carry time (UTC), level and logger; LOG_FORMAT=json writes one JSON object a line.
LOG_FORMAT = env_str("LOG_FORMAT", "text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be text or json, not {LOG_FORMAT!r}")
LOGGING = logging_config(LOG_FORMAT, env_str("LOG_LEVEL", "WARNING"))

# Error reporting (studyapp/errors.py), on only with a DSN: requests, Celery tasks and error log
# lines, scrubbed of participants' words and IDs; a participant's report names their pseudonym.
SENTRY_DSN = env_str("SENTRY_DSN")
if SENTRY_DSN:
    from studyapp.errors import init_sentry

    init_sentry(
        SENTRY_DSN,
        environment=env_str("SENTRY_ENVIRONMENT", "development" if DEBUG else "production"),
        release=env_str("SENTRY_RELEASE") or None,
    )
    MIDDLEWARE.append("studyapp.errors.ParticipantUserMiddleware")
