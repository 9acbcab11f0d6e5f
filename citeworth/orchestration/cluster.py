"""``citeworth cluster``: a native multi-host Airflow cluster on this machine, every "host" a folder of
its own, sharing nothing but what real hosts share: the git remote, S3 and the broker/DB.

    citeworth cluster up --dir CLUSTER [--project CHECKOUT] [--cpu-workers 2] [--gpu-workers 1]
    citeworth cluster status --dir CLUSTER
    citeworth cluster down --dir CLUSTER

All state lives under CLUSTER (git-ignored by its own .gitignore), all services on 127.0.0.1:

- ``postgres/``: a PostgreSQL cluster made by ``initdb`` (run as the ``postgres`` user when root),
  database ``airflow``: the metadata DB and Celery's result backend;
- ``redis-server`` (its append-only file synced on every write): the Celery broker;
- ``moto_server``: the S3 API, with the DVC remote's bucket ``citeworth-dvc`` and ``citeworth-logs``
  for remote task logs;
- ``git/citeworth.git``: a bare clone of CHECKOUT's commits, the git remote of every host;
- ``hosts/<name>/``: ``airflow/`` (AIRFLOW_HOME), ``home/`` (HOME), ``project/`` (its own clone,
  with its own DVC cache, whose dags/ and plugins/ it runs), ``scratch/runs`` (run workspaces).
  ``scheduler`` runs api-server, scheduler, dag-processor and triggerer (after ``citeworth airflow
  setup``); ``cpu1..N`` a Celery worker on queue ``cpu`` (cpu1 also ``versioning``: it holds push
  rights); ``gpu1..M`` a worker on queue ``gpu``. One task slot per worker.
- ``secrets.env`` (0600): generated secrets; ``cluster.json``: ports and hosts; ``logs/``, ``pids/``.

Every host's environment comes from docker/cluster.env (the settings all hosts share, the same file
docker/compose.yaml uses) interpolated with the secrets and the cluster's addresses, plus the host's
own folders. Workers start as on any deployment, through ``citeworth cluster worker``
(``citeworth.orchestration.airflow_worker``: the jwt_secret check, then Airflow's Celery worker).
This module is a development and test harness: nothing of a real deployment imports it.

``up`` waits until the API server reports every component healthy and each worker answers a
Celery ping on its queues, or names the failing component with the tail of its log. ``down`` stops
everything (TERM, then KILL after a timeout) and may be run any number of times; the data stays for
the next ``up``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from citeworth.orchestration.envfile import EnvFileError, read_env_file

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED_ENV_FILE = PROJECT_ROOT / "docker" / "cluster.env"
BUCKETS = ("citeworth-dvc", "citeworth-logs")
SCHEDULER_HOST = "scheduler"
SERVICES = ("postgres", "redis", "s3")
SCHEDULER_COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
SECRET_NAMES = ("AIRFLOW_JWT_SECRET", "AIRFLOW_API_SECRET_KEY", "POSTGRES_PASSWORD", "REDIS_PASSWORD",
                "CITEWORTH_S3_ACCESS_KEY", "CITEWORTH_S3_SECRET_KEY")
STOP_TIMEOUT_S = 30
DEFAULT_CPU_WORKERS, DEFAULT_GPU_WORKERS = 2, 1
UP_TIMEOUT_S = 300
# The broker's queue on disk, each write synced before Redis answers: a broker killed (kill -9) and
# started again still holds every task the scheduler queued (without it those tasks would wait in
# "queued" until task_queued_timeout, two days). A broker's writes are few: "always" costs nothing.
REDIS_PERSISTENCE = ("--save", "", "--appendonly", "yes", "--appendfsync", "always")


class ClusterError(RuntimeError):
    """A component that did not start or is not healthy; the message names it."""


@dataclass(frozen=True)
class Host:
    name: str
    queues: tuple[str, ...] = ()  # empty: the scheduler host (no worker)


def host_name() -> str:
    """Airflow's ``[core] hostname_callable`` on the native cluster's hosts: the host's name (they
    share one machine name), so each task instance records the host that ran it."""
    return os.environ.get("CITEWORTH_HOST") or socket.getfqdn()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    """The cluster in ``root``: its layout, the hosts' environments, its processes."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.state_file = self.root / "cluster.json"
        self.secrets_file = self.root / "secrets.env"
        self.bare_repo = self.root / "git" / "citeworth.git"
        self.pg_data = self.root / "postgres" / "data"
        self.started: dict[str, subprocess.Popen] = {}  # this process's children, reaped when they exit

    # -- state -------------------------------------------------------------------------------------
    def create(self, project: Path, cpu_workers: int, gpu_workers: int, settings: dict[str, str]) -> None:
        """Write cluster.json (ports kept from an earlier ``up``) and secrets.env (once)."""
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / ".gitignore").write_text("*\n")
        ports = self.state()["ports"] if self.state_file.exists() else {
            name: _free_port() for name in ("postgres", "redis", "s3", "api")}
        hosts = [[SCHEDULER_HOST, []]]
        hosts += [[f"cpu{i}", ["cpu", "versioning"] if i == 1 else ["cpu"]]
                  for i in range(1, cpu_workers + 1)]
        hosts += [[f"gpu{i}", ["gpu"]] for i in range(1, gpu_workers + 1)]
        state = {"project": str(project.resolve()), "ports": ports, "hosts": hosts, "settings": settings}
        self.state_file.write_text(json.dumps(state, indent=2))
        if not self.secrets_file.exists():
            from cryptography.fernet import Fernet

            values = {name: secrets.token_urlsafe(64) for name in SECRET_NAMES}
            values["AIRFLOW_FERNET_KEY"] = Fernet.generate_key().decode()
            descriptor = os.open(self.secrets_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as out:
                out.write("".join(f"{key}={value}\n" for key, value in values.items()))

    def state(self) -> dict:
        if not self.state_file.exists():
            raise ClusterError(f"no cluster in {self.root} (run `citeworth cluster up --dir {self.root}`)")
        return json.loads(self.state_file.read_text())

    @property
    def ports(self) -> dict[str, int]:
        return self.state()["ports"]

    @property
    def hosts(self) -> list[Host]:
        return [Host(name, tuple(queues)) for name, queues in self.state()["hosts"]]

    @property
    def workers(self) -> list[Host]:
        return [host for host in self.hosts if host.queues]

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['api']}"

    @property
    def s3_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3']}"

    def api_session(self):
        """A requests session holding a token of the API server's simple auth manager (user admin,
        the password Airflow generated on the scheduler host)."""
        import requests

        home = self.host_dir(SCHEDULER_HOST) / "airflow"
        password = json.loads((home / "simple_auth_manager_passwords.json.generated").read_text())["admin"]
        login = {"username": "admin", "password": password}
        token = requests.post(f"{self.api_url}/auth/token", json=login, timeout=10).json()["access_token"]
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        return session

    def s3(self):
        """A boto3 client of the cluster's S3 API, with its keys."""
        import boto3

        keys = self.secrets()
        return boto3.client("s3", endpoint_url=self.s3_endpoint, region_name="us-east-1",
                            aws_access_key_id=keys["CITEWORTH_S3_ACCESS_KEY"],
                            aws_secret_access_key=keys["CITEWORTH_S3_SECRET_KEY"])

    def host_dir(self, host: str) -> Path:
        return self.root / "hosts" / host

    def clone(self, host: str) -> Path:
        return self.host_dir(host) / "project"

    # -- environments ------------------------------------------------------------------------------
    def secrets(self) -> dict[str, str]:
        return read_env_file(self.secrets_file, {})

    def shared_env(self) -> dict[str, str]:
        """docker/cluster.env with this cluster's secrets and 127.0.0.1 addresses."""
        ports = self.ports
        addresses = {"CITEWORTH_API_URL": self.api_url, "CITEWORTH_S3_ENDPOINT": self.s3_endpoint,
                     "CITEWORTH_POSTGRES_ADDRESS": f"127.0.0.1:{ports['postgres']}",
                     "CITEWORTH_REDIS_ADDRESS": f"127.0.0.1:{ports['redis']}",
                     "CITEWORTH_GIT_REMOTE": self.bare_repo.as_uri()}
        return read_env_file(SHARED_ENV_FILE, {**self.secrets(), **addresses})

    def host_env(self, host: str) -> dict[str, str]:
        """The environment of every process of ``host``: the caller's, less any Airflow, citeworth or
        AWS setting of its own (CITEWORTH_MIRROR passes), plus the shared settings and the host's folders."""
        folder, clone = self.host_dir(host), self.clone(host)
        inherited = {key: value for key, value in os.environ.items()
                     if not key.startswith(("AIRFLOW", "CITEWORTH_", "AWS_"))
                     and key not in ("PYTHONPATH", "HOME")}
        if "CITEWORTH_MIRROR" in os.environ:
            inherited["CITEWORTH_MIRROR"] = os.environ["CITEWORTH_MIRROR"]
        venv_bin = str(Path(sys.executable).parent)
        return {**inherited, **self.shared_env(),
                "PATH": f"{venv_bin}{os.pathsep}{inherited.get('PATH', os.defpath)}",
                "HOME": str(folder / "home"), "AIRFLOW_HOME": str(folder / "airflow"),
                "PYTHONPATH": str(clone),  # the host runs its own clone's code
                "AIRFLOW__CORE__DAGS_FOLDER": str(clone / "dags"),
                "AIRFLOW__CORE__PLUGINS_FOLDER": str(clone / "plugins"),
                "AIRFLOW__CORE__HOSTNAME_CALLABLE": f"{__name__}.host_name",
                "CITEWORTH_HOST": host, "CITEWORTH_PROJECT_DIR": str(clone),
                "CITEWORTH_WORKSPACES": str(folder / "scratch" / "runs"),
                **self.state()["settings"]}

    # -- processes ---------------------------------------------------------------------------------
    def pid_file(self, component: str) -> Path:
        return self.root / "pids" / f"{component}.pid"

    def log_file(self, component: str) -> Path:
        return self.root / "logs" / f"{component}.log"

    def pid(self, component: str) -> int | None:
        """The process group of ``component`` when any process of it still runs."""
        if component in self.started:
            self.started[component].poll()  # a dead child of ours stays a zombie (still "there") till reaped
        try:
            pid = int(self.pid_file(component).read_text())
            os.killpg(pid, 0)
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return None
        return pid

    def components(self) -> list[str]:
        """Every component in start order (``down`` stops them in reverse)."""
        return [*SERVICES, *(f"{SCHEDULER_HOST}/{name}" for name in SCHEDULER_COMPONENTS),
                *(f"{host.name}/worker" for host in self.workers)]

    def start(self, component: str, argv: list[str], env: dict[str, str], cwd: Path,
              run_as: str | None = None) -> None:
        """``argv`` in a session of its own (its group is what ``down`` stops), logging to logs/."""
        for folder in (self.pid_file(component).parent, self.log_file(component).parent):
            folder.mkdir(parents=True, exist_ok=True)
        with open(self.log_file(component), "ab") as log:
            process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       user=run_as, group=run_as, extra_groups=[] if run_as else None)
        self.started[component] = process
        self.pid_file(component).write_text(str(process.pid))

    def stop(self, *components: str) -> None:
        """Ask each of ``components`` to stop, all at once; kill what still runs after the timeout."""
        asked = {component: pid for component in components if (pid := self.pid(component)) is not None}
        for component, pid in asked.items():
            # The leader only: it stops its own children (a Celery worker's task subprocesses would
            # die mid-write on a signal of their own). PostgreSQL: SIGINT is its fast shutdown
            # (SIGTERM waits for every client to leave).
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT if component == "postgres" else signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while ((left := [name for name in asked if self.pid(name) is not None])
               and time.monotonic() < deadline):
            time.sleep(0.2)
        for component in left:
            print(f"{component} still runs {STOP_TIMEOUT_S} s after it was asked to stop: killing it",
                  file=sys.stderr)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(asked[component], signal.SIGKILL)
        while any(self.pid(name) is not None for name in left):
            time.sleep(0.1)
        for component in components:
            self.pid_file(component).unlink(missing_ok=True)

    def failure(self, component: str, what: str) -> ClusterError:
        log = self.log_file(component)
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:]) if log.exists() else "(no log)"
        return ClusterError(f"{component} {what}; the end of {log}:\n{tail}")

    def ensure_running(self, component: str) -> None:
        if self.pid(component) is None:
            raise self.failure(component, "exited")

    def status(self) -> dict[str, int | None]:
        return {component: self.pid(component) for component in self.components()}


