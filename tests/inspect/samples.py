"""Print, as one JSON list, what the tests check a ledger row against, read from an Inspect log
by Python (zipfile + Inspect's own zstd support), independently of git-ledger's reader.

    python samples.py LOG

Each entry: id, epoch, uuid, member (`samples/…` for .eval, `samples[i]` for .json) and the
SHA-256 of the sample's bytes as the log holds them (the member's decompressed bytes; for a
.json log the exact bytes of the sample object).
"""

import hashlib
import json
import sys
import zipfile

import zipfile_zstd  # noqa: F401  (registers zip method 93, zstd)


def eval_samples(path):
    out = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if not info.filename.startswith("samples/"):
                continue
            data = z.read(info)
            sample = json.loads(data)
            # A repeated member name: the last one counts.
            out[info.filename] = (sample, data, info.filename)
    return list(out.values())


def json_samples(path):
    text = open(path, "rb").read().decode("utf-8")
    at = text.index('\n  "samples": [') + len('\n  "samples": [')
    decoder = json.JSONDecoder()
    out = []
    while True:
        while text[at] in " \r\n\t,":
            at += 1
        if text[at] == "]":
            break
        sample, end = decoder.raw_decode(text, at)
        out.append((sample, text[at:end].encode("utf-8"), f"samples[{len(out)}]"))
        at = end
    return out


def main(path):
    entries = eval_samples(path) if path.endswith(".eval") else json_samples(path)
    print(
        json.dumps(
            [
                {
                    "id": s["id"],
                    "epoch": s["epoch"],
                    "uuid": s.get("uuid"),
                    "member": member,
                    "sha256": hashlib.sha256(data).hexdigest(),
                }
                for s, data, member in entries
            ]
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
