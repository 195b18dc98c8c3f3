"""The job's key-value store: rendezvous, liveness and diagnostics over TCP.

One process of a job (the node-0 launcher, or rank 0 under plain ``mpiexec``)
runs the server in a daemon thread; every rank and every launcher talks to it
with a `TCPStore` client. It carries small facts only — PMI's key-value space,
endpoints, NCCL unique ids, which rank died and how, each rank's last
collective — never tensors: those travel on MPI/NCCL.

The idea (one master holding a key-value space that every worker blocks on)
is PyTorch's TCPStore and Paddle's master; the wire format and the server are
fw's own. Every wait is bounded: a `get` or `wait` that runs out of time raises
`StoreTimeoutError` naming the keys still missing, and a store that stops
answering is named with its endpoint.

Wire format (both directions): ``u32 length | u8 code | u16 n | n × (u32 len | bytes)``,
big-endian. A request's code is the command; a reply's code is the status.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import struct
import threading
import time

__all__ = ["TCPStore", "StoreError", "StoreTimeoutError", "store_barrier"]

# commands
_SET, _GET, _ADD, _CAS, _CHECK, _WAIT, _DELETE, _NUM_KEYS, _PING = range(1, 10)
_NAMES = {_SET: "set", _GET: "get", _ADD: "add", _CAS: "compare_set", _CHECK: "check",
          _WAIT: "wait", _DELETE: "delete_key", _NUM_KEYS: "num_keys", _PING: "ping"}
# reply statuses
_OK, _TIMEOUT, _ERROR = 0, 1, 2

_HEAD = struct.Struct(">IBH")
_LEN = struct.Struct(">I")
# the largest message either side accepts: the store holds small facts only
_MAX_MESSAGE = 64 << 20


class StoreError(RuntimeError):
    """The store refused a request or could not be reached."""


class StoreTimeoutError(StoreError, TimeoutError):
    """A wait on the store ran out of time; ``missing`` lists the keys not yet set."""

    def __init__(self, message, missing=()):
        super().__init__(message)
        self.missing = list(missing)


def _encode(code: int, fields) -> bytes:
    parts = [b"".join((_LEN.pack(len(f)), f)) for f in fields]
    body = b"".join(parts)
    return _HEAD.pack(3 + len(body), code, len(parts)) + body


def _decode(payload: bytes):
    """(code, [fields]) of one message's payload (everything after the u32 length)."""
    code, n = payload[0], int.from_bytes(payload[1:3], "big")
    fields, at = [], 3
    for _ in range(n):
        (ln,) = _LEN.unpack_from(payload, at)
        at += 4
        fields.append(payload[at:at + ln])
        at += ln
    if at != len(payload):
        raise StoreError(f"store: malformed message (code {code}, {n} fields, "
                         f"{len(payload)} bytes, parsed {at})")
    return code, fields


def _as_bytes(value, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"TCPStore.{what}: value must be bytes or str, got {type(value).__name__}")


def _key(key, what: str) -> bytes:
    if not isinstance(key, str) or not key:
        raise TypeError(f"TCPStore.{what}: key must be a non-empty str, got {key!r}")
    return key.encode()


# --- the server -------------------------------------------------------------------

class _Conn:
    __slots__ = ("sock", "inbuf", "outbuf", "peer")

    def __init__(self, sock, peer):
        self.sock, self.inbuf, self.outbuf, self.peer = sock, bytearray(), bytearray(), peer


class _Waiter:
    """A request parked until its keys exist or its deadline passes."""
    __slots__ = ("conn", "code", "keys", "deadline")

    def __init__(self, conn, code, keys, deadline):
        self.conn, self.code, self.keys, self.deadline = conn, code, keys, deadline


