"""A sweep on a real Dask cluster started here on 127.0.0.1 (a scheduler and two single-thread
workers, each its own process), with one worker killed mid-sweep: the points it was running are
run again on the other worker, and every point is recorded exactly once."""
import collections
import os
import signal
import subprocess
import time

import pytest

from kvcim import results
from conftest import PYTHON, child_env, slow_sweep


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def cluster(tmp_path):
    env = child_env()
    scheduler_file = tmp_path / "scheduler.json"
    procs = []

    def start(args):
        log = open(tmp_path / f"dask-{len(procs)}.log", "w")
        p = subprocess.Popen([PYTHON, "-m"] + args, env=env, stdout=log, stderr=log,
                             start_new_session=True)
        procs.append(p)
        return p

    start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
           "--no-dashboard", "--scheduler-file", str(scheduler_file)])
    wait_for(scheduler_file.exists, 60, "the Dask scheduler")
    # --no-nanny: a killed worker stays dead, as when a node is lost.
    workers = [start(["distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file),
                      "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard"])
               for _ in range(2)]
    import json
    from distributed import Client
    address = json.loads(scheduler_file.read_text())["address"]
    with Client(address, timeout="30s") as client:
        client.wait_for_workers(2, timeout=60)
    try:
        yield address, workers
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_sweep_on_dask_survives_a_killed_worker(tmp_path, cluster):
    address, workers = cluster
    n = 16
    spec, out, log = slow_sweep(tmp_path, n, 0.4)
    sweep = subprocess.Popen([PYTHON, "-m", "kvcim.sweep", str(spec), "--out", str(out),
                              "--scheduler", address], env=child_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    victim = workers[0]
    # Kill the first worker once both have finished points and it is running another one.
    wait_for(lambda: {r["result"]["pid"] for r in results.read_records(out)} >= {
        w.pid for w in workers}, 60, "both workers to finish a point")
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    killed_at = len(results.read_records(out))
    _, stderr = sweep.communicate(timeout=120)
    assert sweep.returncode == 0, stderr
    assert killed_at < n, "the worker must be killed mid-sweep"

    records = results.read_records(out)
    counts = collections.Counter(r["key"] for r in records)
    assert len(counts) == n and max(counts.values()) == 1, "a point lost or repeated"
    assert all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    assert sorted(r["result"]["x"] for r in records) == list(range(n))
    # The point the victim was running when it died was started there and finished on the
    # survivor: it was retried, not lost.
    starts = collections.defaultdict(list)
    for line in log.read_text().split("\n"):
        if line:
            x, pid = map(int, line.split())
            starts[x].append(pid)
    finished_by = {r["result"]["x"]: r["result"]["pid"] for r in records}
    retried = [x for x, pids in starts.items()
               if victim.pid in pids and finished_by[x] != victim.pid]
    assert retried, "no point was running on the killed worker"
    assert all(finished_by[x] == workers[1].pid for x in retried)
