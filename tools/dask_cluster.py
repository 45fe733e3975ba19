"""A dask.distributed cluster on 127.0.0.1 as separate processes -- `dask scheduler` and `dask worker`s, each in
its own process group, each stopping by itself after `lifetime_s` -- for the Dask tests and benchmark of
create_pretraining_data.py --runner=DaskRunner.

    with LocalProcessCluster(directory, workers=2) as cluster:
        ... --runner=DaskRunner --dask_client_address={cluster.address}
"""

import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class LocalProcessCluster:
    """A scheduler and `workers` single-threaded workers (no nanny: each worker is the process in `worker_pids`).
    `pythonpath` is what the workers import from (None: not this project); they run in `directory`, not the
    repository, so they cannot import the project from their working directory either."""

    def __init__(self, directory: str, workers: int = 2, pythonpath: str | None = ROOT, lifetime_s: int = 600):
        from distributed import Client

        self.directory = str(directory)
        os.makedirs(self.directory, exist_ok=True)
        scheduler_file = os.path.join(self.directory, "scheduler.json")
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        self.processes, self.worker_pids = [], []
        try:
            self._start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                         "0", "--no-dashboard", "--scheduler-file", scheduler_file, "--idle-timeout",
                         f"{lifetime_s}s"], env, "scheduler")
            deadline = time.monotonic() + 60
            while not os.path.exists(scheduler_file):
                if time.monotonic() > deadline or self.processes[0].poll() is not None:
                    raise RuntimeError(f"the scheduler did not start: {self.log('scheduler')[-2000:]}")
                time.sleep(0.2)
            with Client(scheduler_file=scheduler_file, timeout=60, set_as_default=False) as client:
                self.address = client.scheduler.address
            for i in range(workers):
                self._start([sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads", "1",
                             "--no-nanny", "--no-dashboard", "--host", "127.0.0.1", "--name", f"w{i}",
                             "--lifetime", f"{lifetime_s}s", "--local-directory",
                             os.path.join(self.directory, f"w{i}")], env, f"worker{i}")
                self.worker_pids.append(self.processes[-1].pid)
            with self.client() as client:
                client.wait_for_workers(workers, timeout=120)
        except BaseException:
            self.close()
            raise

    def _start(self, command: list, env: dict, name: str):
        with open(os.path.join(self.directory, f"{name}.log"), "wb") as log:
            self.processes.append(subprocess.Popen(command, env=env, cwd=self.directory, stdout=log, stderr=log,
                                                   start_new_session=True))

    def log(self, name: str) -> str:
        with open(os.path.join(self.directory, f"{name}.log"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def client(self):
        from distributed import Client

        return Client(self.address, timeout=60, set_as_default=False)

    def executed(self) -> dict:
        """{worker address: tasks it has executed}."""
        with self.client() as client:
            return client.run(lambda dask_worker: dask_worker.state.executed_count)

    def peak_rss_mib(self) -> list:
        """Each worker process's peak resident memory so far (VmHWM), MiB."""
        peaks = []
        for pid in self.worker_pids:
            with open(f"/proc/{pid}/status") as f:
                peaks.append(next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024)
        return peaks

    def close(self):
        """Stop every process (SIGTERM; SIGKILL for those still running 10 s later, all together) and wait for each
        (a worker whose scheduler went first may keep reconnecting instead of exiting)."""
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in self.processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
