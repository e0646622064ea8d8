"""A real deadline for every model request, and a way to stop every request in flight at once.

The OpenAI client talks HTTP through httpx2 (its fork of httpx), whose timeouts bound each network operation, not
a request: a read waits at most ``timeout`` seconds for the *next* bytes, so a server that answers 200 and then
trickles a byte a second keeps one request alive for ever.
Here every model request goes through ``http_client()``, whose connections read, write and connect under the
deadline of the ``deadline_scope`` they run in (the innermost, earliest one): each network operation waits at
most until that deadline, in slices of ``POLL_S`` so that ``abort_requests`` (Ctrl-C) ends a waiting request
within a slice. A request past its deadline fails with ``httpx2.ReadTimeout`` (or ``ConnectTimeout`` /
``WriteTimeout``), which the OpenAI client reports as ``APITimeoutError``; an aborted one with a connection error
that says so (``ABORTED_MESSAGE``).

The deadline lives in a context variable, so it follows the code that sets it (the question an agent asks) and
not the connection, which the pool may reuse for another question.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
import typing
import urllib.request
from collections.abc import Iterator

import httpcore2
import httpx2

#: the longest one blocking network operation waits before it looks at the deadline and the abort flag again
POLL_S = 0.2
#: bytes written per step: the deadline and the abort flag are looked at between steps
WRITE_STEP_BYTES = 64 * 1024

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("mallvi_model_deadline", default=None)
_aborted = threading.Event()

ABORTED_MESSAGE = "the model request was stopped: the run was interrupted"


@contextlib.contextmanager
def deadline_scope(at_monotonic: float) -> Iterator[None]:
    """Model requests made inside end by ``at_monotonic`` (``time.monotonic()``), or by an enclosing scope's
    earlier deadline."""
    outer = _deadline.get()
    token = _deadline.set(at_monotonic if outer is None else min(outer, at_monotonic))
    try:
        yield
    finally:
        _deadline.reset(token)


def current_deadline() -> float | None:
    """The deadline model requests made here run under (``time.monotonic()``), None without one."""
    return _deadline.get()


def abort_requests() -> None:
    """Stop every model request in flight within ``POLL_S`` and refuse new ones (Ctrl-C: the process ends)."""
    _aborted.set()


def requests_aborted() -> bool:
    """Whether ``abort_requests`` was called."""
    return _aborted.is_set()


def _wait_s(timeout: float | None, kind: type[Exception], what: str) -> float:
    """How long the next blocking step may wait: the operation's own timeout, cut at the deadline and to one
    poll slice; raises ``kind`` once the deadline has passed and httpcore2.ReadError after an abort."""
    if _aborted.is_set():
        raise httpcore2.ReadError(ABORTED_MESSAGE)
    deadline = _deadline.get()
    limit = timeout if timeout is not None else float("inf")
    if deadline is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise kind(f"no complete answer by the deadline of this request ({what})")
        limit = min(limit, remaining)
    return min(limit, POLL_S)


class _DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every read and write ends by the deadline of the scope it runs in."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        started = time.monotonic()
        while True:
            wait = _wait_s(timeout, httpcore2.ReadTimeout, "reading the answer")
            try:
                return self._inner.read(max_bytes, timeout=wait)
            except httpcore2.ReadTimeout:
                if timeout is not None and time.monotonic() - started >= timeout:
                    raise  # the read's own timeout: no bytes for ``timeout`` seconds

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for start in range(0, len(buffer), WRITE_STEP_BYTES):
            wait = _remaining(timeout, httpcore2.WriteTimeout, "sending the request")
            self._inner.write(buffer[start:start + WRITE_STEP_BYTES], timeout=wait)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: typing.Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        wait = _remaining(timeout, httpcore2.ConnectTimeout, "the TLS handshake")
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, wait))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


def _remaining(timeout: float | None, kind: type[Exception], what: str) -> float | None:
    """``timeout`` cut at the deadline, for a step that cannot be sliced (a connect, a TLS handshake, a write
    step); raises ``kind`` once the deadline has passed and httpcore2.ConnectError after an abort."""
    if _aborted.is_set():
        raise httpcore2.ConnectError(ABORTED_MESSAGE)
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise kind(f"no time left before the deadline of this request ({what})")
    return remaining if timeout is None else min(timeout, remaining)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """httpcore2's own sockets, connected and then read and written under the deadline."""

    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore2.NetworkStream:
        wait = _remaining(timeout, httpcore2.ConnectTimeout, "connecting")
        return _DeadlineStream(self._inner.connect_tcp(host, port, wait, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore2.NetworkStream:
        wait = _remaining(timeout, httpcore2.ConnectTimeout, "connecting")
        return _DeadlineStream(self._inner.connect_unix_socket(path, wait, socket_options))

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


#: httpcore2's exceptions as httpx2's (the most specific first), so the OpenAI client tells timeouts from the rest
_EXCEPTIONS: tuple[tuple[type[Exception], type[httpx2.TransportError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout), (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout), (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException), (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError), (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError), (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError), (httpcore2.ProxyError, httpx2.ProxyError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
)


@contextlib.contextmanager
def _as_httpx(request: httpx2.Request) -> Iterator[None]:
    try:
        yield
    except Exception as e:
        for core, mapped in _EXCEPTIONS:
            if isinstance(e, core):
                raise mapped(str(e), request=request) from e
        raise


class _Body(httpx2.SyncByteStream):
    def __init__(self, inner: typing.Iterable[bytes], request: httpx2.Request) -> None:
        self._inner = inner
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx(self._request):
            yield from self._inner

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


class DeadlineTransport(httpx2.BaseTransport):
    """An httpx2 transport over httpcore2 pools whose connections honour ``deadline_scope`` and
    ``abort_requests``; HTTP(S)_PROXY / NO_PROXY from the environment are honoured for http(s) proxies."""

    def __init__(self) -> None:
        self._backend = _DeadlineBackend()
        self._ssl = httpx2.create_ssl_context()
        self._pools: dict[str, httpcore2.ConnectionPool] = {}
        self._lock = threading.Lock()

    def _pool(self, url: httpx2.URL) -> httpcore2.ConnectionPool:
        proxies = urllib.request.getproxies_environment()
        proxy = proxies.get(url.scheme)
        if proxy and urllib.request.proxy_bypass(url.host):
            proxy = None
        if proxy and not proxy.startswith(("http://", "https://")):
            proxy = None  # e.g. a SOCKS proxy: connect directly
        key = proxy or ""
        with self._lock:
            if key not in self._pools:
                if proxy:
                    self._pools[key] = httpcore2.HTTPProxy(proxy_url=proxy, ssl_context=self._ssl,
                                                          network_backend=self._backend)
                else:
                    self._pools[key] = httpcore2.ConnectionPool(ssl_context=self._ssl, network_backend=self._backend)
            return self._pools[key]

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.SyncByteStream)
        core = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                             target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        with _as_httpx(request):
            resp = self._pool(request.url).handle_request(core)
        assert isinstance(resp.stream, typing.Iterable)
        return httpx2.Response(status_code=resp.status, headers=resp.headers, stream=_Body(resp.stream, request),
                              extensions=resp.extensions)

    def close(self) -> None:
        with self._lock:
            for pool in self._pools.values():
                pool.close()
            self._pools.clear()


def http_client() -> httpx2.Client:
    """An httpx2 client for the OpenAI client whose requests end by their ``deadline_scope``."""
    return httpx2.Client(transport=DeadlineTransport(), follow_redirects=True)


__all__ = ["ABORTED_MESSAGE", "DeadlineTransport", "abort_requests", "current_deadline", "deadline_scope",
           "http_client", "requests_aborted"]
