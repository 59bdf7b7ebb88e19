"""A local HTTP server on 127.0.0.1 for the download tests (no internet needed): serves
the files of a folder from a thread and counts the requests it answered."""
import contextlib
import functools
import http.server
import threading


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()


@contextlib.contextmanager
def serve(folder):
    """Yields (base URL ending in '/', list of request paths) while serving `folder`."""
    handler = functools.partial(_Handler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", server.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
