# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# Bounds checks are off because the only C arrays indexed here are the epoll event array (index
# below the count epoll_wait returned, itself at most MAX_EVENTS) and the iovec / Py_buffer
# arrays (index below MAX_IOV, checked in the gathering loop).
"""Kafka's network ``Selector``, compiled: many connections' sockets polled through one epoll
set, whole size-prefixed request frames in, responses (buffers and file regions) out.

What it owns: the epoll descriptor and, per registered connection, a ``Channel``: its
``FrameSplitter`` (kafkapy._frames, the single framer), whether it is muted, the response
parts still to write and when it last made progress. The sockets stay owned by the caller
(who closes them after ``unregister``).

Theory of operation:

- Registration is persistent and edge-triggered: each socket is added once with
  ``EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET``. An edge says "something changed"; the channel
  remembers it (``readable``), so muting, unmuting and sending never call ``epoll_ctl``. With
  edge triggering an idle writable socket raises no event: ``EPOLLOUT`` is reported only when
  a socket that had filled up (a send met EAGAIN) drains, i.e. only while a send is pending.
- ``poll()`` takes every event with ``epoll_wait(0)``, resumes the pending writes of the
  sockets that became writable, then makes one ``recv`` per readable, unmuted channel into
  the selector's receive buffer (shared by all channels: an idle connection holds no buffer)
  and feeds it to the channel's splitter. The system calls run with the GIL released. A
  channel stays on the ready list, to be read at the next ``poll`` without waiting, while
  its last ``recv`` filled the buffer, after ``EPOLLRDHUP`` (until the ``recv`` that returns
  0) or while it is muted with data pending (until ``unmute``); ``pending`` says so, and
  the caller then polls again instead of waiting on ``fileno()``.
- Muting, as Kafka's one request in flight per connection: a channel that delivers frames is
  muted by ``poll`` (all the frames of that ``recv`` are delivered together, in order) and
  not read again until ``unmute``; the caller also mutes it for a quota throttle. TCP flow
  control then holds the client back.
- ``send(channel, parts)``: parts are buffers and file regions (objects with ``fd``,
  ``position``, ``size``). Runs of buffers go out with one ``sendmsg`` (gathered, up to
  ``MAX_IOV`` at a time), file regions with ``sendfile`` at an explicit offset (the file's
  position is untouched, so concurrent fetches may share a descriptor), until EAGAIN; what is
  left is resumed by ``poll`` when the socket drains, which then reports the channel as
  ``sent``. Parts sent while others are pending queue behind them, in order.
- Errors are per channel: a frame size that is negative or above the channel's limit
  (``InvalidRequestError``, with the frames before it still delivered), end of stream
  (``EOFError``), a socket error (``OSError``), a file region that cannot be sent in full
  (``FileRegionError``). ``poll`` reports them with that channel's result and goes on with
  the others; the caller unregisters the channel.
- ``wakeup()``: another task's way to make ``fileno()`` readable (an eventfd in the epoll
  set, drained by the next ``poll``), so that a caller sleeping on it comes back to poll
  without a cancellation of its wait.
- Idle times: every successful ``recv`` or write of at least one byte stamps the channel
  (``CLOCK_MONOTONIC``); ``expired(idle_s)`` lists the channels idle longer that are waiting
  for the client (not muted) or writing to it (a send pending): a muted channel with
  nothing to write waits on the broker, which is not idleness.
- TLS channels (``register(..., tls=sock)``, ``sock`` a non-blocking ``ssl.SSLSocket`` over the
  descriptor, its handshake done): the same registration, muting, results and errors, with
  OpenSSL between the socket and the frames. A read decrypts every TLS record already
  received into the receive buffer (``recv_into``, one record per call, until OpenSSL wants
  more bytes than the kernel has, or the buffer is full) and feeds the splitter once. A send
  joins each run of buffers into one write; file regions cannot be sent with ``sendfile``
  through TLS (no kernel TLS here), so each is read with ``preadv`` into a ``TLS_CHUNK``
  buffer and written through OpenSSL, a chunk at a time. OpenSSL's want-write leaves the
  send pending (resumed on ``EPOLLOUT``), its want-read on a write (a TLS 1.3 key update from
  the client) is resumed on ``EPOLLIN``, its want-write on a read (a TLS 1.2 handshake
  message or alert to send while the socket is full) on ``EPOLLOUT``; OpenSSL requires a
  retried write to pass the same bytes, so a channel whose chunk write is pending holds that
  chunk until it is written (chunks are pooled by the selector: at most ``TLS_SPARE_CHUNKS``
  idle ones are kept, as Kafka holds a network buffer per connection while it writes). The
  ``ssl`` calls hold the GIL for their Python part and release it in OpenSSL.

Platform: Linux (epoll, sendfile). The module builds elsewhere (the calls are stubbed at
compile time) and ``Selector()`` raises ``OSError`` saying it needs Linux.

Thread-safety: a selector and its channels belong to one thread (the broker's event loop).
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_CheckBuffer, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_AS_STRING
from libc.errno cimport EAGAIN, EINTR, errno
from libc.stdint cimport uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from posix.types cimport off_t
from posix.uio cimport iovec
from posix.unistd cimport close, read, write

import errno as errnos
import os
import ssl
import sys

from kafkapy._frames import FrameSplitter
from kafkapy.errors import InvalidRequestError

cdef extern from *:
    """
    #include <errno.h>
    #include <stdint.h>
    #include <string.h>
    #include <sys/types.h>
    #include <sys/socket.h>
    #if defined(__linux__)
    #include <sys/epoll.h>
    #include <sys/eventfd.h>
    #include <sys/sendfile.h>
    #define KP_HAVE_EPOLL 1
    #else
    /* Not Linux: the module builds, Selector() reports that it needs epoll. */
    #define KP_HAVE_EPOLL 0
    #define EPOLLIN 0x001
    #define EPOLLOUT 0x004
    #define EPOLLERR 0x008
    #define EPOLLHUP 0x010
    #define EPOLLRDHUP 0x2000
    #define EPOLLET (1u << 31)
    #define EPOLL_CTL_ADD 1
    #define EPOLL_CTL_DEL 2
    #define EPOLL_CLOEXEC 0
    #define EFD_CLOEXEC 0
    #define EFD_NONBLOCK 0
    typedef union epoll_data { void *ptr; int fd; uint32_t u32; uint64_t u64; } epoll_data_t;
    struct epoll_event { uint32_t events; epoll_data_t data; };
    static int epoll_create1(int flags) { (void)flags; errno = ENOSYS; return -1; }
    static int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev) {
        (void)epfd; (void)op; (void)fd; (void)ev; errno = ENOSYS; return -1; }
    static int epoll_wait(int epfd, struct epoll_event *evs, int n, int timeout) {
        (void)epfd; (void)evs; (void)n; (void)timeout; errno = ENOSYS; return -1; }
    static ssize_t sendfile(int out, int in, off_t *off, size_t count) {
        (void)out; (void)in; (void)off; (void)count; errno = ENOSYS; return -1; }
    static int eventfd(unsigned int initval, int flags) {
        (void)initval; (void)flags; errno = ENOSYS; return -1; }
    #endif
    #ifndef MSG_NOSIGNAL
    #define MSG_NOSIGNAL 0
    #endif
    """
    int KP_HAVE_EPOLL
    uint32_t EPOLLIN
    uint32_t EPOLLOUT
    uint32_t EPOLLERR
    uint32_t EPOLLHUP
    uint32_t EPOLLRDHUP
    uint32_t EPOLLET
    int EPOLL_CTL_ADD
    int EPOLL_CTL_DEL
    int EPOLL_CLOEXEC
    int EFD_CLOEXEC
    int EFD_NONBLOCK
    int MSG_NOSIGNAL
    int EWOULDBLOCK
    ctypedef union epoll_data_t:
        void* ptr
        int fd
    struct epoll_event:
        uint32_t events
        epoll_data_t data
    struct msghdr:
        void* msg_name
        int msg_namelen
        iovec* msg_iov
        size_t msg_iovlen
        void* msg_control
        size_t msg_controllen
        int msg_flags
    int epoll_create1(int flags) nogil
    int epoll_ctl(int epfd, int op, int fd, epoll_event* event) nogil
    int epoll_wait(int epfd, epoll_event* events, int maxevents, int timeout) nogil
    ssize_t sendfile(int out_fd, int in_fd, off_t* offset, size_t count) nogil
    int eventfd(unsigned int initval, int flags) nogil
    ssize_t recv(int fd, void* buf, size_t n, int flags) nogil
    ssize_t sendmsg(int fd, const msghdr* msg, int flags) nogil

cdef enum:
    MAX_EVENTS = 256     # events taken per epoll_wait; more wait for the next poll
    MAX_IOV = 64         # buffers gathered per sendmsg (IOV_MAX is 1024 on Linux)

DEFAULT_RECEIVE_SIZE = 1 << 20
# A TLS channel's file regions are read into pooled buffers of this size (eight TLS
# records' worth per OpenSSL call); at most TLS_SPARE_CHUNKS idle ones are kept.
TLS_CHUNK = 128 * 1024
TLS_SPARE_CHUNKS = 16

# sendfile() errors caused by the peer, not by the file: the connection's error, not the file's
cdef frozenset _PEER_ERRNOS = frozenset(
    getattr(errnos, name) for name in (
        "EPIPE", "ECONNRESET", "ENOTCONN", "ECONNABORTED", "ETIMEDOUT", "EHOSTUNREACH",
        "ENETUNREACH", "ENETDOWN") if hasattr(errnos, name))


class FileRegionError(Exception):
    """A file region could not be sent in full (the file is shorter, closed, unreadable) after
    its size was already promised to the client."""


cdef list _joined(parts):
    """A TLS channel's parts with each run of buffers joined: one OpenSSL write (and TLS
    records of up to 16 KiB filled) instead of one write and one record per part."""
    cdef list out = []
    cdef list run = []
    for part in parts:
        if PyObject_CheckBuffer(part):
            run.append(part)
            continue
        if run:
            out.append(run[0] if len(run) == 1 else b"".join(run))
            run = []
        out.append(part)
    if run:
        out.append(run[0] if len(run) == 1 else b"".join(run))
    return out


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef object _os_error(int err):
    return OSError(err, os.strerror(err))


cdef class Channel:
    """One registered connection (made by ``Selector.register``).

    ``key``: what the caller registered it with (returned with every poll result); ``fd``: its
    socket's descriptor.
    """

    cdef readonly object key
    cdef readonly int fd
    cdef Selector _selector
    cdef object _splitter
    cdef bint _muted
    cdef bint _readable      # an edge said data (or EOF) may be there, and no recv drained it
    cdef bint _hup           # the peer shut down: read until recv returns 0
    cdef bint _in_ready      # on the selector's ready list
    cdef bint _closed        # unregistered
    cdef object _tls         # the ssl.SSLSocket of a TLS channel, else None
    cdef bint _tls_eof       # a TLS read met the end of the stream after data: report it next
    cdef bint _wants_read    # a TLS write waits for bytes from the client (want-read)
    cdef bint _read_wants_write  # a TLS read waits for the socket to drain (want-write)
    cdef object _held        # (chunk, bytes in it) of a TLS file-region write to retry, or None
    cdef list _out           # response parts not yet fully written, or None
    cdef Py_ssize_t _out_index
    cdef Py_ssize_t _out_offset   # bytes of _out[_out_index] already written
    cdef double _active      # CLOCK_MONOTONIC seconds of the last progress
    # this poll's result, gathered from its two phases (write, read)
    cdef bint _touched
    cdef list _frames
    cdef bint _sent
    cdef object _error

    def __cinit__(self):
        self._out = None
        self._tls = None

    @property
    def tls(self):
        """A TLS channel: its ``ssl.SSLSocket`` does the reads and writes."""
        return self._tls is not None

    @property
    def muted(self):
        """Not read until ``unmute`` (a request in flight, or a quota throttle)."""
        return self._muted

    @property
    def sending(self):
        """A send is pending: parts wait for the socket to drain."""
        return self._out is not None

    @property
    def max_frame_size(self):
        return self._splitter.max_frame_size

    @property
    def idle_s(self):
        """Seconds since the last byte read from or written to the client."""
        return _now() - self._active

    def raise_limit(self, Py_ssize_t max_frame_size):
        """Accept frames up to ``max_frame_size`` from now on (``FrameSplitter.raise_limit``:
        a SASL connection's limit once it is authenticated)."""
        self._splitter.raise_limit(max_frame_size)


cdef class Selector:
    """``Selector(receive_size=1 MiB)``: an epoll set (``fileno()``, readable when any
    registered socket has news) and the connections registered with it.

    Raises:
        OSError: not on Linux, or epoll_create1 failed.
    """

    cdef int _epfd
    cdef int _wakefd           # the eventfd ``wakeup`` writes (its epoll data: NULL)
    cdef bint _woken           # written since the last poll drained it
    cdef dict _channels        # fd -> Channel
    cdef list _ready           # channels to read at the next poll without waiting
    cdef bint _more            # the last epoll_wait filled its array: events may remain
    cdef bytearray _buffer
    cdef object _view
    cdef list _chunks          # idle TLS_CHUNK buffers for TLS channels' file regions
    cdef Py_ssize_t _size
    cdef epoll_event* _events
    # what the writes came to (the tests and the benchmarks look)
    cdef readonly unsigned long long sendfile_calls   # sendfile calls that wrote something
    cdef readonly unsigned long long sendfile_bytes
    cdef readonly unsigned long long write_blocked    # writes that met EAGAIN (resumed later)

    def __cinit__(self):
        self._epfd = -1
        self._wakefd = -1
        self._events = NULL

    def __init__(self, Py_ssize_t receive_size=DEFAULT_RECEIVE_SIZE):
        if receive_size < 1:
            raise ValueError(f"receive_size must be positive, not {receive_size}")
        if not KP_HAVE_EPOLL:
            raise OSError(f"kafkapy._selector needs Linux epoll; this is {sys.platform}")
        self._events = <epoll_event*>malloc(MAX_EVENTS * sizeof(epoll_event))
        if self._events == NULL:
            raise MemoryError()
        self._epfd = epoll_create1(EPOLL_CLOEXEC)
        if self._epfd < 0:
            raise _os_error(errno)
        self._wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)
        if self._wakefd < 0:
            raise _os_error(errno)
        cdef epoll_event ev
        memset(&ev, 0, sizeof(ev))
        ev.events = EPOLLIN
        ev.data.ptr = NULL
        if epoll_ctl(self._epfd, EPOLL_CTL_ADD, self._wakefd, &ev) < 0:
            raise _os_error(errno)
        self._channels = {}
        self._chunks = []
        self._ready = []
        self._more = False
        self._size = receive_size
        self._buffer = bytearray(receive_size)
        self._view = memoryview(self._buffer)

    def __dealloc__(self):
        if self._epfd >= 0:
            close(self._epfd)
        if self._wakefd >= 0:
            close(self._wakefd)
        if self._events != NULL:
            free(self._events)

    def fileno(self):
        """The epoll descriptor: wait for it to become readable, then ``poll()``."""
        if self._epfd < 0:
            raise ValueError("the selector is closed")
        return self._epfd

    @property
    def pending(self):
        """``poll()`` has work without waiting: a channel left data to read, or events were
        left over."""
        return self._more or len(self._ready) > 0

    def __len__(self):
        return len(self._channels)

    def register(self, int fd, key, Py_ssize_t max_frame_size, tls=None):
        """Watch the non-blocking socket ``fd`` (the caller keeps owning it), whose frames may
        be at most ``max_frame_size`` bytes; the new unmuted ``Channel``. ``tls``: the
        ``ssl.SSLSocket`` over ``fd`` (non-blocking, handshake done) that reads and writes a
        TLS channel.

        Raises:
            OSError: epoll_ctl refused the descriptor (closed, already registered).
        """
        if self._epfd < 0:
            raise ValueError("the selector is closed")
        cdef Channel ch = Channel.__new__(Channel)
        ch.key = key
        ch.fd = fd
        ch._selector = self
        ch._splitter = FrameSplitter(max_frame_size)
        ch._tls = tls
        ch._active = _now()
        # Data may already be waiting (the client wrote before we registered): an edge-
        # triggered registration would never report it, so the channel starts readable.
        ch._readable = True
        cdef epoll_event ev
        memset(&ev, 0, sizeof(ev))
        ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET
        ev.data.ptr = <void*>ch
        if epoll_ctl(self._epfd, EPOLL_CTL_ADD, fd, &ev) < 0:
            raise _os_error(errno)
        self._channels[fd] = ch
        self._make_ready(ch)
        return ch

    def unregister(self, Channel ch):
        """Stop watching ``ch`` (its pending parts are dropped); the caller closes the socket
        after. Unregistering twice does nothing."""
        if ch._closed:
            return
        ch._closed = True
        ch._out = None
        ch._held = None
        if self._channels.get(ch.fd) is ch:
            del self._channels[ch.fd]
            if self._epfd >= 0:
                epoll_ctl(self._epfd, EPOLL_CTL_DEL, ch.fd, NULL)   # fails if already closed

    def close(self):
        """Close the epoll descriptor; every channel is unregistered (sockets left open)."""
        for ch in list(self._channels.values()):
            self.unregister(ch)
        if self._epfd >= 0:
            close(self._epfd)
            self._epfd = -1
        if self._wakefd >= 0:
            close(self._wakefd)
            self._wakefd = -1

    def wakeup(self):
        """Make ``fileno()`` readable until the next ``poll`` (which returns nothing for it):
        wakes a task waiting on it. Once per poll: further calls before it cost nothing."""
        if self._woken or self._wakefd < 0:
            return
        cdef unsigned long long one = 1
        cdef ssize_t r
        with nogil:
            r = write(self._wakefd, &one, sizeof(one))
        self._woken = True

    def mute(self, Channel ch):
        ch._muted = True

    def unmute(self, Channel ch):
        """Read ``ch`` again; if data may be waiting it goes on the ready list (``pending``)."""
        ch._muted = False
        if ch._readable:
            self._make_ready(ch)

    cdef inline void _make_ready(self, Channel ch):
        if not ch._in_ready and not ch._closed:
            ch._in_ready = True
            self._ready.append(ch)

    def expired(self, double idle_s):
        """The keys of the channels without progress for more than ``idle_s`` seconds while
        waiting for the client (not muted, or with a send pending)."""
        cdef double now = _now()
        cdef Channel ch
        out = []
        for ch in self._channels.values():
            if (not ch._muted or ch._out is not None) and now - ch._active > idle_s:
                out.append(ch.key)
        return out

    def send(self, Channel ch, parts):
        """Write ``parts`` (buffers and file regions, in order) to ``ch``: True when all was
        written now; False when some waits for the socket to drain (``poll`` resumes it and
        reports ``sent``). Queued behind a send still pending.

        Raises:
            OSError: the socket failed (the peer is gone).
            FileRegionError: a file region could not be read in full.
            ValueError: ``ch`` is unregistered.
        """
        if ch._closed:
            raise ValueError("the channel is unregistered")
        if ch._tls is not None:
            parts = _joined(parts)
        if ch._out is not None:
            ch._out.extend(parts)
            return False
        ch._out = list(parts)
        ch._out_index = ch._out_offset = 0
        return self._write(ch)

    cdef bint _write(self, Channel ch) except -1:
        """Write ``ch``'s pending parts until done (True: ``_out`` is reset to None) or EAGAIN
        (False)."""
        if ch._tls is not None:
            return self._write_tls(ch)
        cdef list out = ch._out
        cdef Py_ssize_t count = len(out), i, k, first, n_iov
        cdef Py_ssize_t written, left, skip
        cdef ssize_t r
        cdef iovec iov[MAX_IOV]
        cdef Py_buffer views[MAX_IOV]
        cdef msghdr msg
        cdef off_t offset
        cdef int in_fd, err
        cdef Py_ssize_t size
        while ch._out_index < count:
            item = out[ch._out_index]
            if PyObject_CheckBuffer(item):
                # Gather the run of buffers starting here into one sendmsg.
                n_iov = 0
                first = ch._out_index
                try:
                    i = first
                    while i < count and n_iov < MAX_IOV and PyObject_CheckBuffer(out[i]):
                        PyObject_GetBuffer(out[i], &views[n_iov], PyBUF_SIMPLE)
                        skip = ch._out_offset if i == first else 0
                        iov[n_iov].iov_base = <char*>views[n_iov].buf + skip
                        iov[n_iov].iov_len = views[n_iov].len - skip
                        n_iov += 1
                        i += 1
                    memset(&msg, 0, sizeof(msg))
                    msg.msg_iov = iov
                    msg.msg_iovlen = n_iov
                    with nogil:
                        r = sendmsg(ch.fd, &msg, MSG_NOSIGNAL)
                        err = errno
                finally:
                    for k in range(n_iov):
                        PyBuffer_Release(&views[k])
                if r < 0:
                    if err == EAGAIN or err == EWOULDBLOCK:
                        self.write_blocked += 1
                        return False
                    if err == EINTR:
                        continue
                    raise _os_error(err)
                if r > 0:
                    ch._active = _now()
                # Advance over what was written.
                written = r
                k = 0
                while k < n_iov and written >= <Py_ssize_t>iov[k].iov_len:
                    written -= iov[k].iov_len
                    k += 1
                    ch._out_index += 1
                    ch._out_offset = 0
                if k < n_iov:
                    ch._out_offset += written
                continue
            # A file region.
            in_fd = item.fd
            size = item.size
            left = size - ch._out_offset
            if left <= 0:
                ch._out_index += 1
                ch._out_offset = 0
                continue
            offset = item.position + ch._out_offset
            with nogil:
                r = sendfile(ch.fd, in_fd, &offset, left)
                err = errno
            if r < 0:
                if err == EAGAIN or err == EWOULDBLOCK:
                    self.write_blocked += 1
                    return False
                if err == EINTR:
                    continue
                if err in _PEER_ERRNOS:
                    raise _os_error(err)
                raise FileRegionError(
                    f"file region (fd {in_fd}, position {item.position}, size {size}) failed: "
                    f"{os.strerror(err)}")
            if r == 0:
                raise FileRegionError(
                    f"file region (fd {in_fd}, position {item.position}, size {size}) ends "
                    f"{left} bytes early: the file is shorter")
            ch._active = _now()
            ch._out_offset += r
            self.sendfile_calls += 1
            self.sendfile_bytes += r
        ch._out = None
        ch._out_index = ch._out_offset = 0
        return True

    cdef bint _write_tls(self, Channel ch) except -1:
        """``_write`` for a TLS channel: through its SSLSocket, file regions a chunk at a
        time (see the module doc)."""
        cdef list out = ch._out
        cdef Py_ssize_t count = len(out), size, left, n, r
        sock = ch._tls
        while ch._out_index < count:
            item = out[ch._out_index]
            chunk = None
            if PyObject_CheckBuffer(item):
                data = memoryview(item).cast("B")
                size = len(data)
                data = data[ch._out_offset:]
            else:
                size = item.size
                left = size - ch._out_offset
                if ch._held is not None:
                    chunk, n = ch._held      # a retry: OpenSSL wants the same bytes again
                    ch._held = None
                    data = chunk[:n]
                elif left > 0:
                    chunk = self._chunks.pop() if self._chunks else \
                        memoryview(bytearray(TLS_CHUNK))
                    data = chunk[:min(left, TLS_CHUNK)]
                    try:
                        n = os.preadv(item.fd, [data], item.position + ch._out_offset)
                    except OSError as exc:
                        raise FileRegionError(
                            f"file region (fd {item.fd}, position {item.position}, size "
                            f"{size}) failed: {exc}") from exc
                    if n == 0:
                        raise FileRegionError(
                            f"file region (fd {item.fd}, position {item.position}, size "
                            f"{size}) ends {left} bytes early: the file is shorter")
                    data = chunk[:n]
            if ch._out_offset < size:
                try:
                    r = sock.send(data)
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError) as exc:
                    ch._wants_read = isinstance(exc, ssl.SSLWantReadError)
                    if chunk is not None:
                        ch._held = (chunk, len(data))
                    self.write_blocked += 1
                    return False
                ch._wants_read = False
                if chunk is not None and len(self._chunks) < TLS_SPARE_CHUNKS:
                    self._chunks.append(chunk)
                if r > 0:
                    ch._active = _now()
                ch._out_offset += r
                if ch._out_offset < size:
                    continue
            ch._out_index += 1
            ch._out_offset = 0
        ch._out = None
        ch._out_index = ch._out_offset = 0
        return True

    cdef int _read_tls(self, Channel ch, list touched) except -1:
        """A TLS channel's read in ``poll``: every record already received, up to the
        receive buffer's size, decrypted into it and fed to the splitter once."""
        cdef Py_ssize_t filled = 0, r
        cdef Py_ssize_t size = self._size
        cdef bint eof = ch._tls_eof
        sock = ch._tls
        view = self._view
        error = None
        while not eof and filled < size:
            try:
                r = sock.recv_into(view[filled:])
            except ssl.SSLWantReadError:
                ch._readable = False     # the kernel has no more: wait for an edge
                break
            except ssl.SSLWantWriteError:
                # OpenSSL must write before it reads on (a TLS 1.2 handshake message or an
                # alert) and the socket is full: the next EPOLLIN may never come (the client
                # waits for that write), so read again when the socket drains.
                ch._readable = False
                ch._read_wants_write = True
                break
            except OSError as exc:
                ch._readable = False
                error = exc
                break
            if r == 0:
                eof = True
                break
            filled += r
        if filled:
            ch._active = _now()
            self._touch(ch, touched)
            try:
                ch._frames = ch._splitter.feed(view[:filled])
            except InvalidRequestError as exc:
                ch._frames = getattr(exc, "frames", [])
                ch._error = exc
                ch._readable = False
                return 0
            if ch._frames:
                ch._muted = True
            if eof:
                # The frames read before the end are served first; the end is the next read's.
                ch._tls_eof = True
                ch._readable = True
            if filled == size or eof:
                self._make_ready(ch)
        elif eof:
            ch._readable = False
            self._touch(ch, touched)
            ch._error = EOFError("closed by the client")
        if error is not None:
            self._touch(ch, touched)
            ch._error = error
        return 0

    cdef void _touch(self, Channel ch, list touched):
        if not ch._touched:
            ch._touched = True
            ch._frames = None
            ch._sent = False
            ch._error = None
            touched.append(ch)

    def poll(self):
        """Take what the sockets have: a list of ``(key, frames, sent, error)``, one per
        channel with news: ``frames`` the whole frames read (a list, maybe empty; a channel
        that delivers frames is muted), ``sent`` True when a pending send completed,
        ``error`` None or the exception that ends the channel (``EOFError``, ``OSError``,
        ``InvalidRequestError``, ``FileRegionError``). Never waits."""
        if self._epfd < 0:
            raise ValueError("the selector is closed")
        cdef int n, i, err
        cdef unsigned long long drained
        cdef uint32_t events
        cdef Channel ch
        cdef ssize_t r
        cdef list touched = []
        cdef char* buf = PyByteArray_AS_STRING(self._buffer)
        cdef size_t size = self._size
        with nogil:
            n = epoll_wait(self._epfd, self._events, MAX_EVENTS, 0)
            err = errno
        if n < 0:
            if err != EINTR:
                raise _os_error(err)
            n = 0
        self._more = n == MAX_EVENTS
        for i in range(n):
            if self._events[i].data.ptr == NULL:     # the wakeup eventfd
                with nogil:
                    read(self._wakefd, &drained, sizeof(drained))
                self._woken = False
                continue
            ch = <Channel>self._events[i].data.ptr
            events = self._events[i].events
            if ch._closed:
                continue
            if events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR) or (
                    ch._read_wants_write and events & EPOLLOUT):
                ch._readable = True
                ch._read_wants_write = False
                if events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR):
                    ch._hup = True
                if not ch._muted:
                    self._make_ready(ch)
            if ch._out is not None and (events & (EPOLLOUT | EPOLLHUP | EPOLLERR) or
                                        ch._wants_read and events & EPOLLIN):
                self._touch(ch, touched)
                try:
                    ch._sent = self._write(ch)
                except (OSError, FileRegionError) as exc:
                    ch._error = exc
                    ch._out = None

        ready, self._ready = self._ready, []
        for ch in ready:
            ch._in_ready = False
            if ch._closed or ch._muted or not ch._readable:
                continue
            if ch._touched and ch._error is not None:
                continue
            if ch._tls is not None:
                self._read_tls(ch, touched)
                continue
            with nogil:
                r = recv(ch.fd, buf, size, 0)
                err = errno
            if r > 0:
                ch._active = _now()
                self._touch(ch, touched)
                if <size_t>r == size or ch._hup:
                    self._make_ready(ch)     # more may be there (or the EOF to read)
                else:
                    ch._readable = False     # a short read drained the socket: wait for an edge
                try:
                    ch._frames = ch._splitter.feed(self._view[:r])
                except InvalidRequestError as exc:
                    ch._frames = getattr(exc, "frames", [])
                    ch._error = exc
                    ch._readable = False
                if ch._frames:
                    ch._muted = True
            elif r == 0:
                ch._readable = False
                self._touch(ch, touched)
                ch._error = EOFError("closed by the client")
            elif err == EAGAIN or err == EWOULDBLOCK:
                ch._readable = False
            elif err == EINTR:
                self._make_ready(ch)
            else:
                ch._readable = False
                self._touch(ch, touched)
                ch._error = _os_error(err)

        results = []
        for ch in touched:
            ch._touched = False
            results.append((ch.key, ch._frames if ch._frames is not None else [], ch._sent,
                            ch._error))
            ch._frames = None
            ch._error = None
        return results
