"""The peers our first-time and repeat answers are measured against, loaded with the same rows:
Datasette over SQLite, and PostGraphile 4 (Node) over PostgreSQL (Debian's), each started here on
loopback and stopped afterwards.

- `entries`: every ranked run of every cohort, as a leaderboard page shows it (indexed by cohort, rank).
- `dossiers`: one row per run with the fields of the benchmark's dossier document, flattened.

PostGraphile is installed by npm into `bench/peers/postgraphile/` (gitignored) on first use;
PostgreSQL runs as a throwaway cluster in a temporary directory (`initdb`, `pg_ctl`), as the
`postgres` user when this runs as root (the server refuses root). A peer that cannot start raises
`Unavailable`, and the benchmark reports its rows as skipped with the reason.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

__all__ = [
    "DOSSIER_COLUMNS",
    "ENTRY_COLUMNS",
    "POSTGRAPHILE_DOSSIER",
    "POSTGRAPHILE_LEADERBOARD",
    "Tables",
    "Unavailable",
    "datasette",
    "dossier_row",
    "postgraphile",
    "postgres",
    "sqlite_database",
]

ROOT = Path(__file__).resolve().parent
POSTGRAPHILE_VERSION = "4.14.1"
POSTGRAPHILE_HOME = ROOT / "peers" / "postgraphile"

ENTRY_COLUMNS = (
    ("cohort", "text"),
    ("rank", "integer"),
    ("tied", "integer"),
    ("digest", "text"),
    ("name", "text"),
    ("value", "double precision"),
    ("display", "text"),
    ("trust", "text"),
    ("implementation", "text"),
)
# The benchmark's dossier document (bench/__main__.py DOSSIER), one column per leaf; lists as JSON text.
_DOSSIER_PATHS = (
    ("digest", "text", ("digest",)),
    ("name", "text", ("name",)),
    ("rank", "integer", ("rank",)),
    ("primary_display", "text", ("primary", "display")),
    ("primary_statistic", "text", ("primary", "statistic")),
    ("cohort_key", "text", ("cohort", "key")),
    ("cohort_profile", "text", ("cohort", "profile")),
    ("leader_name", "text", ("leader", "name")),
    ("leader_display", "text", ("leader", "primary", "display")),
    ("source_summary", "text", ("sourceNative", "summary")),
    ("implementation_name", "text", ("implementation", "displayName")),
    ("implementation_revision", "text", ("implementation", "revision")),
    ("project_name", "text", ("implementation", "project", "displayName")),
    ("workload_label", "text", ("workload", "label")),
    ("protocol_harness", "text", ("protocol", "harness")),
    ("protocol_timer", "text", ("protocol", "timer")),
    ("environment_gpu", "text", ("environment", "gpu")),
    ("trust", "text", ("trust",)),
    ("eligible", "integer", ("eligible",)),
    ("ineligibility_reasons", "text", ("ineligibilityReasons",)),
    ("warnings", "text", ("warnings",)),
    ("published_at", "text", ("publishedAt",)),
    ("commit_id", "text", ("provenance", "commit", "id")),
    ("committed_at", "text", ("provenance", "commit", "committedAt")),
    ("license", "text", ("provenance", "license")),
    ("permalink", "text", ("permalink",)),
    ("citation", "text", ("citation",)),
)
DOSSIER_COLUMNS = tuple((name, kind) for name, kind, _ in _DOSSIER_PATHS)

POSTGRAPHILE_LEADERBOARD = """query($key: String!) {
  allEntries(condition: {cohort: $key}, orderBy: RANK_ASC, first: 20) {
  nodes { rank tied digest name value display trust implementation } } }"""
_CAMEL = (
    "".join(part.capitalize() if i else part for i, part in enumerate(name.split("_"))) for name, _ in DOSSIER_COLUMNS
)
POSTGRAPHILE_DOSSIER = f"query($id: String!) {{ dossierByDigest(digest: $id) {{ {' '.join(_CAMEL)} }} }}"


class Unavailable(RuntimeError):
    """A peer could not be started here (what is missing, or what it said)."""


@dataclass(frozen=True)
class Tables:
    entries: list[tuple[Any, ...]]
    dossiers: list[tuple[Any, ...]]


def dossier_row(run: dict[str, Any]) -> tuple[Any, ...]:
    """One `dossiers` row from our answer to the dossier document."""
    row: list[Any] = []
    for _, _, path in _DOSSIER_PATHS:
        value: Any = run
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, list):
            value = json.dumps(value)
        elif isinstance(value, bool):
            value = int(value)
        row.append(value)
    return tuple(row)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _wait(check: Any, process: subprocess.Popen[bytes], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise Unavailable(f"{what} exited with {process.returncode}")
        try:
            if check():
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise Unavailable(f"{what} did not answer within {timeout:.0f} s")
        time.sleep(0.05)


# Datasette over SQLite -----------------------------------------------------------------------------


def sqlite_database(path: Path, tables: Tables) -> Path:
    """The tables as one SQLite database at `path` (replaced), indexed as the queries need."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.unlink(missing_ok=True)
    with sqlite3.connect(temporary) as db:
        for table, columns, rows in (
            ("entries", ENTRY_COLUMNS, tables.entries),
            ("dossiers", DOSSIER_COLUMNS, tables.dossiers),
        ):
            declared = ", ".join(f"{name} {'real' if kind.startswith('double') else kind}" for name, kind in columns)
            db.execute(f"create table {table} ({declared}, primary key (digest))")
            marks = ", ".join("?" * len(columns))
            db.executemany(f"insert or ignore into {table} values ({marks})", rows)
        db.execute("create index entries_by_cohort on entries (cohort, rank)")
    temporary.replace(path)
    return path


