#!/usr/bin/env python3
"""test/stages/arm64/cpio.py OUT.cpio.gz DEST=SOURCE... - write a gzipped initramfs (the newc
cpio format the kernel unpacks) holding each SOURCE file at /DEST, executable, with the folders
the guest's /init mounts on (/dev, /proc, /sys, /tmp) and /dev/console. Written here so that no
root, no cpio tool and no device node on the host are needed; every owner is root."""
import gzip
import os
import stat
import sys

out, entries = sys.argv[1], sys.argv[2:]
ino = 0


def member(name, mode, data=b"", rdev=(0, 0)):
    global ino
    ino += 1
    name_b = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name_b), 0]
    head = b"070701" + b"".join(b"%08X" % f for f in fields)
    pad = lambda n: b"\0" * (-n % 4)
    return head + name_b + pad(len(head) + len(name_b)) + data + pad(len(data))


parts = []
for d in ("dev", "proc", "sys", "tmp", "bin"):
    parts.append(member(d, stat.S_IFDIR | 0o755))
parts.append(member("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1)))
for e in entries:
    dest, src = e.split("=", 1)
    with open(src, "rb") as f:
        data = f.read()
    mode = 0o755 if os.access(src, os.X_OK) else 0o644
    parts.append(member(dest.lstrip("/"), stat.S_IFREG | mode, data))
parts.append(member("TRAILER!!!", 0))
with gzip.open(out, "wb", compresslevel=1) as f:
    f.write(b"".join(parts))
