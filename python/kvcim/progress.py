"""A plain-text progress bar on stderr: redrawn in place on a terminal, one line every few seconds
(and at the end) otherwise, so that logs of batch jobs stay readable."""
import sys
import time


def _duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    def __init__(self, total, already=0, label="kvcim.sweep", stream=None, enabled=True,
                 width=30, interval=5.0):
        self.total = total
        self.already = already
        self.done = 0
        self.errors = 0
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.width = width
        self.interval = interval
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self._last = 0.0
        self._shown = False

    def line(self):
        todo = self.total - self.already
        finished = self.already + self.done
        fraction = finished / self.total if self.total else 1.0
        filled = int(round(fraction * self.width))
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.monotonic() - self.start
        text = (f"{self.label} [{bar}] {finished}/{self.total} {fraction * 100:3.0f}% "
                f"ok {self.done - self.errors} error {self.errors}")
        if self.already:
            text += f" (skipped {self.already} done before)"
        text += f" | {_duration(elapsed)}"
        if 0 < self.done < todo:
            text += f", eta {_duration(elapsed / self.done * (todo - self.done))}"
        return text

    def update(self, error=False):
        self.done += 1
        self.errors += bool(error)
        self.show()

    def show(self, force=False):
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
            self._shown = True
        elif force or now - self._last >= self.interval:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self._last = now

    def close(self):
        if not self.enabled:
            return
        if self.tty:
            self.show()
            self.stream.write("\n")
        else:
            self.show(force=True)
        self.stream.flush()

    def message(self, text):
        """A line above the bar (a warning, a retried point)."""
        if not self.enabled:
            return
        if self.tty and self._shown:
            self.stream.write("\r\x1b[K")
        self.stream.write(text + "\n")
        self.stream.flush()
        if self.tty and self._shown:
            self.show()
