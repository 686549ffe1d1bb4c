#!/usr/bin/env python3
"""The two Inspect logs of docs/hardening.md's memory table that tests/cli/inspect/bounds.rs
does not build (too large for a test): the largest real log made, and a directory of
empty members at the entry bound.

Usage:
  inspect_logs.py largest OUT [SAMPLES [PAD]]   SAMPLES (default 2000) copies of the first
      sample of tests/data/inspect-logs/log_streaming.eval (ids 1..SAMPLES, epoch 1), each
      first message padded by about PAD bytes (default 105000), deflated; with that log's
      header, summaries and reductions.
  inspect_logs.py directory OUT [ENTRIES]       ENTRIES (default 1000000) stored members
      samples/<i>_epoch_1.json holding `{}`, with a ZIP64 end of central directory.

Only the standard library; the output is the same bytes on every run of one Python.
"""
import json
import os
import struct
import sys
import zipfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def largest(out, samples=2000, pad=105_000):
    src = zipfile.ZipFile(os.path.join(ROOT, "tests/data/inspect-logs/log_streaming.eval"))
    base = json.loads(src.read("samples/1_epoch_1.json"))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name in ["_journal/start.json", "header.json", "summaries.json", "reductions.json"]:
            z.writestr(zipfile.ZipInfo(name), src.read(name), zipfile.ZIP_DEFLATED)
        for i in range(1, samples + 1):
            s = dict(base, id=i, epoch=1)
            m = [dict(x) for x in base["messages"]]
            m[0]["content"] += " " + ("lorem ipsum dolor sit amet %d " % i) * (pad // 28)
            s["messages"] = m
            info = zipfile.ZipInfo(f"samples/{i}_epoch_1.json")
            z.writestr(info, json.dumps(s), zipfile.ZIP_DEFLATED)


def directory(out, entries=1_000_000):
    data = b"{}"
    crc = zlib.crc32(data)
    central = bytearray()
    off = 0
    with open(out, "wb") as f:
        for i in range(entries):
            name = f"samples/{i}_epoch_1.json".encode()
            common = struct.pack("<HHHIIIIHH", 20, 0, 0, 0, crc, len(data), len(data), len(name), 0)
            local = struct.pack("<I", 0x04034B50) + common + name + data
            central += struct.pack("<IH", 0x02014B50, 45) + common
            central += struct.pack("<HHHII", 0, 0, 0, 0, off) + name
            f.write(local)
            off += len(local)
        f.write(central)
        z64 = off + len(central)
        n = entries
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(central), off))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, z64, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, len(central), off, 0))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("largest", "directory"):
        sys.exit(__doc__)
    kind, out, rest = sys.argv[1], sys.argv[2], [int(a) for a in sys.argv[3:]]
    (largest if kind == "largest" else directory)(out, *rest)
