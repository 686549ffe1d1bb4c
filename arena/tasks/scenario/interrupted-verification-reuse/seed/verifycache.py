"""Decide whether a previous verification run may be reused for a work tree."""

import hashlib
import json
import os
import uuid


def tree_digest(root):
    """SHA-256 over the names of the files under root."""
    h = hashlib.sha256()
    for _dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            h.update(name.encode("utf-8"))
    return h.hexdigest()


class VerificationCache:
    def __init__(self, path):
        self.path = path
        self.runs = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.runs = json.load(f)

    def _save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.runs, f, sort_keys=True)
        os.replace(tmp, self.path)

    def start(self, digest):
        run_id = uuid.uuid4().hex
        self.runs[run_id] = {"digest": digest, "finished": False, "passed": None}
        self._save()
        return run_id

    def finish(self, run_id, passed):
        self.runs[run_id].update(finished=True, passed=bool(passed))
        self._save()

    def reusable(self, digest):
        """The result of a run for this digest, else None."""
        for run in self.runs.values():
            if run["digest"] == digest:
                return run["passed"] if run["finished"] else True
        return None