# -- bringing it up ----------------------------------------------------------------------------------
def _postgres_bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
                                                   reverse=True)), None)
    if found is None:
        raise ClusterError(f"{name} not found on PATH or in /usr/lib/postgresql/*/bin "
                           "(Debian: apt-get install postgresql)")
    return str(found)


def _program(name: str, package: str) -> str:
    beside_python = Path(sys.executable).with_name(name)
    found = str(beside_python) if beside_python.exists() else shutil.which(name)
    if found is None:
        raise ClusterError(f"{name} not found (install {package})")
    return found


def _run(argv: list[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        output = (done.stderr or done.stdout).strip()[-3000:]
        raise ClusterError(f"{what} failed (exit {done.returncode}): {output}")
    return done


def _wait(what: str, ready, cluster: Cluster, component: str, timeout_s: float = UP_TIMEOUT_S) -> None:
    """Poll ``ready()`` until true; fail naming ``component`` when it exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        cluster.ensure_running(component)
        if time.monotonic() > deadline:
            raise cluster.failure(component, f"is not {what} after {timeout_s:.0f} s")
        time.sleep(1)


def _start_postgres(cluster: Cluster) -> None:
    """initdb once (superuser ``airflow`` with the generated password), then the server, then the DB."""
    run_as = "postgres" if os.geteuid() == 0 else None  # initdb and postgres refuse to run as root
    password = cluster.secrets()["POSTGRES_PASSWORD"]
    folder = cluster.pg_data.parent
    folder.mkdir(parents=True, exist_ok=True)
    cluster.log_file("postgres").parent.mkdir(parents=True, exist_ok=True)
    cluster.log_file("postgres").touch()
    if run_as:
        for path in (folder, cluster.log_file("postgres")):
            shutil.chown(path, run_as, run_as)
        _run(["runuser", "-u", run_as, "--", "test", "-w", str(folder)],
             f"a check that user {run_as} can write {folder} (every folder above it must be "
             "searchable by others, e.g. chmod o+x)")
    if not (cluster.pg_data / "PG_VERSION").exists():
        password_file = folder / "password"
        password_file.write_text(password + "\n")
        if run_as:
            shutil.chown(password_file, run_as, run_as)
        try:
            _run([_postgres_bin("initdb"), "-D", str(cluster.pg_data), "-U", "airflow", "--pwfile",
                  str(password_file), "--auth=scram-sha-256", "-E", "UTF8"], "initdb",
                 user=run_as, group=run_as, extra_groups=[] if run_as else None)
        finally:
            password_file.unlink()
    port = cluster.ports["postgres"]
    cluster.start("postgres", [_postgres_bin("postgres"), "-D", str(cluster.pg_data), "-p", str(port),
                               "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={folder}"],
                  {**os.environ, "HOME": str(folder)}, folder, run_as=run_as)

    import psycopg2

    def accepting() -> bool:
        try:
            connection = psycopg2.connect(host="127.0.0.1", port=port, user="airflow", password=password,
                                          dbname="postgres", connect_timeout=2)
        except psycopg2.OperationalError:
            return False
        connection.autocommit = True  # CREATE DATABASE refuses to run in a transaction
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1 FROM pg_database WHERE datname = 'airflow'")
                if cursor.fetchone() is None:
                    cursor.execute("CREATE DATABASE airflow")
        finally:
            connection.close()
        return True

    _wait("accepting connections", accepting, cluster, "postgres")


def _start_redis(cluster: Cluster) -> None:
    folder = cluster.root / "redis"
    folder.mkdir(exist_ok=True)
    password = cluster.secrets()["REDIS_PASSWORD"]
    cluster.start("redis", [_program("redis-server", "the Debian package redis-server"),
                            "--port", str(cluster.ports["redis"]), "--bind", "127.0.0.1", *REDIS_PERSISTENCE,
                            "--dir", str(folder), "--requirepass", password],
                  {**os.environ, "HOME": str(folder)}, folder)

    import redis

    def answers() -> bool:
        try:
            return redis.Redis(host="127.0.0.1", port=cluster.ports["redis"], password=password,
                               socket_timeout=2).ping()
        except redis.ConnectionError:
            return False

    _wait("answering PING", answers, cluster, "redis")


def _start_s3(cluster: Cluster) -> None:
    folder = cluster.root / "s3"
    folder.mkdir(exist_ok=True)
    cluster.start("s3", [_program("moto_server", "moto[server]"), "-H", "127.0.0.1",
                         "-p", str(cluster.ports["s3"])], {**os.environ, "HOME": str(folder)}, folder)

    import boto3
    import botocore.exceptions

    keys = cluster.secrets()
    client = boto3.client("s3", endpoint_url=cluster.s3_endpoint, region_name="us-east-1",
                          aws_access_key_id=keys["CITEWORTH_S3_ACCESS_KEY"],
                          aws_secret_access_key=keys["CITEWORTH_S3_SECRET_KEY"])

    def made_buckets() -> bool:
        try:
            for bucket in BUCKETS:
                client.create_bucket(Bucket=bucket)
        except botocore.exceptions.EndpointConnectionError:
            return False
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass
        return True

    _wait("serving S3", made_buckets, cluster, "s3")


def _make_hosts(cluster: Cluster, project: Path) -> None:
    """The bare git remote (from ``project``'s commits; refreshed on a later ``up``) and each
    host's folders and clone of it."""
    if not cluster.bare_repo.exists():
        _run(["git", "clone", "--bare", "--quiet", str(project), str(cluster.bare_repo)], "git clone --bare")
    else:
        _run(["git", "-C", str(cluster.bare_repo), "fetch", "--quiet", str(project),
              "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"], "git fetch into the bare remote")
    for host in cluster.hosts:
        folder = cluster.host_dir(host.name)
        for sub in ("airflow", "home", "scratch/runs"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        if not (cluster.clone(host.name) / ".git").exists():
            _run(["git", "clone", "--quiet", cluster.bare_repo.as_uri(), str(cluster.clone(host.name))],
                 f"git clone for host {host.name}")


def _setup_airflow(cluster: Cluster) -> None:
    _run([sys.executable, "-m", "citeworth.cli", "airflow", "setup"], f"`citeworth airflow setup` on host "
         f"{SCHEDULER_HOST}", env=cluster.host_env(SCHEDULER_HOST), cwd=cluster.host_dir(SCHEDULER_HOST))


def start_component(cluster: Cluster, component: str) -> None:
    """Start ``component`` (``scheduler/<name>`` or ``<worker host>/worker``) on its host."""
    host, _, name = component.partition("/")
    if name == "worker":
        argv = worker_command(next(worker for worker in cluster.workers if worker.name == host))
    else:
        commands = {"api-server": ["api-server", "--host", "127.0.0.1", "--port", str(cluster.ports["api"])],
                    "scheduler": ["scheduler"], "dag-processor": ["dag-processor"],
                    "triggerer": ["triggerer", "--skip-serve-logs"]}
        argv = [sys.executable, "-m", "airflow", *commands[name]]
    cluster.start(component, argv, cluster.host_env(host), cluster.host_dir(host))


def restart(cluster: Cluster, component: str) -> None:
    """Stop ``component`` if it runs (a worker killed with kill -9 does not), then start it again."""
    cluster.stop(component)
    start_component(cluster, component)


def _health(cluster: Cluster) -> dict[str, str]:
    """Each component's status as the API server's /api/v2/monitor/health reports it ({} when down)."""
    import requests

    try:
        report = requests.get(f"{cluster.api_url}/api/v2/monitor/health", timeout=5).json()
    except (requests.RequestException, ValueError):
        return {}
    return {name: (entry or {}).get("status") for name, entry in report.items()}


def worker_command(host: Host) -> list[str]:
    return [sys.executable, "-m", "citeworth.cli", "cluster", "worker", "--queues", ",".join(host.queues),
            "--concurrency", "1", "--celery-hostname", f"{host.name}@%h", "--skip-serve-logs"]


def worker_queues(cluster: Cluster) -> dict[str, list[str]]:
    """Celery's answer to ``inspect active_queues``: worker host name -> the queues it consumes."""
    done = subprocess.run([sys.executable, "-m", "celery", "-A",
                           "airflow.providers.celery.executors.celery_executor_utils:app",
                           "inspect", "active_queues", "--json", "--timeout", "5"],
                          capture_output=True, text=True, env=cluster.host_env(SCHEDULER_HOST),
                          cwd=cluster.host_dir(SCHEDULER_HOST))
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {}
    return {name.partition("@")[0]: sorted(queue["name"] for queue in queues)
            for name, queues in json.loads(lines[-1]).items()}


def up(cluster: Cluster, project: Path | None = None, cpu_workers: int | None = None,
       gpu_workers: int | None = None, settings: dict[str, str] | None = None) -> list[str]:
    """Start the cluster, or, while some of its components run, just those that stopped (a worker
    killed mid-run, say): the running ones keep their work. The components started, in order.
    Bringing back a running cluster keeps its shape: asking for another one is an error."""
    if cluster.state_file.exists() and any(cluster.status().values()):
        _refuse_another_shape(cluster, project, cpu_workers, gpu_workers, settings)
        return _start_stopped(cluster, fresh=False)
    project = project or PROJECT_ROOT
    cluster.create(project, DEFAULT_CPU_WORKERS if cpu_workers is None else cpu_workers,
                   DEFAULT_GPU_WORKERS if gpu_workers is None else gpu_workers, settings or {})
    try:
        return _start_stopped(cluster, fresh=True, project=project)
    except BaseException:
        down(cluster)
        raise


def _refuse_another_shape(cluster: Cluster, project: Path | None, cpu_workers: int | None,
                          gpu_workers: int | None, settings: dict[str, str] | None) -> None:
    state = cluster.state()
    asked = {"--project": project and str(project.resolve()), "--set": settings or None,
             "--cpu-workers": cpu_workers, "--gpu-workers": gpu_workers}
    has = {"--project": state["project"], "--set": state["settings"],
           "--cpu-workers": sum(1 for host in cluster.workers if "cpu" in host.queues),
           "--gpu-workers": sum(1 for host in cluster.workers if "gpu" in host.queues)}
    if differing := [option for option, value in asked.items() if value is not None and value != has[option]]:
        shape = ", ".join(f"{option} {has[option]}" for option in differing)
        raise ClusterError(f"the cluster in {cluster.root} runs with {shape}; `citeworth cluster down` "
                           "first to start it in another shape")


def _start_stopped(cluster: Cluster, fresh: bool, project: Path | None = None) -> list[str]:
    """Start every component that does not run, services first, and wait until the API server
    reports the scheduler host healthy and each worker answers a Celery ping on its queues. A fresh
    start also makes the git remote and the hosts' clones and runs `citeworth airflow setup`."""
    stopped = [component for component in cluster.components() if cluster.pid(component) is None]
    starters = {"postgres": _start_postgres, "redis": _start_redis, "s3": _start_s3}
    for service in SERVICES:
        if service in stopped:
            starters[service](cluster)
    if fresh:
        _make_hosts(cluster, project)
        _setup_airflow(cluster)
    for name in SCHEDULER_COMPONENTS:
        if f"{SCHEDULER_HOST}/{name}" in stopped:
            start_component(cluster, f"{SCHEDULER_HOST}/{name}")
    wanted = {"metadatabase", "scheduler", "triggerer", "dag_processor"}

    def healthy() -> bool:
        for name in SCHEDULER_COMPONENTS:
            cluster.ensure_running(f"{SCHEDULER_HOST}/{name}")
        health = _health(cluster)
        return all(health.get(name) == "healthy" for name in wanted)

    _wait("reporting every component healthy", healthy, cluster, f"{SCHEDULER_HOST}/api-server")
    for host in cluster.workers:
        if f"{host.name}/worker" in stopped:
            start_component(cluster, f"{host.name}/worker")
    expected = {host.name: sorted(host.queues) for host in cluster.workers}

    def workers_answer() -> bool:
        for host in cluster.workers:
            cluster.ensure_running(f"{host.name}/worker")
        return worker_queues(cluster) == expected

    _wait("answering a Celery ping on its queues", workers_answer, cluster,
          f"{cluster.workers[-1].name}/worker" if cluster.workers else f"{SCHEDULER_HOST}/scheduler")
    return stopped


def down(cluster: Cluster) -> None:
    """Airflow's processes first (together), then the services they use."""
    if cluster.state_file.exists():
        cluster.stop(*(component for component in cluster.components() if component not in SERVICES))
        cluster.stop(*SERVICES)


# -- command line ------------------------------------------------------------------------------------
def _print_status(cluster: Cluster) -> bool:
    statuses = cluster.status()
    for component, pid in statuses.items():
        print(f"{component:28} {'running (pid ' + str(pid) + ')' if pid else 'stopped'}")
    state = cluster.state()
    print(f"API server: {cluster.api_url}   S3: {cluster.s3_endpoint}   git remote: {cluster.bare_repo}")
    print(f"project: {state['project']}")
    return all(statuses.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="citeworth cluster", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("up", "start the cluster (made on first use) and wait until it is healthy; on a "
                             "running cluster, start only the components that stopped (a killed worker)"),
                            ("down", "stop every process of the cluster (its data stays)"),
                            ("status", "each component and whether it runs (exit 1 unless all do)")):
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.add_argument("--dir", type=Path, required=True, help="the cluster's folder (all its state)")
        if name == "up":
            command.add_argument("--project", type=Path, help="the checkout whose commits the git remote "
                                 f"gets (default: {PROJECT_ROOT})")
            command.add_argument("--cpu-workers", type=int,
                                 help=f"hosts on queue cpu (default {DEFAULT_CPU_WORKERS})")
            command.add_argument("--gpu-workers", type=int,
                                 help=f"hosts on queue gpu (default {DEFAULT_GPU_WORKERS})")
            command.add_argument("--set", dest="settings", action="append", metavar="NAME=VALUE",
                                 help="an environment variable for every host, over docker/cluster.env "
                                 "(repeatable; e.g. AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE=False)")
    env = sub.add_parser("env", help="print a host's environment as shell `export` lines (eval it to run "
                         "the airflow CLI as that host); without --dir: docker/cluster.env interpolated with "
                         "this shell's environment (a real machine's settings)")
    env.add_argument("--dir", type=Path, help="the native cluster's folder")
    env.add_argument("--host", default=SCHEDULER_HOST, help="which host (default: %(default)s)")
    worker = sub.add_parser("worker", help="check this host's jwt_secret against the API server, then run "
                            "`airflow celery worker ARGS` (how the cluster and docker/compose.yaml start "
                            "workers)")
    worker.add_argument("celery_args", nargs=argparse.REMAINDER, help="arguments of `airflow celery worker`")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"] and not {"-h", "--help"} & set(argv[1:2]):
        from citeworth.orchestration.airflow_worker import run_worker

        return run_worker(argv[1:])  # argparse would take the worker's own options for its own
    args = parser.parse_args(argv)
    cluster = Cluster(args.dir or Path.cwd())
    try:
        if args.command == "up":
            if (args.cpu_workers is not None and args.cpu_workers < 1) or (args.gpu_workers or 0) < 0:
                parser.error("--cpu-workers must be at least 1 (versioning runs on cpu1), "
                             "--gpu-workers at least 0")
            if bad := [item for item in args.settings or [] if "=" not in item]:
                parser.error(f"--set wants NAME=VALUE, not {bad[0]!r}")
            settings = dict(item.split("=", 1) for item in args.settings) if args.settings else None
            started = up(cluster, args.project, args.cpu_workers, args.gpu_workers, settings)
            print(f"started: {', '.join(started) or 'nothing (every component runs)'}")
            _print_status(cluster)
        elif args.command == "down":
            down(cluster)
        elif args.command == "env":
            if args.dir and args.host not in (names := [host.name for host in cluster.hosts]):
                raise ClusterError(f"no host {args.host!r} in {cluster.root} (hosts: {', '.join(names)})")
            settings = (cluster.host_env(args.host) if args.dir
                        else read_env_file(SHARED_ENV_FILE, os.environ))
            for name, value in settings.items():
                print(f"export {name}={shlex.quote(value)}")
        else:
            return 0 if _print_status(cluster) else 1
    except (ClusterError, EnvFileError) as exc:
        print(f"citeworth cluster {args.command}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
