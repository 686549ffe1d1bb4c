//! The Harbor import benchmark: one job directory of 1,000 trials (500 tasks × 2 attempts), each
//! trial a copy of a real Harbor 0.25 trial of the tests' data (`tests/data/harbor-jobs/j1`: a
//! passing `hello-file` trial for even tasks, a failing `wrong-answer` trial for odd ones) with
//! its task name, trial name and id replaced; imported into a file-mode ledger by the release
//! binary, beside Harbor's own reading of the same directory (its `JobResult` model on the
//! job's `result.json` and its `TrialResult` model on every trial's `result.json`) when a
//! Harbor venv is there (`GIT_LEDGER_HARBOR_VENV`, or `target/harbor-venv`, which
//! `.ci/harbor-venv.sh` builds).

#[path = "harbor_job.rs"]
mod harbor_job;

// What `harbor_job` writes its campaign with (its includer provides it).
use crate::bench_campaign;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub const TASKS: usize = 500;
pub const ATTEMPTS: u64 = 2;

/// The benchmark's job: [`TASKS`] × [`ATTEMPTS`] trials (see `harbor_job.rs`).
pub fn generate(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    harbor_job::generate(dir, TASKS, ATTEMPTS)
}

/// The Harbor venv's python, if there is one (`GIT_LEDGER_HARBOR_VENV`, else `harbor-venv`:
/// see [`super::venv::python`]).
pub fn venv_python() -> Option<PathBuf> {
    super::venv::python("GIT_LEDGER_HARBOR_VENV", "harbor-venv")
}

/// The best of `runs` imports of the job into a fresh copy of the template ledger: (wall, CPU).
pub fn import(
    bin: &Path,
    dir: &Path,
    job: &Path,
    decl: &Path,
    template: &Path,
    runs: usize,
    trials: usize,
) -> (Duration, Duration) {
    (0..runs)
        .map(|_| {
            let ledger = dir.join("ledger.json");
            std::fs::copy(template, &ledger).unwrap();
            let mut c = Command::new(bin);
            c.current_dir(dir)
                .arg("import")
                .arg(decl)
                .arg(&ledger)
                .arg("--harbor")
                .arg(job)
                .arg("--json");
            let (wall, cpu, stdout) = crate::inspect_bench::timed(c);
            let v: Value = serde_json::from_slice(&stdout).unwrap();
            assert_eq!(v["imported"].as_array().unwrap().len(), trials, "{v}");
            (wall, cpu)
        })
        .min_by_key(|(_, cpu)| *cpu)
        .unwrap()
}

/// The best of `runs` CPU times of `examples/harbor_floor` (`floor`, its path) over `dir`: only
/// the work no import of the job into the template ledger can skip (every file read and parsed
/// for syntax alone, the ledger's bytes written and `fsync`ed), whole process, as the import's.
pub fn floor(floor: &Path, dir: &Path, template: &Path, runs: usize) -> Duration {
    // The ledger as an import finds it.
    std::fs::copy(template, dir.join("ledger.json")).unwrap();
    (0..runs)
        .map(|_| {
            let mut c = Command::new(floor);
            c.arg(dir);
            crate::inspect_bench::timed(c).1
        })
        .min()
        .unwrap()
}

/// Harbor's own reading of the job (best of `runs`): `JobResult` on the job's result.json and
/// `TrialResult` on every trial's; the reading's wall and CPU time, and the whole process's CPU
/// time (Python's start and Harbor's imports included).
pub fn harbor_read(python: &Path, job: &Path, runs: usize) -> (Duration, Duration, Duration) {
    let script = "import sys, time\nfrom pathlib import Path\nfrom harbor.models.job.result import JobResult\nfrom harbor.models.trial.result import TrialResult\nt, c = time.perf_counter(), time.process_time()\njob = Path(sys.argv[1])\nJobResult.model_validate_json((job / 'result.json').read_bytes())\ntrials = [TrialResult.model_validate_json((d / 'result.json').read_bytes()) for d in sorted(job.iterdir()) if (d / 'result.json').is_file()]\nprint(time.perf_counter() - t, time.process_time() - c)\nassert len(trials) == int(sys.argv[2]), len(trials)\n";
    (0..runs)
        .map(|_| {
            let mut c = Command::new(python);
            c.arg("-c")
                .arg(script)
                .arg(job)
                .arg((TASKS * ATTEMPTS as usize).to_string());
            let (_, whole_cpu, stdout) = crate::inspect_bench::timed(c);
            let text = String::from_utf8_lossy(&stdout);
            let mut it = text.split_whitespace().map(|x| x.parse::<f64>().unwrap());
            let (wall, cpu) = (it.next().unwrap(), it.next().unwrap());
            (
                Duration::from_secs_f64(wall),
                Duration::from_secs_f64(cpu),
                whole_cpu,
            )
        })
        .min_by_key(|(_, c, _)| *c)
        .unwrap()
}