@contextmanager
def datasette(database: Path) -> Iterator[str]:
    """Datasette serving `database` on loopback; yields its base URL.

    Raises:
        Unavailable: datasette is not installed or did not start.
    """
    import importlib.util

    if importlib.util.find_spec("datasette") is None:
        raise Unavailable("datasette is not installed (pip install -e '.[bench]')")
    port = _free_port()
    command = [sys.executable, "-m", "datasette", "serve", str(database), "--port", str(port)]
    command += ["--setting", "default_page_size", "20"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=5) as client:
            _wait(lambda: client.get(url + "/-/versions.json").status_code == 200, process, "datasette")
        yield url
    finally:
        _stop(process)


# PostGraphile over PostgreSQL ----------------------------------------------------------------------


def _postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise Unavailable("PostgreSQL is not installed (Debian: apt install postgresql)")
    return Path(initdb).parent


@contextmanager
def postgres(tables: Tables) -> Iterator[str]:
    """A throwaway PostgreSQL cluster holding the tables; yields its connection URL.

    Raises:
        Unavailable: PostgreSQL is missing or did not start.
    """
    binaries = _postgres_bin()
    as_user: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root
        if shutil.which("runuser") is None:
            raise Unavailable("running as root without runuser: cannot start PostgreSQL as another user")
        as_user = ["runuser", "-u", "postgres", "--"]
    directory = Path(tempfile.mkdtemp(prefix="kernelindex-bench-pg."))
    if as_user:
        shutil.chown(directory, "postgres")
    data, port = directory / "data", _free_port()
    started = False
    try:
        initdb = [
            str(binaries / "initdb"),
            "-D",
            str(data),
            "--auth=trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
        ]
        _run([*as_user, *initdb], "initdb")
        options = f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
        pg_ctl = [str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(directory / "log")]
        _run([*as_user, *pg_ctl, "start"], "pg_ctl start")
        started = True
        dsn = f"postgres://postgres@127.0.0.1:{port}/postgres"
        _load(binaries, dsn, tables)
        yield dsn
    finally:
        if started:
            subprocess.run([*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                           capture_output=True, check=False)  # fmt: skip
        shutil.rmtree(directory, ignore_errors=True)


def _run(command: Sequence[str], what: str, stdin: bytes | None = None) -> None:
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, check=False)
    except OSError as exc:
        raise Unavailable(f"{what}: {exc}") from None
    if done.returncode != 0:
        raise Unavailable(f"{what} failed: {done.stderr.decode(errors='replace').strip()[-300:]}")


def _load(binaries: Path, dsn: str, tables: Tables) -> None:
    """Create and fill the tables with COPY (psql), then index and analyze them."""
    psql = [str(binaries / "psql"), dsn, "-v", "ON_ERROR_STOP=1", "-q"]
    statements = []
    for table, columns in (("entries", ENTRY_COLUMNS), ("dossiers", DOSSIER_COLUMNS)):
        declared = ", ".join(f"{name} {kind}" for name, kind in columns)
        statements.append(f"create table {table} ({declared}, primary key (digest));")
    _run([*psql, "-c", " ".join(statements)], "psql create")
    for table, rows in (("entries", tables.entries), ("dossiers", tables.dossiers)):
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        seen = set()
        for row in rows:
            if row[3 if table == "entries" else 0] in seen:
                continue  # a run ranked in one cohort only; the primary key holds one row
            seen.add(row[3 if table == "entries" else 0])
            writer.writerow(["\\N" if v is None else int(v) if isinstance(v, bool) else v for v in row])
        copy = f"\\copy {table} from stdin with (format csv, null '\\N')"
        _run([*psql, "-c", copy], f"psql copy {table}", buffer.getvalue().encode())
    _run([*psql, "-c", "create index entries_by_cohort on entries (cohort, rank); analyze;"], "psql index")


def _postgraphile_bin() -> Path:
    """PostGraphile's command, installed by npm beside this file on first use."""
    binary = POSTGRAPHILE_HOME / "node_modules" / ".bin" / "postgraphile"
    if binary.exists():
        return binary
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise Unavailable("Node.js and npm are needed for PostGraphile")
    POSTGRAPHILE_HOME.mkdir(parents=True, exist_ok=True)
    manifest = {"private": True, "dependencies": {"postgraphile": POSTGRAPHILE_VERSION}}
    (POSTGRAPHILE_HOME / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    command = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run(command, cwd=POSTGRAPHILE_HOME, capture_output=True, check=False)
    if done.returncode != 0 or not binary.exists():
        raise Unavailable(f"npm install postgraphile failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
    return binary


@contextmanager
def postgraphile(dsn: str) -> Iterator[str]:
    """PostGraphile serving the database at `dsn` on loopback; yields its base URL (`/graphql`).

    Raises:
        Unavailable: it could not be installed or did not start.
    """
    binary = _postgraphile_bin()
    port = _free_port()
    command = [str(binary), "--connection", dsn, "--schema", "public", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--disable-query-log", "--disable-graphiql"]
    env = {**os.environ, "NODE_ENV": "production"}
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env
    )
    url = f"http://127.0.0.1:{port}"
    probe = {"query": "{ __typename }"}
    try:
        with httpx.Client(timeout=5) as client:
            _wait(lambda: client.post(url + "/graphql", json=probe).status_code == 200, process, "postgraphile")
        yield url
    finally:
        _stop(process)
