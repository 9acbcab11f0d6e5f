"""A TCP endpoint in front of a service that a test can take down and bring back, as a load
balancer in front of S3 goes down: while it is down, connections are refused (the listening socket
is closed) and those open are reset; back up, it listens on the same port again.

    proxy = OutageProxy(lambda: cluster.ports["s3"])   # the service's port, read when a client connects
    proxy.url                                           # http://127.0.0.1:<port>: give it to the clients
    with proxy.outage(60):                              # down for (at least) 60 s
        ...
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

CHUNK = 1 << 16


def _reset(sock: socket.socket) -> None:
    """Close with a TCP reset (linger 0), as a host that went away answers."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()


class OutageProxy:
    def __init__(self, target_port: Callable[[], int]):
        self.target_port = target_port
        self.port = self._bind(0).getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self.outages: list[tuple[float, float]] = []  # (down, up) as time.time()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _bind(self, port: int) -> socket.socket:
        self._listener = socket.create_server(("127.0.0.1", port), reuse_port=False)
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()
        return self._listener

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # the listener was closed: down
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port()), timeout=10)
            except OSError:
                _reset(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open.update((client, upstream))
            pumps = [2]  # a pair closes when both directions have ended
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink, pumps), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, pumps: list[int]) -> None:
        try:
            while data := source.recv(CHUNK):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)  # the other direction may still be answering
        except OSError:
            pumps[0] = 1  # a broken side: end the pair now
        with self._lock:
            pumps[0] -= 1
            if pumps[0] > 0:
                return
            self._open.difference_update((source, sink))
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.close()

    def down(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread (close alone does not)
        self._listener.close()
        with self._lock:
            dropped, self._open = self._open, set()
        for sock in dropped:
            _reset(sock)
        self.outages.append((time.time(), 0.0))

    def up(self) -> None:
        deadline = time.monotonic() + 30
        while True:  # the port may linger a moment after the resets
            try:
                self._bind(self.port)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.outages[-1] = (self.outages[-1][0], time.time())

    @contextlib.contextmanager
    def outage(self, seconds: float) -> Iterator[None]:
        """Down for ``seconds`` (or as long as the body takes, when longer), then up."""
        self.down()
        began = time.monotonic()
        try:
            yield
            time.sleep(max(0.0, seconds - (time.monotonic() - began)))
        finally:
            self.up()
