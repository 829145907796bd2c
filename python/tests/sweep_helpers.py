"""Evaluations used by the sweep tests. Importable by the worker processes because the tests put
this folder on their PYTHONPATH. Each takes a point document and returns a dict, like kvcim's."""
import os
import time


def slow_square(document):
    """x^2 after run.sleep_s seconds; run.fail_on raises for that x; run.crash_on kills the
    worker process for that x; run.log records (appends) every start, to count evaluations."""
    run = document["run"]
    x = run["x"]
    if run.get("log"):
        with open(run["log"], "a") as f:
            f.write(f"{x} {os.getpid()}\n")
    if x == run.get("crash_on"):
        os._exit(7)
    time.sleep(run.get("sleep_s", 0.0))
    if x == run.get("fail_on"):
        raise ValueError(f"x = {x}: this point fails on purpose")
    return {"x": x, "square": x * x, "pid": os.getpid()}
