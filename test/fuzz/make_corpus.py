#!/usr/bin/env python3
# test/fuzz/make_corpus.py - writes the hand-made seed inputs of test/fuzz/corpus/ (seed-*.bin).
#
# Each seed is a short scenario in fuzz_api.c's input format: five setup bytes (object size and
# alignment, prefill, limit, registry reserve, registry section bound), then operations, each an
# opcode byte followed by its argument bytes. The fuzzer starts from these and mutates them; the
# committed corpus may also hold inputs the fuzzer found (named by their SHA-1), which this
# script leaves alone.
import os
import sys

(ALLOC_NOWAIT, ALLOC_WAIT, FREE, FREE_DEFERRED, QUIESCE, GROW, SET_LIMIT, SET_FAILSLAB, FLUSH,
 REG_ADD, REG_DEL, ACTIVATE, DEACTIVATE, SYNCHRONIZE, WALK, LIST_ADD, LIST_DEL, DROP, SWEEP,
 CLEAR, MISUSE, PARSE, ALLOC_BURST, FREE_BURST, READERS) = range(25)

# set_failslab probability bytes (index into {0, 100, 100, 50, 1, 99, 101}); 0x80 switches off
P0, P100, P50, P1, P99, PBAD, POFF = 0, 1, 3, 4, 5, 6, 0x80
# sweep bytes
RESUME, RESTART, BATCH, BADALGO = 0, 1, 2, 3
STORE, CAS = 0, 1
PINNED, UNPINNED, BLOCKING_OK, ARRAY = 0, 1, 2, 3
# sweep guards (bits 5-6 of the adapter byte): counting, none, epoch, rwlock
COUNTING, NONE, EPOCH, RWLOCK = 0, 0x20, 0x40, 0x60
# bursts: 1 + 8 * (b & 0x7f) operations; 0x80 = WAIT (alloc) or from the front (free)
WAIT_BURST = 0x80


def setup(size_index=3, align_index=0, prefill=0, limit=0, reserve=3, bound=2):
    return bytes([size_index | (align_index << 3), prefill, limit, reserve, bound])


def failslab(prob, interval=1, times=-1, seed=7):
    return bytes([SET_FAILSLAB, prob, interval, times + 2, seed])


def sweep(algo, publish, reserve, bound, adapter, stats=True):
    return bytes([SWEEP, algo, publish, reserve, bound, adapter | (0 if stats else 0x80)])


def ops(*parts):
    out = b""
    for p in parts:
        out += p if isinstance(p, bytes) else bytes(p)
    return out


def list_of(n):
    return b"".join(bytes([LIST_ADD, i]) for i in range(n))


def nodes(first, n):
    return b"".join(bytes([REG_ADD, i]) for i in range(first, first + n))


def parse(spec, name_len=15):
    s = spec.encode()
    return bytes([PARSE, len(s)]) + s + bytes([name_len])


