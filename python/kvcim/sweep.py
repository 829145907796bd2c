"""Sweeps: evaluate every point of a grid, locally on a process pool or on a Dask cluster.

    kvcim.sweep("study.yaml", out="results.jsonl")            # Python
    python3 -m kvcim.sweep study.yaml --out results.jsonl      # command line
        [--scheduler tcp://HOST:PORT] [--workers N] [--retry-errors] [--quiet] [--list]

Each finished point is appended to the results file as one JSON line (see kvcim.results), so a
sweep killed at any moment loses only the points still running, and running it again evaluates only
the points not yet recorded. A point whose evaluation raises is recorded with status "error" and its
message; the sweep goes on. A worker process that dies (crash, out-of-memory kill, lost node) is
handled too: locally, the points that were running are re-run one at a time so that the culprit is
found and recorded as an error after max_attempts deaths, and the innocent ones complete; on Dask,
the scheduler re-runs the tasks of a lost worker elsewhere and a point that keeps killing workers
comes back as KilledWorker, recorded as an error.
"""
import argparse
import collections
import concurrent.futures as cf
import multiprocessing
import os
import signal
import sys
import time
import types
import uuid

from . import evaluate as _evaluate
from . import results as _results
from ._core import Error
from .grid import SpecError, SweepSpec
from .progress import Progress

__all__ = ["sweep", "SweepResult", "SweepSpec", "SpecError", "main"]


class SweepResult:
    """What a sweep did: counts, the results file, and the latest record of each of its points."""

    def __init__(self, path, points, skipped, evaluated):
        self.path = path
        self.total = len(points)
        self.skipped = skipped
        self.evaluated = evaluated
        latest = _results.latest_by_key(_results.read_records(path))
        self.records = [latest[p.key] for p in points if p.key in latest]
        self.ok = sum(r.get("status") == "ok" for r in self.records)
        self.errors = sum(r.get("status") == "error" for r in self.records)
        self.missing = self.total - len(self.records)

    def __repr__(self):
        return (f"SweepResult(total={self.total}, ok={self.ok}, errors={self.errors}, "
                f"skipped={self.skipped}, evaluated={self.evaluated}, path={self.path!r})")


def _default_workers():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def sweep(spec, out, *, scheduler=None, workers=None, evaluate=None, retry_errors=False,
          progress=True, max_attempts=None):
    """Evaluates every point of `spec` not yet recorded in `out`; returns a SweepResult.

    spec: a YAML path, a dict or a SweepSpec. out: the JSON Lines results file (appended to).
    scheduler: a Dask scheduler address (tcp://host:port) or a distributed.Client; None runs
    locally on `workers` processes (default: the CPUs this process may use). evaluate: a
    module-level function point_document -> dict that replaces the spec's evaluation (it must be
    importable by the workers). retry_errors: evaluate again the points recorded with an error.
    """
    if isinstance(spec, SweepSpec):
        sweep_spec = spec
    elif isinstance(spec, dict):
        sweep_spec = SweepSpec.from_dict(spec)
    else:
        sweep_spec = SweepSpec.load(spec)
    attempts_allowed = max_attempts or sweep_spec.max_attempts
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise Error(f"sweep: workers = {workers!r}: expected a positive integer")
    points = sweep_spec.points()

    with _results.ResultWriter(out) as writer:
        existing = _results.latest_by_key(_results.read_records(writer.path))
        done = {k for k, r in existing.items()
                if r.get("status") == "ok" or (r.get("status") == "error" and not retry_errors)}
        todo = [p for p in points if p.key not in done]
        skipped = len(points) - len(todo)
        bar = Progress(len(points), already=skipped, enabled=progress)
        bar.show(force=True)
        evaluated = 0

        def record(rec):
            nonlocal evaluated
            rec.setdefault("attempts", 1)
            rec["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            writer.append(rec)
            evaluated += 1
            bar.update(error=rec.get("status") != "ok")

        tasks = [p.task() for p in todo]
        try:
            if not tasks:
                pass
            elif scheduler is not None:
                _run_dask(tasks, scheduler, evaluate, record, bar)
            else:
                _run_local(tasks, workers or _default_workers(), evaluate, record, bar,
                           attempts_allowed)
        finally:
            bar.close()
    return SweepResult(os.fspath(out), points, skipped, evaluated)


# --- local: a process pool --------------------------------------------------------------------

def _worker_init():
    # Ctrl-C is the driver's to handle: it stops the pool; workers must not die half-way through
    # printing a traceback each.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _context():
    # Never plain fork: the driver may hold threads (Dask, the GIL-free C++ calls), and a forked
    # child of a threaded process can deadlock. forkserver starts children from a clean server.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _new_pool(workers):
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=_context(),
                                  initializer=_worker_init)


def _kill_pool(pool):
    # shutdown() alone would wait for the running evaluations, which may take minutes.
    processes = list(getattr(pool, "_processes", {}).values() or [])
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass
    for process in processes:
        try:
            process.join(timeout=5)
        except Exception:  # noqa: BLE001
            pass


def _died(task, attempts):
    rec = _error_record(task, RuntimeError(
        f"the worker process evaluating this point died {attempts} times (crashed or killed)"))
    rec["error_type"] = "WorkerDied"
    rec["attempts"] = attempts
    return rec


def _run_alone(task, function):
    """Evaluates one task in a fresh one-process pool: the record, or None if the process died."""
    pool = _new_pool(1)
    try:
        return pool.submit(_evaluate.evaluate_task, task, function).result()
    except cf.process.BrokenProcessPool:
        return None
    finally:
        _kill_pool(pool)


