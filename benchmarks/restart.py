"""How long `make production` keeps people waiting after a crash, as JSON: the seconds from
``kill -9`` of supervisord (its children stop with it, deploy/supervised) and `make production`
started again at once, to the first 200 of ``/healthz`` served by the new processes (a daphne, a
worker answering Celery's ping and a steps executor); and from ``kill -9`` of one daphne, which
supervisord starts again on its own, to the first page (``/``) that daphne serves.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/restart REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python benchmarks/restart.py [--runs 3] [--no-install]

Each run's figures come with the machine's load average, since every process's start is mostly
Python importing the site. ``--no-install`` runs ``make -o install production``, for a checkout
that shares an environment installed from another one (the install stamp would not match).
Everything the script starts is stopped at the end; VAR_DIR is a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.ws_load import free_port  # noqa: E402


def answer(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=15) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code
    except OSError:
        return 0


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (daphne, the executor, the worker and its pool, beat)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


class Site:
    def __init__(self, var_dir: Path, web: int, install: bool) -> None:
        self.var_dir = var_dir
        self.port = free_port()
        self.web = web
        self.install = install
        self.env = {
            **os.environ,
            "VAR_DIR": str(var_dir),
            "PORT": str(self.port),
            "WEB": str(web),
            "SECRET_KEY": os.environ.get("SECRET_KEY", "restart-benchmark-only"),
            "CELERY_BROKER_URL": os.environ["REDIS_URL"],
        }
        self.make: subprocess.Popen | None = None
        self.log = (var_dir / "make.out").open("a")

    def start(self) -> None:
        command = ["make", *(() if self.install else ("-o", "install")), "production"]
        self.make = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def supervisord(self) -> int:
        return int((self.var_dir / "supervisord.pid").read_text())

    def ctl(self, *args: str) -> str:
        ctl = Path(sys.executable).with_name("supervisorctl")
        config = str(ROOT / "deploy" / "supervisord.conf")
        return subprocess.run(
            [str(ctl), "-c", config, *args], cwd=ROOT, env=self.env, capture_output=True,
            text=True, timeout=30,
        ).stdout  # fmt: skip

    def wait(self, url: str, limit: float, gone: set[int] = frozenset()) -> tuple[float, float]:
        """Seconds until ``url`` answers at all (a 503 while a check fails: the daphne is up) and
        until it answers 200, both once every process in ``gone`` has exited."""
        started, up = time.monotonic(), None
        while time.monotonic() - started < limit:
            if not any(alive(p) for p in gone):
                status = answer(url)
                if status and up is None:
                    up = time.monotonic() - started
                if status == 200:
                    return up or 0.0, time.monotonic() - started
            time.sleep(0.05)
        raise TimeoutError(f"{url} gave no 200 in {limit} s; see {self.var_dir}/make.out")

    def stop(self) -> None:
        if self.make is not None and self.make.poll() is None:
            os.killpg(self.make.pid, signal.SIGTERM)
            try:
                self.make.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.make.pid, signal.SIGKILL)
                self.make.wait()
        self.log.close()


def run(site: Site) -> dict[str, float]:
    healthz = f"http://127.0.0.1:{site.port}/healthz"
    supervisord = site.supervisord()
    old = descendants(supervisord)
    load = os.getloadavg()[0]
    killed = time.monotonic()
    os.kill(supervisord, signal.SIGKILL)
    assert site.make is not None
    site.make.wait(timeout=30)
    site.start()
    up, ok = site.wait(healthz, 180, old)
    to_healthz = time.monotonic() - killed
    to_daphne = to_healthz - (ok - up)
    second = site.port + 1 if site.web > 1 else site.port
    time.sleep(3)  # past startsecs: the daphne is RUNNING, as a crash would find it
    daphne = int(site.ctl("pid", f"web:web-{second}").strip())
    page = f"http://127.0.0.1:{second}/"
    daphne_load = os.getloadavg()[0]
    killed = time.monotonic()
    os.kill(daphne, signal.SIGKILL)
    site.wait(page, 120, {daphne})
    return {
        "supervisord_kill_to_healthz_s": round(to_healthz, 2),
        "supervisord_kill_to_first_answer_s": round(to_daphne, 2),
        "load_before": round(load, 2),
        "daphne_kill_to_page_s": round(time.monotonic() - killed, 2),
        "load_before_daphne": round(daphne_load, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--web", type=int, default=2)
    parser.add_argument("--no-install", action="store_true")
    args = parser.parse_args()
    for name in ("DATABASE_URL", "REDIS_URL"):
        if not os.environ.get(name):
            sys.exit(f"{name} is required (PostgreSQL and Redis, as make production needs)")
    runs = []
    # beat may still write its schedule file as it stops: the folder's removal is best effort
    with tempfile.TemporaryDirectory(prefix="restart-", ignore_cleanup_errors=True) as folder:
        site = Site(Path(folder), args.web, not args.no_install)
        try:
            site.start()  # the first start may migrate and seed: not timed
            site.wait(f"http://127.0.0.1:{site.port}/healthz", 600)
            for _ in range(args.runs):
                runs.append(run(site))
                print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
        finally:
            site.stop()
    print(json.dumps({"code": str(ROOT), "web": args.web, "runs": runs}, indent=2))


if __name__ == "__main__":
    main()