SEEDS = {
    "cache-basics": setup(3, 0, 10, 0) + ops(
        [ALLOC_NOWAIT], [ALLOC_NOWAIT], [ALLOC_WAIT], [FREE, 1], [GROW, 200, 0], [ALLOC_NOWAIT],
        [FREE_DEFERRED, 2], [FLUSH], [ALLOC_NOWAIT], [QUIESCE], [FREE, 0], [SET_LIMIT, 5],
        [ALLOC_WAIT], [ALLOC_WAIT]),
    "cache-limit-and-injection": setup(0, 2, 4, 8) + ops(
        failslab(P100, interval=3, times=2), [ALLOC_NOWAIT] * 8, [ALLOC_WAIT] * 6,
        [GROW, 64, 0], [SET_LIMIT, 0xc0], [GROW, 64, 0], failslab(POFF), [ALLOC_NOWAIT]),
    "registry-lifecycle": setup(1, 0, 0, 0, 2, 3) + ops(
        nodes(0, 6), [WALK], [ACTIVATE, 0], [WALK], nodes(6, 3), [REG_DEL, 1], [REG_DEL, 7],
        [REG_ADD, 1], [SYNCHRONIZE], [REG_ADD, 1], [ACTIVATE, 0], [DEACTIVATE], [WALK],
        [DEACTIVATE], [ACTIVATE, 1], [WALK]),
    "registry-out-of-memory": setup(3, 0, 2, 5, 4, 1) + ops(
        nodes(0, 10), failslab(P100), [ACTIVATE, 0], [WALK], [REG_ADD, 12], [SET_LIMIT, 0xc0],
        [ACTIVATE, 0], [ACTIVATE, 0], [WALK], [REG_DEL, 3], [DEACTIVATE]),
    "sweeps-every-algorithm": setup(3, 0, 0, 0) + ops(
        list_of(12), sweep(RESUME, STORE, 2, 0, PINNED), [CLEAR, 0],
        sweep(RESTART, CAS, 3, 1, PINNED), [CLEAR, 1], [QUIESCE],
        sweep(BATCH, STORE, 4, 0, UNPINNED), [DROP, 3], [DROP, 5],
        sweep(RESUME, CAS, 1, 0, UNPINNED), [CLEAR, 0],
        sweep(RESUME, STORE, 2, 0, BLOCKING_OK), sweep(BATCH, CAS, 1, 2, ARRAY)),
    "sweeps-under-injection": setup(2, 1, 0, 0) + ops(
        list_of(20), failslab(P100, interval=2), sweep(RESUME, CAS, 3, 2, PINNED), [CLEAR, 0],
        failslab(P100, times=5), sweep(RESTART, STORE, 3, 0, PINNED), [CLEAR, 0],
        failslab(P50, seed=9), sweep(RESUME, STORE, 5, 3, ARRAY, stats=False), [CLEAR, 0],
        failslab(P100), sweep(RESUME, STORE, 2, 0, UNPINNED)),
    "sweeps-out-of-memory": setup(3, 0, 0, 7) + ops(
        list_of(15), sweep(BATCH, STORE, 3, 0, PINNED), [WALK], [SET_LIMIT, 20],
        sweep(RESUME, CAS, 3, 1, PINNED), [DROP, 2], [LIST_DEL, 4], [SET_LIMIT, 0xc0],
        sweep(RESTART, CAS, 4, 0, PINNED), [CLEAR, 0], [SET_LIMIT, 3],
        sweep(BATCH, STORE, 2, 0, ARRAY)),
    "cache-bursts": setup(0, 0, 0, 0) + ops(
        [ALLOC_BURST, WAIT_BURST | 40], [ALLOC_BURST, 60], [FREE_BURST, 50], [FLUSH],
        [ALLOC_BURST, 30], [FREE_BURST, WAIT_BURST | 127], [FREE_BURST, 127], [GROW, 0, 8],
        [ALLOC_BURST, 127], [FREE_DEFERRED, 8], [FREE_BURST, 127], [QUIESCE]),
    "sweeps-ready-made-guards": setup(3, 0, 0, 0) + ops(
        list_of(10), sweep(RESUME, STORE, 2, 2, PINNED | NONE), [CLEAR, 0],
        sweep(RESTART, CAS, 2, 1, ARRAY | EPOCH), [CLEAR, 0],
        sweep(BATCH, STORE, 3, 0, UNPINNED | RWLOCK), [CLEAR, 0],
        sweep(RESUME, STORE, 2, 0, BLOCKING_OK | EPOCH)),
    "many-readers": setup(1, 0, 0, 0, 2, 1) + ops(
        nodes(0, 4), [ACTIVATE, 0], [READERS, 0], [REG_DEL, 2], [READERS, 0x13],
        [READERS, 0x61], [REG_ADD, 2], [READERS, 0x22], [DEACTIVATE]),
    "bad-sweeps": setup() + ops(
        list_of(3), sweep(BADALGO, STORE, 2, 0, PINNED), sweep(RESUME, 2, 2, 0, PINNED),
        sweep(RESUME, STORE, 0, 0, PINNED), sweep(RESUME, STORE, 255, 0, PINNED),
        sweep(RESUME, STORE, 2, 3, UNPINNED), sweep(RESUME, STORE, 90, 0, PINNED)),
    "bad-input": setup() + ops(*[[MISUSE, i] for i in range(10)], [MISUSE, 11], [MISUSE, 13]),
    "failslab-specs": setup() + ops(
        parse("probability=50"), parse("probability=100,interval=3,times=-1,seed=0x1f"),
        parse("probability=10,cache=fuzz", 4), parse("probability=101"),
        parse("interval=2"), parse("probability=5,"), parse("probability=5,times=-2"),
        parse("probability=5,bogus=1"), parse("probability=007")),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, f"seed-{name}.bin"), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds in {out}")


if __name__ == "__main__":
    main()