class _Server:
    """A single-threaded event loop (selectors) owning the key-value dict: no locks,
    and a parked `get`/`wait` costs nothing until a `set` or its deadline."""

    def __init__(self, host: str, port: int):
        self.data: dict[bytes, bytes] = {}
        self.waiters: list[_Waiter] = []
        self.listener = socket.create_server((host, port), reuse_port=False, backlog=1024)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, None)
        # a self-pipe wakes the loop for close()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self.sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self.closing = False
        self.thread = threading.Thread(target=self._loop, name=f"fw-store:{self.port}",
                                       daemon=True)
        self.thread.start()

    def close(self):
        self.closing = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self.thread.join(timeout=10)

    # event loop
    def _loop(self):
        try:
            while not self.closing:
                timeout = None
                if self.waiters:
                    timeout = max(0.0, min(w.deadline for w in self.waiters) - time.monotonic())
                for key, mask in self.sel.select(timeout):
                    if key.data is None:
                        self._accept()
                    elif key.data == "wake":
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(64)
                    else:
                        self._service(key.data, mask)
                self._expire()
        finally:
            for key in list(self.sel.get_map().values()):
                with contextlib.suppress(OSError):
                    key.fileobj.close()
            self.sel.close()
            self._wake_w.close()

    def _accept(self):
        while True:
            try:
                sock, peer = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Conn(sock, peer)
            self.sel.register(sock, selectors.EVENT_READ, conn)

    def _drop(self, conn):
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(conn.sock)
        conn.sock.close()
        self.waiters = [w for w in self.waiters if w.conn is not conn]

    def _service(self, conn, mask):
        if mask & selectors.EVENT_WRITE:
            self._flush(conn)
        if not mask & selectors.EVENT_READ:
            return
        try:
            chunk = conn.sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._drop(conn)
            return
        conn.inbuf += chunk
        while len(conn.inbuf) >= 4:
            (ln,) = _LEN.unpack_from(conn.inbuf)
            if ln > _MAX_MESSAGE or ln < 3:
                self._drop(conn)  # not a store client (or a corrupt one): never trust it
                return
            if len(conn.inbuf) < 4 + ln:
                break
            payload = bytes(conn.inbuf[4:4 + ln])
            del conn.inbuf[:4 + ln]
            try:
                code, fields = _decode(payload)
                self._handle(conn, code, fields)
            except Exception as e:  # a bad request answers an error, never kills the loop
                self._reply(conn, _ERROR, [f"store server: {type(e).__name__}: {e}".encode()])

    def _reply(self, conn, status, fields):
        conn.outbuf += _encode(status, fields)
        self._flush(conn)

    def _flush(self, conn):
        while conn.outbuf:
            try:
                n = conn.sock.send(conn.outbuf)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self._drop(conn)
                return
            del conn.outbuf[:n]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.outbuf else 0)
        with contextlib.suppress(KeyError, ValueError):
            self.sel.modify(conn.sock, events, conn)

    def _handle(self, conn, code, f):
        d = self.data
        if code == _SET:
            d[f[0]] = f[1]
            self._reply(conn, _OK, [])
            self._wake_waiters()
        elif code in (_GET, _WAIT):
            timeout = float(f[0].decode())
            keys = f[1:]
            if all(k in d for k in keys):
                self._answer(conn, code, keys)
            else:
                self.waiters.append(_Waiter(conn, code, keys, time.monotonic() + timeout))
        elif code == _ADD:
            new = int(d.get(f[0], b"0")) + int(f[1])
            d[f[0]] = str(new).encode()
            self._reply(conn, _OK, [d[f[0]]])
            self._wake_waiters()
        elif code == _CAS:
            key, expected, desired = f
            cur = d.get(key)
            if (cur is None and expected == b"") or cur == expected:
                d[key] = desired
                self._wake_waiters()
            self._reply(conn, _OK, [d.get(key, b"")])
        elif code == _CHECK:
            self._reply(conn, _OK, [b"1" if all(k in d for k in f) else b"0"])
        elif code == _DELETE:
            self._reply(conn, _OK, [b"1" if d.pop(f[0], None) is not None else b"0"])
        elif code == _NUM_KEYS:
            self._reply(conn, _OK, [str(len(d)).encode()])
        elif code == _PING:
            self._reply(conn, _OK, [b"pong"])
        else:
            self._reply(conn, _ERROR, [f"store server: unknown command {code}".encode()])

    def _answer(self, conn, code, keys):
        self._reply(conn, _OK, [self.data[k] for k in keys] if code == _GET else [])

    def _wake_waiters(self):
        if not self.waiters:
            return
        still = []
        for w in self.waiters:
            if all(k in self.data for k in w.keys):
                self._answer(w.conn, w.code, w.keys)
            else:
                still.append(w)
        self.waiters = still

    def _expire(self):
        if not self.waiters:
            return
        now, still = time.monotonic(), []
        for w in self.waiters:
            if w.deadline <= now:
                missing = [k for k in w.keys if k not in self.data]
                self._reply(w.conn, _TIMEOUT, missing)
            else:
                still.append(w)
        self.waiters = still