def _run_local(tasks, workers, function, record, bar, max_attempts):
    queue = collections.deque(tasks)
    deaths = collections.Counter()  # times each point's worker died under it
    died_alone = set()              # points whose worker died while evaluating only them
    pool = _new_pool(workers)
    in_flight = {}
    try:
        while queue or in_flight:
            broken = False
            while queue and len(in_flight) < 2 * workers:
                task = queue.popleft()
                try:
                    in_flight[pool.submit(_evaluate.evaluate_task, task, function)] = task
                except cf.process.BrokenProcessPool:
                    queue.appendleft(task)
                    broken = True
                    break
            finished = []
            if in_flight and not broken:
                finished, _ = cf.wait(list(in_flight), return_when=cf.FIRST_COMPLETED)
            for future in finished:
                try:
                    rec = future.result()
                except cf.process.BrokenProcessPool:
                    broken = True
                    continue  # stays in flight: handled with the other suspects below
                except Exception as e:  # noqa: BLE001 - e.g. an unpicklable result
                    rec = _error_record(in_flight[future], e)
                task = in_flight.pop(future)
                rec["attempts"] = deaths[task["key"]] + 1
                record(rec)
            if not broken:
                continue
            # A worker died and took the pool with it. Every point that was running is a
            # suspect: each is re-run alone, so the one that kills its worker is identified
            # (and recorded as an error) while the others complete.
            suspects = _unique(in_flight.values())
            in_flight.clear()
            _kill_pool(pool)
            bar.message(f"kvcim.sweep: a worker process died; re-running {len(suspects)} "
                        "point(s) one at a time")
            for task in suspects:
                deaths[task["key"]] += 1
            for task in suspects:
                key = task["key"]
                while True:
                    if deaths[key] >= max_attempts and key in died_alone:
                        record(_died(task, deaths[key]))
                        break
                    rec = _run_alone(task, function)
                    if rec is not None:
                        rec["attempts"] = deaths[key] + 1
                        record(rec)
                        break
                    deaths[key] += 1
                    died_alone.add(key)
            pool = _new_pool(workers)
    finally:
        _kill_pool(pool)


def _error_record(task, e):
    return {"key": task["key"], "index": task["index"], "overrides": task["overrides"],
            "evaluate": task["document"]["evaluate"], "status": "error",
            "error_type": type(e).__name__, "error": str(e) or type(e).__name__}


def _unique(tasks):
    seen, out = set(), []
    for t in tasks:
        if t["key"] not in seen:
            seen.add(t["key"])
            out.append(t)
    return out


# --- Dask ------------------------------------------------------------------------------------

def _run_dask(tasks, scheduler, function, record, bar):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise Error("sweep: scheduler = given: Dask distributed is not installed "
                    "(apt-get install python3-distributed)") from None
    own_client = not hasattr(scheduler, "submit")
    if own_client:
        try:
            client = Client(scheduler, timeout="20s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise Error(f"sweep: scheduler = {scheduler}: cannot connect ({e})") from None
    else:
        client = scheduler
    # A fresh nonce per run: a key must not match a result another client left on the cluster.
    nonce = uuid.uuid4().hex[:8]
    futures = {}
    try:
        for task in tasks:
            future = client.submit(_evaluate.evaluate_task, task, function, pure=False,
                                   key=f"kvcim-point-{task['key']}-{nonce}")
            futures[future] = task
        for future in as_completed(list(futures), loop=client.loop):
            task = futures.pop(future)
            try:
                rec = future.result()
            except Exception as e:  # noqa: BLE001 - KilledWorker, a lost connection, ...
                rec = _error_record(task, e)
            record(rec)
            future.release()
    finally:
        for future in futures:
            future.cancel()
        if own_client:
            client.close()


# --- command line ----------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m kvcim.sweep",
        description="Evaluate every point of a sweep spec; append one JSON line per point.")
    parser.add_argument("spec", help="sweep spec (YAML)")
    parser.add_argument("--out", required=True, help="results file (JSON Lines, appended)")
    parser.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://127.0.0.1:8786 "
                                            "(default: local processes)")
    parser.add_argument("--workers", type=int, help="local worker processes (default: CPUs)")
    parser.add_argument("--retry-errors", action="store_true",
                        help="evaluate again the points recorded with an error")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--list", action="store_true",
                        help="print the points (key and changes) and exit")
    args = parser.parse_args(argv)
    try:
        if args.workers is not None and args.workers < 1:
            raise Error(f"--workers: workers = {args.workers}: expected a positive integer")
        if args.workers is not None and args.scheduler:
            raise Error("--workers: workers = given with --scheduler: the cluster's workers "
                        "do the work; start them with dask-worker")
        spec = SweepSpec.load(args.spec)
        if args.list:
            import json
            for p in spec.points():
                print(p.key, json.dumps(p.overrides, sort_keys=True))
            return 0
        result = sweep(spec, args.out, scheduler=args.scheduler, workers=args.workers,
                       retry_errors=args.retry_errors, progress=not args.quiet)
    except Error as e:
        print(f"kvcim.sweep: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nkvcim.sweep: interrupted; finished points are in the results file, run the "
              "same command again to continue", file=sys.stderr)
        return 130
    print(f"kvcim.sweep: {result.total} points: {result.ok} ok, {result.errors} error, "
          f"{result.skipped} done before, {result.evaluated} evaluated now -> {result.path}",
          file=sys.stderr)
    return 0


class _CallableModule(types.ModuleType):
    """Lets `kvcim.sweep(...)` call the function while `python -m kvcim.sweep` runs the module."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
