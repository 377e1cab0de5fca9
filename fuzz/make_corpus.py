#!/usr/bin/env python3
"""Writes fuzz/corpus/batch: the seed corpus of the batch decoder's fuzz target.

bad-*: the malformed batches of issue 14 (each once read out of bounds,
crashed or was accepted); they must be rejected. ok-*: well-formed batches of
every kind; they must be accepted. tests/comm/test_wire_check.cpp replays
both with GCC. Inputs found by fuzzing are added as crash-* (no verdict kept,
they must only not crash). Layouts: src/comm/wire.h.
"""
import os
import struct

KIND = dict(task=1, send=2, retire=3, create=4, fetch=5, shutdown=6, completed=7,
            broadcast=8, route=9, mpi_broadcast=10, local_task=11)


def sel(source, reader=0):
    """The selector byte: the sender, and the reading rank (0: the head, or 1)."""
    return bytes([source | (reader << 2)])


def frame(kind, body, declared=None):
    kind = KIND.get(kind, kind)
    return struct.pack('<B3xI', kind, len(body) if declared is None else declared) + body


def task(accesses=(), args=b'', name=b'', n=None, args_bytes=None, name_bytes=None, channel=-1):
    body = struct.pack('<QIIIiIiQiI', 77, 1, len(accesses) if n is None else n,
                       len(args) if args_bytes is None else args_bytes, channel,
                       len(name) if name_bytes is None else name_bytes, 0, 1, -1, 0)
    body += b''.join(struct.pack('<QQQiiB7x', *a) for a in accesses)
    return frame('task', body + args + name)


def route(kind, nbytes, chunk, ranks, count=None, shape=1, tag=9):
    return frame(kind, struct.pack('<QQQiIBB6x', 40, nbytes, chunk, tag,
                                   len(ranks) if count is None else count, shape, 1) +
                 b''.join(struct.pack('<i', r) for r in ranks))


def mpi(nbytes, root, members, count=None):
    return frame('mpi_broadcast', struct.pack('<QQQiiII', 40, nbytes, 64, root, 5,
                                              len(members) if count is None else count, 0) +
                 b''.join(struct.pack('<i', r) for r in members))


def create(version, nbytes, ptr=0x1000):
    return frame('create', struct.pack('<QQQ', version, nbytes, ptr))


def fetch(version, source, nbytes, ptr=0x1000):
    return frame('fetch', struct.pack('<QiiQQ', version, source, 4, ptr, nbytes))


STOP = frame('shutdown', b'\0')
BAD = {
    'truncated-header': sel(0, 1) + bytes([3, 0, 0, 0, 8]),
    'command-past-batch': sel(0, 1) + frame('retire', struct.pack('<Q', 5), declared=100),
    'unknown-kind': sel(0, 1) + frame(99, bytes(8)),
    'task-shorter-than-fields': sel(0, 1) + frame('task', bytes(4)),
    'task-accesses-past-payload': sel(0, 1) + task([(0, 3, 8, -1, 0, 2)], n=1000),
    'task-args-past-payload': sel(0, 1) + task(args=b'abc', args_bytes=1 << 20),
    'task-name-past-payload': sel(0, 1) + task(name=b'n', name_bytes=0xffffffff),
    'task-sizes-wrap-32': sel(0, 1) + task(n=0x06666667, args_bytes=0xffffffe8),
    'access-neither-version': sel(0, 1) + task([(0, 0, 8, -1, 0, 3)]),
    'huge-remote-input': sel(0, 1) + task([(7, 0, 1 << 62, 2, 3, 1)]),
    'input-outside-job': sel(0, 1) + task([(7, 0, 8, 9, 3, 1)]),
    'task-from-non-planner': sel(2, 1) + task(),
    'zero-payload-send': sel(0, 1) + frame('send', b''),
    'send-outside-job': sel(0, 1) + frame('send', struct.pack('<Qii', 5, 12, 1)),
    'short-retire': sel(0, 1) + frame('retire', bytes(3)),
    'short-create': sel(0) + frame('create', bytes(8)),
    'short-fetch': sel(0) + frame('fetch', bytes(1)),
    'huge-create': sel(0) + create(5, 1 << 50),
    'fetch-to-null': sel(0) + fetch(5, -1, 8, ptr=0),
    'short-completed': sel(1) + frame('completed', bytes(10)),
    'completed-not-head': sel(2, 1) + frame('completed', struct.pack('<QQQ', 1, 0, 1)),
    'create-from-other-rank': sel(0, 1) + create(5, 8),
    'fetch-from-other-rank': sel(0, 1) + fetch(5, 2, 8),
    'local-task-from-other-rank': sel(0, 1) + frame('local_task', struct.pack('<Q', 0x1000)),
    'local-task-without-record': sel(0) + frame('local_task', struct.pack('<Q', 0)),
    'short-route': sel(2, 1) + frame('route', bytes(8)),
    'route-list-past-payload': sel(2, 1) + route('route', 64, 64, [0], count=1000),
    'route-outside-job': sel(2, 1) + route('route', 64, 64, [7]),
    'route-bad-shape': sel(2, 1) + route('route', 64, 64, [0], shape=9),
    'huge-route': sel(2, 1) + route('route', 1 << 60, 1, []),
    'route-too-many-chunks': sel(2, 1) + route('route', 1 << 40, 1, []),
    'short-broadcast': sel(0, 1) + frame('broadcast', bytes(39)),
    'broadcast-from-non-planner': sel(3, 1) + route('broadcast', 64, 64, [2]),
    'short-mpi-broadcast': sel(0, 1) + frame('mpi_broadcast', bytes(12)),
    'mpi-root-outside-job': sel(0, 1) + mpi(64, 6, [0, 1]),
    'good-then-cut': sel(0, 1) + task([(0, 3, 16, -1, 0, 2)]) + STOP[:5],
}
OK = {
    'task': sel(0, 1) + task([(11, 0, 800, -1, 0, 1), (0, 12, 8, 3, 77, 2),
                              (13, 14, 64, -2, 5, 3)], args=b'abcde', name=b'stencil') + STOP,
    'send-retire': sel(0, 1) + frame('send', struct.pack('<Qii', 12, 3, 77)) +
                   frame('retire', struct.pack('<Q', 11)),
    'local-create-fetch': sel(0) + create(21, 16) + fetch(21, -1, 16) + fetch(22, 2, 16),
    'local-task': sel(0) + frame('local_task', struct.pack('<Q', 0x1000)),
    'spmd-local-task': sel(1, 1) + task([(0, 3, 16, -1, 0, 2)]) + STOP,
    'completed': sel(3) + frame('completed', struct.pack('<QQQQQQ', 1, 10, 1, 2, 20, 2)),
    'route': sel(2, 1) + route('route', 1000, 96, [0, 3]),
    'broadcast': sel(0, 1) + route('broadcast', 1000, 96, [0, 2, 3], shape=2),
    'mpi-broadcast': sel(0, 1) + mpi(1000, 0, [0, 1, 2, 3]),
    'empty': sel(0),
}

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'batch')
os.makedirs(here, exist_ok=True)
for prefix, table in (('bad-', BAD), ('ok-', OK)):
    for name, data in table.items():
        with open(os.path.join(here, prefix + name), 'wb') as f:
            f.write(data)
print(f'{len(BAD)} bad and {len(OK)} ok inputs in {here}')
