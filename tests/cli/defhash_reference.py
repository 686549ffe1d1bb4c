#!/usr/bin/env python3
"""Independent definition hash (declaration.md), for cross-checking git-ledger and for the
benchmark baseline: `git ls-tree -r -t -z` + `git cat-file --batch` + hashlib + json.dumps.

Usage (in the repository): defhash_reference.py <commit> <path>
Prints "<sha256> <files>"; exits 2 with the reason on stderr when the path cannot be pinned.
"""
import hashlib
import json
import subprocess
import sys
import threading


def refuse(reason):
    print(reason, file=sys.stderr)
    sys.exit(2)


def main():
    commit, path = sys.argv[1], sys.argv[2]
    p = path.encode("utf-8")
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "-t", "-z", "--full-tree", commit],
        capture_output=True, check=True,
    ).stdout
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, name = record.split(b"\t", 1)
        mode, kind, oid = meta.split(b" ")
        if name == p or name.startswith(p + b"/"):
            entries.append((mode.decode(), kind.decode(), oid.decode(), name))
    if not entries:
        refuse(f"missing: {path}")
    parents = set()
    for _, _, _, name in entries:
        parts = name.split(b"/")
        for i in range(1, len(parts)):
            parents.add(b"/".join(parts[:i]))
    rows = []
    for mode, kind, oid, name in entries:
        if mode == "160000" or kind == "commit":
            refuse(f"submodule: {name!r}")
        if kind == "tree":
            if name not in parents:
                refuse(f"empty tree: {name!r}")
            continue
        try:
            text = name.decode("utf-8")
        except UnicodeDecodeError:
            refuse(f"not UTF-8: {name!r}")
        rows.append([text, mode, oid])

    proc = subprocess.Popen(["git", "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def feed():
        for row in rows:
            proc.stdin.write(row[2].encode() + b"\n")
        proc.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    out = proc.stdout
    for row in rows:
        header = out.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            refuse(f"not a blob: {header!r}")
        data = out.read(int(header[2]))
        out.read(1)
        row[2] = hashlib.sha256(data).hexdigest()
    writer.join()
    proc.wait()

    rows.sort(key=lambda r: r[0].encode("utf-8"))
    blob = json.dumps(rows, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    print(hashlib.sha256(blob).hexdigest(), len(rows))


if __name__ == "__main__":
    main()
