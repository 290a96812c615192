"""A throwaway PostgreSQL cluster for the tests: ``initdb`` into a fresh folder, ``pg_ctl``
start on 127.0.0.1 at a free port, one new database per test, removed at the end.

The server binaries come from Debian's ``postgresql`` package (``.ci/run`` installs it when
missing).  ``initdb`` refuses to run as root, so under root the cluster runs as the
``postgres`` system user the package creates.  Where no server is installed the tests that
need one skip, saying so; under ``CI=true`` they fail instead, because CI always installs one.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresCluster", "find_server_binaries", "start_cluster"]


def find_server_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (newest Debian version first), or None."""
    on_path = shutil.which("initdb")
    if on_path is not None and shutil.which("pg_ctl") is not None:
        return Path(os.path.realpath(on_path)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_major_version, reverse=True)
    return Path(candidates[0]).parent if candidates else None


def _major_version(path: str) -> int:
    try:
        return int(Path(path).parent.parent.name)
    except ValueError:
        return 0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresCluster:
    """A running cluster; ``url()`` gives a connection URL, ``new_database()`` an empty database."""

    bin_dir: Path
    root: Path
    port: int
    run_as: str | None

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self, prefix: str = "t") -> str:
        """Create an empty database with a unique name; returns its URL."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=120)

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(bin_dir: Path) -> PostgresCluster:
    """``initdb`` a new cluster (trust auth, superuser ``postgres``) and start it on 127.0.0.1."""
    run_as = "postgres" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="goldeneval-pg-"))
    if run_as is not None:
        user = pwd.getpwnam(run_as)
        os.chown(root, user.pw_uid, user.pw_gid)
    os.chmod(root, 0o700)
    cluster = PostgresCluster(bin_dir=bin_dir, root=root, port=_free_port(), run_as=run_as)
    try:
        cluster._run("initdb", "-D", str(cluster.data_dir), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={cluster.port} -c unix_socket_directories={root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        cluster._run(
            "pg_ctl", "-D", str(cluster.data_dir), "-o", options, "-l", str(root / "server.log"), "-w", "start"
        )
        _wait_until_accepting(cluster)
    except BaseException as exc:
        log = root / "server.log"
        detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        if isinstance(exc, subprocess.CalledProcessError):
            detail = f"{exc.stderr}\n{detail}"
        cluster.stop()
        raise RuntimeError(f"could not start a throwaway PostgreSQL cluster: {exc}\n{detail}") from exc
    return cluster


def _wait_until_accepting(cluster: PostgresCluster, timeout_s: float = 30.0) -> None:
    import psycopg

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with psycopg.connect(cluster.url(), connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
