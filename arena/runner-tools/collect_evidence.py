#!/usr/bin/env python3
"""Evidence for one attempt: definition hashes from Git objects and a manifest.

Usage:
  collect_evidence.py hash PATH [--rev REV] [--repo DIR]
  collect_evidence.py manifest WORKDIR OUT.json --checks CHECKS.json [--repo DIR]

`hash` prints the definition hash and file count of PATH at REV, computed as
the declaration specifies: rows [path, mode, sha256-of-blob] for every blob
under PATH, sorted by path, serialised as compact ASCII JSON, then SHA-256.
Symlinks (120000) are hashed as their target bytes; submodules are refused.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def definition_hash(repo, rev, path):
    listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", rev, "--", path)
    rows = []
    for entry in filter(None, listing.split(b"\0")):
        meta, name = entry.split(b"\t", 1)
        mode, kind, oid = meta.decode().split()
        if kind != "blob":
            raise SystemExit(f"{name.decode(errors='replace')}: {kind} entries cannot be pinned")
        blob = git(repo, "cat-file", "blob", oid)
        rows.append([name.decode("utf-8"), mode, hashlib.sha256(blob).hexdigest()])
    if not rows:
        raise SystemExit(f"{path}: nothing to pin at {rev}")
    rows.sort(key=lambda r: r[0].encode("utf-8"))
    data = json.dumps(rows, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return hashlib.sha256(data).hexdigest(), len(rows)


def tools_identity(repo, rev="HEAD"):
    return definition_hash(repo, rev, "arena/runner-tools")[0]


def workdir_digest(workdir):
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(workdir):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, workdir).replace(os.sep, "/")
            data = os.readlink(full).encode() if os.path.islink(full) else open(full, "rb").read()
            h.update(rel.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def write_manifest(workdir, out, checks, repo):
    manifest = {
        "workdir_sha256": workdir_digest(workdir),
        "oracle_checks": checks,
        "runner_tools_identity": tools_identity(repo),
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    return manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("hash")
    h.add_argument("path")
    h.add_argument("--rev", default="HEAD")
    h.add_argument("--repo", default=".")
    m = sub.add_parser("manifest")
    m.add_argument("workdir")
    m.add_argument("out")
    m.add_argument("--checks", required=True)
    m.add_argument("--repo", default=".")
    args = parser.parse_args()
    if args.command == "hash":
        digest, files = definition_hash(args.repo, args.rev, args.path)
        print(json.dumps({"path": args.path, "sha256": digest, "files": files}))
    else:
        with open(args.checks, encoding="utf-8") as f:
            checks = json.load(f)
        write_manifest(args.workdir, args.out, checks, args.repo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
