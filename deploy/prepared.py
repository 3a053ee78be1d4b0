"""Whether the site's database is as the last `make production` left it, without starting Django.

    deploy/prepared.py check VAR_DIR/prepared   # exit 0: nothing to migrate or seed
    deploy/prepared.py write VAR_DIR/prepared   # after manage.py prepare_site succeeded

Starting Django costs a restart several seconds (tens on a busy machine: it imports every app,
the model SDKs included), only to find that no migration waits and the demo studies exist. The
stamp this writes holds what that start found:

- a fingerprint of the code that decides the schema and the seed: every migration file of the
  project, the seed command, and the installed environment's stamp (.venv/.installed-*: a new
  Django brings its own migrations with a new lock file) and DATABASE_URL;
- the database's own answer: how many migrations it has applied, whether the staff login and the
  two demo studies are there.

``check`` computes both again (one query over a plain psycopg connection) and succeeds only when
both match; anything else (another database, a migration added or unapplied, a demo study
deleted, the database unreachable) sends `make production` to ``manage.py prepare_site``, which
migrates and seeds what is missing and then writes a new stamp.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIGNATURE = """
SELECT (SELECT count(*) FROM django_migrations),
       (SELECT count(*) FROM auth_user WHERE username = 'researcher'),
       (SELECT count(*) FROM participants_study WHERE slug IN ('demo', 'demo-undercover'))
"""


def fingerprint(database_url: str, root: Path = ROOT) -> str:
    digest = hashlib.sha256(database_url.encode())
    files = sorted(root.glob("studyapp/**/migrations/*.py"))
    files += [root / "studyapp/participants/management/commands/seed_demo.py"]
    files += sorted((root / ".venv").glob(".installed-*"))
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def signature(database_url: str) -> list[int]:
    import psycopg

    with psycopg.connect(database_url, connect_timeout=5) as conn:
        row = conn.execute(SIGNATURE).fetchone()
    return [int(n) for n in row]


def current(database_url: str, root: Path = ROOT) -> dict:
    return {"fingerprint": fingerprint(database_url, root), "signature": signature(database_url)}


def check(stamp: Path, database_url: str, root: Path = ROOT) -> bool:
    try:
        kept = json.loads(stamp.read_text())
        return kept == current(database_url, root)
    except Exception:  # no stamp, another layout, the database away: prepare_site decides
        return False


def write(stamp: Path, database_url: str, root: Path = ROOT) -> None:
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(current(database_url, root)) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("check", "write"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    url = os.environ.get("DATABASE_URL", "")
    stamp = Path(argv[2])
    if argv[1] == "write":
        write(stamp, url)
        return 0
    if check(stamp, url):
        print(f"Database as the last start left it ({stamp}): nothing to migrate or seed.")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
