"""The results file of a sweep: JSON Lines, one record per evaluated point, appended as each point
finishes.

Why this shape: a sweep can be killed at any moment (Ctrl-C, an out-of-memory kill, a lost node).
Each record is written with one write() on a file opened for appending and then fsync'ed, so a
finished point is on disk before the next one is reported, and a record is either whole or (after a
machine crash in the middle of the write) a partial last line that the next run cuts off. One sweep
at a time writes a file (an exclusive lock), so two runs never interleave lines.
"""
import fcntl
import json
import os

from ._core import Error


def read_records(path):
    """All whole records of a results file, in file order. Lines that are not JSON objects (a
    partial last line after a crash) are skipped."""
    records = []
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return records
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def latest_by_key(records):
    """The last record of each point key (a re-evaluated point supersedes its older record)."""
    latest = {}
    for record in records:
        key = record.get("key")
        if key is not None:
            latest[key] = record
    return latest


def load(path):
    """The results of a sweep: the latest record of every point, in the order first written."""
    return list(latest_by_key(read_records(path)).values())


class ResultWriter:
    """Appends records to a results file; holds an exclusive lock on it while open."""

    def __init__(self, path):
        self.path = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(directory, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as e:
            raise Error(f"{self.path}: file = unwritable: cannot open the results file "
                        f"({e.strerror})") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            raise Error(f"{self.path}: file = locked: another sweep is writing this results "
                        "file") from None
        self._repair_tail()

    def _repair_tail(self):
        # A partial last line (the machine died mid-write) is cut off, so that the next record
        # starts on a line of its own instead of being glued to the fragment.
        size = os.lseek(self._fd, 0, os.SEEK_END)
        if size == 0:
            return
        chunk = 1 << 16
        end = size
        while end > 0:
            start = max(0, end - chunk)
            data = os.pread(self._fd, end - start, start)
            if end == size and data.endswith(b"\n"):
                return
            cut = data.rfind(b"\n")
            if cut >= 0:
                os.ftruncate(self._fd, start + cut + 1)
                os.fsync(self._fd)
                return
            end = start
        os.ftruncate(self._fd, 0)
        os.fsync(self._fd)

    def append(self, record):
        line = (json.dumps(record, sort_keys=True, allow_nan=True, default=_jsonable) + "\n")
        data = line.encode("utf-8")
        written = 0
        while written < len(data):  # a regular file takes it in one write; loop for safety
            written += os.write(self._fd, data[written:])
        os.fsync(self._fd)

    def close(self):
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _jsonable(value):
    # numpy scalars and arrays (results of evaluations) become plain JSON numbers and lists.
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
