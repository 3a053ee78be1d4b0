"""The daphne pool size that lets every process `make production` starts find its connections.

    deploy/connections.py        # prints the DB_POOL_SIZE to start daphne with; exit 2 when none fits

Each process keeps a PostgreSQL pool of its own (docs/production.md, "The connection budget"):
WEB daphnes of DB_POOL_SIZE each, STEPS executors of STEPS_DB_THREADS + 1, WORKERS Celery workers
of WORKER_CONCURRENCY x WORKER_DB_POOL_SIZE + 1, beat 1, and a few for commands. Started with
more daphnes or workers than the server's `max_connections` (less its reserved connections,
the role's own limit and the connections other clients hold now) can serve, the site would fail
moves with "couldn't get a connection" the first time a crowd arrives. So before supervisord
starts anything, this reads the processes' sizes from the environment (the same defaults as
studyapp/settings.py: tests/studyapp/test_make_production.py keeps them equal), asks the server
once (plain psycopg, no Django: a restart stays quick), and

- prints DB_POOL_SIZE unchanged when the sum fits;
- when it does not and DB_POOL_SIZE was not set, prints the largest daphne pool that fits (at
  least MIN_POOL) with one line on stderr saying why;
- otherwise exits 2 naming the sum, what the server has, and what to change.

The database unreachable: it prints DB_POOL_SIZE unchanged (the site's own health check says
why the database is away; refusing to start here would only hide that).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

# The defaults of studyapp/settings.py (kept equal by a test).
DEFAULTS = {
    "WEB": 2,
    "STEPS": 1,
    "WORKERS": 1,
    "DB_POOL_SIZE": 8,
    "STEPS_DB_THREADS": 4,
    "WORKER_CONCURRENCY": 4,
    "WORKER_DB_POOL_SIZE": 2,
}
COMMANDS = 3  # manage.py commands, psql and the like beside the site
MIN_POOL = 4  # below it a daphne's sockets and pages queue for connections (docs/production.md)

FREE = """
SELECT current_setting('max_connections')::int
       - current_setting('superuser_reserved_connections')::int,
       (SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user),
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),
       (SELECT count(*) FROM pg_stat_activity
         WHERE backend_type = 'client backend' AND usename = current_user)
"""


def sizes(env: Mapping[str, str]) -> dict[str, int]:
    """The processes' counts and pool sizes, from ``env`` or the settings' defaults."""
    found = {}
    for name, default in DEFAULTS.items():
        value = env.get(name, "").strip() or str(default)
        try:
            found[name] = int(value)
        except ValueError:
            raise SystemExit(f"connections: {name} must be a whole number, not {value!r}") from None
    return found


def others(size: dict[str, int]) -> int:
    """Connections of every process but the daphnes, plus room for commands."""
    steps = size["STEPS"] * (size["STEPS_DB_THREADS"] + 1)
    workers = size["WORKERS"] * (size["WORKER_CONCURRENCY"] * size["WORKER_DB_POOL_SIZE"] + 1)
    return steps + workers + 1 + COMMANDS  # + beat


def needed(size: dict[str, int]) -> int:
    """Connections the site may hold at once, commands included.

    >>> needed(sizes({}))
    34
    """
    return size["WEB"] * size["DB_POOL_SIZE"] + others(size)


def choose(size: dict[str, int], free: int, pool_given: bool) -> tuple[int, str]:
    """The daphne pool size to start with and a line saying why ("" when unchanged); raises
    SystemExit with the reason when no pool fits.

    >>> choose(sizes({}), 97, False)
    (8, '')
    >>> choose(sizes({"WEB": "4"}), 40, False)[0]
    5
    """
    if size["DB_POOL_SIZE"] == 0 or needed(size) <= free:
        return size["DB_POOL_SIZE"], ""
    fits = (free - others(size)) // max(size["WEB"], 1)
    if not pool_given and fits >= MIN_POOL:
        return fits, (
            f"connections: {needed(size)} needed with DB_POOL_SIZE {size['DB_POOL_SIZE']}, the "
            f"server has {free} free: each of the {size['WEB']} daphnes gets a pool of {fits}"
        )
    raise SystemExit(
        f"connections: the site needs {needed(size)} PostgreSQL connections ({size['WEB']} daphne "
        f"x DB_POOL_SIZE {size['DB_POOL_SIZE']}, {size['STEPS']} executor(s), {size['WORKERS']} "
        f"worker(s) of {size['WORKER_CONCURRENCY']}, beat, {COMMANDS} for commands) and the "
        f"server has {free} free: lower WEB, WORKERS, DB_POOL_SIZE or WORKER_CONCURRENCY, or raise "
        "max_connections (docs/production.md, 'The connection budget')"
    )


def free_connections(database_url: str) -> int:
    """What the server lets this role open beside what other clients hold now."""
    import psycopg

    with psycopg.connect(database_url, connect_timeout=5) as conn:
        server, role_limit, everyone, mine = conn.execute(FREE).fetchone()
    free = server - everyone + 1  # this connection closes before the site starts
    if role_limit is not None and role_limit >= 0:
        free = min(free, role_limit - mine + 1)
    return int(free)


def main(env: Mapping[str, str]) -> int:
    size = sizes(env)
    try:
        free = free_connections(env.get("DATABASE_URL", ""))
    except Exception:  # noqa: BLE001 - the database away: the site's health check says why
        print(size["DB_POOL_SIZE"])
        return 0
    try:
        pool, why = choose(size, free, bool(env.get("DB_POOL_SIZE", "").strip()))
    except SystemExit as refused:
        print(refused, file=sys.stderr)
        return 2
    if why:
        print(why, file=sys.stderr)
    print(pool)
    return 0


if __name__ == "__main__":
    sys.exit(main(os.environ))
