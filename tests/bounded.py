"""A call that must end: run on a daemon thread, so a test that would block (a FIFO opened
for reading) fails instead of hanging the suite."""
import threading


def error_of(fn, timeout=20):
    """The exception `fn()` raised (None if it returned); AssertionError if it ran past
    `timeout` seconds."""
    result = {}

    def run():
        try:
            fn()
        except Exception as e:   # noqa: BLE001 -- the caller checks which
            result["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"{getattr(fn, '__name__', fn)} blocked for {timeout} s"
    return result.get("error")
