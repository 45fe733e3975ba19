"""What the pipeline (albert/data/beam.py) needs on Beam's DaskRunner that the runner does not do itself.

- `--runner=DaskRunner` is a name here (Beam knows the runner only by its module path, RUNNER_PATH).
- Parallelism: the runner turns `Reshuffle` into an identity and `Create` puts up to 128 elements in one Dask
  partition, so a job of a few tasks would run in one worker; unless the user sets --dask_npartitions or
  --dask_partition_size, each task gets its own partition.
- A cluster given by --dask_client_address / --dask_scheduler_file is checked before any work: the scheduler
  answers within the connection timeout, a worker is there, and every worker can import this project (a worker that
  cannot would fail every task).
- While the job runs: a scheduler left without workers for WORKERLESS_S, or a task that killed its worker
  repeatedly (Dask's KilledWorker), ends the run with one line instead of waiting for ever.
- The client is closed inside the run, with the LocalCluster it started when no address was given (otherwise both
  would be shut down at interpreter exit, logging to stderr after the run).
"""

import asyncio
import logging
import time

from albert.ground.errors import AlbertError

RUNNER_PATH = "apache_beam.runners.dask.dask_runner.DaskRunner"
CONNECT_S = 30  # the scheduler's answer, when --dask_connection_timeout is not given
WORKERS_S = 60  # the first worker, on a cluster given by address
WORKERLESS_S = 60  # a running job whose scheduler has no worker left


def is_dask(runner: str) -> bool:
    return runner.rsplit(".", 1)[-1] == "DaskRunner"


def with_partitions(pipeline_args: list, tasks: int) -> list:
    """The pipeline's arguments, with one Dask partition per task unless the user chose the partitioning."""
    chosen = any(a.split("=", 1)[0] in ("--dask_npartitions", "--dask_partition_size") for a in pipeline_args)
    return list(pipeline_args) if chosen else [*pipeline_args, f"--dask_npartitions={max(1, tasks)}"]


def _where(options) -> str:
    return (f"the Dask scheduler at {options.address}" if options.address
            else f"the Dask scheduler of {options.scheduler_file}")


def check_cluster(pipeline_options):
    """A cluster given by address or scheduler file: reachable, with a worker, every worker able to import albert.
    Nothing to check when the runner starts its own LocalCluster (its workers are this process's children)."""
    from apache_beam.runners.dask.dask_runner import DaskOptions
    from distributed import Client

    options = pipeline_options.view_as(DaskOptions)
    if not options.address and not options.scheduler_file:
        return
    where = _where(options)
    timeout = options.timeout if isinstance(options.timeout, int) else CONNECT_S
    try:
        client = Client(address=options.address, scheduler_file=options.scheduler_file, timeout=timeout,
                        set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise AlbertError(f"cannot reach {where} within {timeout} s ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else 'no answer'}); start it (dask scheduler) or fix "
                          "--dask_client_address / --dask_scheduler_file") from None
    try:
        try:
            client.wait_for_workers(1, timeout=WORKERS_S)
        except TimeoutError:
            raise AlbertError(f"no Dask worker joined {where} within {WORKERS_S} s; start workers (dask worker "
                              "ADDRESS) with this project on their PYTHONPATH") from None
        try:
            client.run(eval, "__import__('albert.data.beam') is not None")
        except Exception as e:  # the worker's own exception, raised here
            raise AlbertError(f"a Dask worker of {where} cannot import this project ({type(e).__name__}: {e}); "
                              "start the workers with it on their PYTHONPATH, or pip install it there") from None
    finally:
        quiet_shutdown()
        client.close(timeout=CLOSE_S)


def wait(result, poll_s: float = 2.0):
    """Wait for the DaskRunner's result: its errors raised here, a worker killed by a task or a scheduler left
    without workers as one line."""
    import distributed
    from distributed.scheduler import KilledWorker

    client = result.client
    futures = list(result.futures) if isinstance(result.futures, (list, tuple)) else [result.futures]
    alone_since = None
    while True:
        try:
            distributed.wait(futures, timeout=poll_s)
            break
        except TimeoutError:
            pass
        if client.scheduler_info().get("workers"):
            alone_since = None
        elif alone_since is None:
            alone_since = time.monotonic()
        elif time.monotonic() - alone_since > WORKERLESS_S:
            raise AlbertError(f"the Dask scheduler has had no worker for {WORKERLESS_S} s while the job was running "
                              "(the workers died or were stopped); see their logs, restart them and rerun")
    try:
        result.wait_until_finish()
    except KilledWorker as e:
        raise AlbertError(f"a task killed the Dask workers that ran it ({e}); see the workers' logs (memory "
                          "limits?) and rerun") from None


CLOSE_S = 120  # closing the client and the LocalCluster: generous, for a busy machine


class ShutdownNoise(logging.Filter):
    """Drops asyncio's "Future exception was never retrieved" for a TimeoutError. distributed's shutdown leaves such
    futures behind when a machine is busy (a comm or heartbeat that timed out while the client or its LocalCluster
    closed, after the job's results were in); asyncio logs them when they are collected, possibly at interpreter
    exit, after the run succeeded. They say nothing about the run (its results were checked before the close, and
    a failure of the run is raised there), so they are dropped; every other asyncio message still shows."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, (TimeoutError, asyncio.TimeoutError))
                    and record.getMessage().startswith("Future exception was never retrieved"))


def quiet_shutdown():
    """Install ShutdownNoise on asyncio's logger, once per process."""
    logger = logging.getLogger("asyncio")
    if not any(isinstance(f, ShutdownNoise) for f in logger.filters):
        logger.addFilter(ShutdownNoise())


def close(result):
    """Close the runner's client, and the LocalCluster it started when no address was given, waiting up to
    CLOSE_S for each; what their shutdown leaves behind is retrieved or, if only noise, dropped (ShutdownNoise)."""
    client = getattr(result, "client", None)
    if client is None:
        return
    quiet_shutdown()
    cluster = getattr(client, "cluster", None)
    client.close(timeout=CLOSE_S)
    if cluster is not None:
        cluster.close(timeout=CLOSE_S)