# --- the client -------------------------------------------------------------------

class TCPStore:
    """A client of the job's key-value store (the rendezvous the ranks share).

    With ``is_master=True`` it also starts the server in this process; ``port=0`` picks
    a free port (read ``.port``). Values are bytes; `add` keeps integer counters.

    Args:
        host (str): the server's address (the master binds it).
        port (int): the server's port; 0 lets the master pick one.
        is_master (bool, optional): start the server here. Default: False.
        world_size (int, optional): the number of ranks of the job (informational;
            `store_barrier` takes it explicitly). Default: None.
        timeout (float, optional): seconds any call may wait (connecting included) unless
            it is given its own timeout. Default: 300.0.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
        >>> store.set("key", b"value")
        >>> store.get("key")
        b'value'
        >>> store.add("counter", 2)
        2
        >>> store.close()
    """

    def __init__(self, host: str, port: int, is_master: bool = False,
                 world_size: int | None = None, timeout: float = 300.0):
        if not isinstance(port, int) or not 0 <= port < 65536:
            raise ValueError(f"TCPStore: 'port' must be an int in [0, 65535], got {port!r}")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"TCPStore: 'timeout' must be a positive number of seconds, "
                             f"got {timeout!r}")
        if port == 0 and not is_master:
            raise ValueError("TCPStore: port 0 (pick a free port) needs is_master=True")
        self.host, self.timeout, self.world_size = host, float(timeout), world_size
        self._server = None
        if is_master:
            try:
                self._server = _Server(host, port)
            except OSError as e:
                raise StoreError(f"TCPStore: cannot listen on {host}:{port} ({e.strerror or e}); "
                                 f"is another job using this port? Give a free port or 0") from e
            port = self._server.port
        self.port = port
        self._lock = threading.Lock()
        self._sock = None
        self._connect(self.timeout)

    @property
    def endpoint(self) -> str:
        """The store's ``host:port``.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.endpoint.startswith("127.0.0.1:")
            True
            >>> store.close()
        """
        return f"{self.host}:{self.port}"

    def __repr__(self):
        return f"TCPStore({self.endpoint}{', master' if self._server else ''})"

    # connection
    def _connect(self, timeout):
        deadline = time.monotonic() + timeout
        delay, last = 0.01, None
        while True:
            try:
                left = deadline - time.monotonic()
                s = socket.create_connection((self.host, self.port),
                                             timeout=max(0.1, min(5.0, left)))
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._sock = s
                return
            except OSError as e:
                last = e
            if time.monotonic() + delay > deadline:
                raise StoreError(f"TCPStore: could not reach the store at {self.endpoint} within "
                                 f"{timeout:g} s (last error: {last}); is the master (the node-0 "
                                 f"launcher or rank 0) running and reachable?")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _recv_exact(self, n, what):
        buf = bytearray()
        while len(buf) < n:
            chunk = self._sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError(f"the store at {self.endpoint} closed the connection "
                                      f"during {what}")
            buf += chunk
        return bytes(buf)

    def _call(self, code, fields, wait: float = 0.0, retry: bool = True):
        """Send one request and read its reply; the socket waits `wait` seconds (the
        server's own deadline) plus a margin for a server that stopped answering."""
        what = _NAMES[code]
        msg = _encode(code, fields)
        with self._lock:
            for attempt in (0, 1):
                try:
                    if self._sock is None:
                        self._connect(self.timeout)
                    self._sock.settimeout(wait + 30.0)
                    self._sock.sendall(msg)
                    (ln,) = _LEN.unpack(self._recv_exact(4, what))
                    if ln > _MAX_MESSAGE:
                        raise StoreError(f"TCPStore.{what}: reply of {ln} bytes from "
                                         f"{self.endpoint}: not a store")
                    status, out = _decode(self._recv_exact(ln, what))
                    break
                except TimeoutError as e:
                    self._reset()
                    raise StoreError(f"TCPStore.{what}: the store at {self.endpoint} did not "
                                     f"answer within {wait + 30.0:g} s") from e
                except (ConnectionError, OSError) as e:
                    self._reset()
                    if attempt or not retry:
                        raise StoreError(f"TCPStore.{what}: lost the connection to the store at "
                                         f"{self.endpoint}: {e}") from e
        if status == _ERROR:
            raise StoreError(out[0].decode(errors="replace"))
        return status, out

    def _reset(self):
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._sock = None

    def _timeout(self, timeout):
        if timeout is None:
            return self.timeout
        if not (isinstance(timeout, (int, float)) and timeout >= 0):
            raise ValueError(f"TCPStore: 'timeout' must be a non-negative number of seconds, "
                             f"got {timeout!r}")
        return float(timeout)

    # the API
    def set(self, key: str, value) -> None:
        """Set `key` to `value` (bytes or str), waking every rank waiting for it.

        Args:
            key (str): the key.
            value (bytes|str): the value.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.set("key", "value")
            >>> store.get("key")
            b'value'
            >>> store.close()
        """
        self._call(_SET, [_key(key, "set"), _as_bytes(value, "set")])

    def get(self, key: str, timeout: float | None = None) -> bytes:
        """The value of `key`, waiting up to `timeout` seconds for it to be set
        (`StoreTimeoutError` after that).

        Args:
            key (str): the key.
            timeout (float, optional): seconds to wait; None: the store's timeout. Default: None.

        Returns:
            bytes: the value.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.set("key", b"v")
            >>> store.get("key", timeout=5)
            b'v'
            >>> store.close()
        """
        t = self._timeout(timeout)
        status, out = self._call(_GET, [repr(t).encode(), _key(key, "get")], wait=t)
        if status == _TIMEOUT:
            raise StoreTimeoutError(f"TCPStore.get: key {key!r} was not set within {t:g} s "
                                    f"(store {self.endpoint})", [key])
        return out[0]

    def multi_get(self, keys, timeout: float | None = None) -> list[bytes]:
        """The values of `keys`, waiting up to `timeout` seconds for all of them.

        Args:
            keys (list[str]): the keys.
            timeout (float, optional): seconds to wait; None: the store's timeout. Default: None.

        Returns:
            list[bytes]: the values, in order.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.set("a", b"1")
            >>> store.set("b", b"2")
            >>> store.multi_get(["a", "b"])
            [b'1', b'2']
            >>> store.close()
        """
        t = self._timeout(timeout)
        ks = [_key(k, "multi_get") for k in keys]
        status, out = self._call(_GET, [repr(t).encode(), *ks], wait=t)
        if status == _TIMEOUT:
            missing = [k.decode() for k in out]
            raise StoreTimeoutError(f"TCPStore.multi_get: keys {missing} were not set within "
                                    f"{t:g} s (store {self.endpoint})", missing)
        return out

    def wait(self, keys, timeout: float | None = None) -> None:
        """Block until every key in `keys` is set, or raise `StoreTimeoutError` listing
        the keys still missing after `timeout` seconds.

        Args:
            keys (list[str]): the keys.
            timeout (float, optional): seconds to wait; None: the store's timeout. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.set("ready", b"1")
            >>> store.wait(["ready"])
            >>> try:
            ...     store.wait(["never"], timeout=0.1)
            ... except TimeoutError as e:   # a StoreTimeoutError
            ...     print(e.missing)
            ['never']
            >>> store.close()
        """
        t = self._timeout(timeout)
        ks = [_key(k, "wait") for k in keys]
        status, out = self._call(_WAIT, [repr(t).encode(), *ks], wait=t)
        if status == _TIMEOUT:
            missing = [k.decode() for k in out]
            raise StoreTimeoutError(f"TCPStore.wait: keys {missing} were not set within {t:g} s "
                                    f"(store {self.endpoint})", missing)

    def add(self, key: str, amount: int) -> int:
        """Add `amount` to the integer at `key` (0 when unset) atomically.

        Args:
            key (str): the key.
            amount (int): the increment.

        Returns:
            int: the new value.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.add("counter", 2)
            2
            >>> store.add("counter", 3)
            5
            >>> store.close()
        """
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise TypeError(f"TCPStore.add: amount must be an int, got {amount!r}")
        # not retried on a lost connection: the first attempt may have counted
        _, out = self._call(_ADD, [_key(key, "add"), str(amount).encode()], retry=False)
        return int(out[0])

    def compare_set(self, key: str, expected, desired) -> bytes:
        """Set `key` to `desired` if its value is `expected` (b"" = unset).

        Args:
            key (str): the key.
            expected (bytes|str): the value required now.
            desired (bytes|str): the new value.

        Returns:
            bytes: the value after the call.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.compare_set("lock", b"", b"rank0")
            b'rank0'
            >>> store.compare_set("lock", b"", b"rank1")
            b'rank0'
            >>> store.close()
        """
        _, out = self._call(_CAS, [_key(key, "compare_set"), _as_bytes(expected, "compare_set"),
                                   _as_bytes(desired, "compare_set")], retry=False)
        return out[0]

    def check(self, keys) -> bool:
        """Whether every key in `keys` is set (does not wait).

        Args:
            keys (list[str]): the keys.

        Returns:
            bool: all set.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.set("a", b"1")
            >>> store.check(["a"]), store.check(["a", "b"])
            (True, False)
            >>> store.close()
        """
        _, out = self._call(_CHECK, [_key(k, "check") for k in keys])
        return out[0] == b"1"

    def delete_key(self, key: str) -> bool:
        """Remove `key`.

        Args:
            key (str): the key.

        Returns:
            bool: whether it existed.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.set("a", b"1")
            >>> store.delete_key("a"), store.delete_key("a")
            (True, False)
            >>> store.close()
        """
        _, out = self._call(_DELETE, [_key(key, "delete_key")])
        return out[0] == b"1"

    def num_keys(self) -> int:
        """The number of keys set in the store.

        Returns:
            int: the count.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)
            >>> store.set("a", b"1")
            >>> store.num_keys()
            1
            >>> store.close()
        """
        _, out = self._call(_NUM_KEYS, [])
        return int(out[0])

    def close(self) -> None:
        """Close this client (and stop the server if this is the master).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> store = dist.TCPStore("127.0.0.1", 0, is_master=True, world_size=1, timeout=10)

            >>> store.close()
        """
        with self._lock:
            self._reset()
        if self._server is not None:
            self._server.close()
            self._server = None

    def __del__(self):
        # a dropped client closes its socket quietly; a dropped master keeps serving
        # (its daemon thread holds the server) until the process exits
        with contextlib.suppress(Exception):
            self._reset()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def store_barrier(store: TCPStore, prefix: str, rank: int, world_size: int,
                  timeout: float) -> None:
    """Wait until all `world_size` ranks have reached the barrier named `prefix`.

    Each rank sets ``f"{prefix}/{rank}"``; on timeout the error names the ranks
    that did not arrive (a counter alone could only say how many)."""
    if not (isinstance(world_size, int) and world_size > 0 and 0 <= rank < world_size):
        raise ValueError(f"store_barrier: rank {rank!r} is not in [0, world_size={world_size!r})")
    store.set(f"{prefix}/{rank}", b"1")
    try:
        store.wait([f"{prefix}/{r}" for r in range(world_size)], timeout=timeout)
    except StoreTimeoutError as e:
        missing = sorted(int(k.rsplit("/", 1)[1]) for k in e.missing)
        raise StoreTimeoutError(f"barrier {prefix!r}: rank {rank} waited {timeout:g} s; rank(s) "
                                f"{missing} of {world_size} did not arrive "
                                f"(store {store.endpoint})", e.missing) from None
