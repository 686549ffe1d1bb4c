"""Read a Harbor job directory through Harbor's own models (the tests' independent reading of
what git-ledger imports): every trial's result.json as a `TrialResult`, its lock.json as a
`TrialLock`, the job's config.json as a `JobConfig`; prints one JSON object, trial name ->
what a row is built from, computed by Harbor's code (the error policy, reward_valid) and by
Python's datetime (durations)."""

import hashlib
import json
import sys
from pathlib import Path

from harbor.models.job.config import JobConfig
from harbor.models.job.lock import TrialLock
from harbor.models.trial.result import TrialResult


def seconds(timing):
    if timing is None or timing.started_at is None or timing.finished_at is None:
        return None
    return (timing.finished_at - timing.started_at).total_seconds()


def main(job_dir):
    job = Path(job_dir)
    config = JobConfig.model_validate_json((job / "config.json").read_text())
    out = {"n_attempts": config.n_attempts, "trials": {}}
    for trial in sorted(p for p in job.iterdir() if p.is_dir()):
        path = trial / "result.json"
        if not path.is_file():
            continue
        raw = path.read_bytes()
        r = TrialResult.model_validate_json(raw)
        lock = TrialLock.model_validate_json((trial / "lock.json").read_text())
        exc = r.exception_info
        elapsed = None
        if r.started_at is not None and r.finished_at is not None:
            elapsed = (r.finished_at - r.started_at).total_seconds()
        out["trials"][r.trial_name] = {
            "task_name": r.task_name,
            "job_id": str(r.config.job_id),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "digest": lock.task.digest,
            "agent": r.config.agent.name,
            "rewards": r.verifier_result.rewards if r.verifier_result else None,
            "exception_type": exc.exception_type if exc else None,
            "exception_message": exc.exception_message if exc else None,
            "policy_reward_valid": exc.policy.reward_valid if exc else None,
            "elapsed": elapsed,
            "agent_seconds": seconds(r.agent_execution),
            "verifier_seconds": seconds(r.verifier),
            "tokens": list(r.compute_token_cost_totals()),
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
