//! The runtime identity, measured: a Python interpreter asked for its version, `psutil`'s, the
//! versions of the distributions a declaration's `runtime_requirements` names (and its native
//! provider), and its freeze (`pip freeze --exclude-editable`, the `name==version` lines), in
//! the shape `import --runtime-identity` reads (`docs/schemas/runtime-identity.schema.json`).
//!
//! What the record says is what the interpreter reports, never the declaration's values: the
//! declaration only says which distributions to ask for.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Map, Value};

use crate::declaration::Declaration;
use crate::error::{Error, Reasons, Result};

/// What to ask the interpreter for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The distributions whose versions go under `packages`.
    pub packages: BTreeSet<String>,
    /// `native_provider`: a distribution name (its installed version is asked for) or, with a
    /// space, a provider that is not a Python distribution, as given (`"autocode-native 2.4.1"`).
    pub native_provider: Option<String>,
}

impl Request {
    /// The distributions `decl`'s `runtime_requirements` name: its `packages`, and the first
    /// word of its `native_provider` (`"inspect_ai 0.3.285"` → `inspect_ai`).
    pub fn of(decl: &Declaration) -> Request {
        let req = &decl.runtime_requirements;
        let packages = req
            .get("packages")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let native_provider = req
            .get("native_provider")
            .and_then(Value::as_str)
            .and_then(|s| s.split_whitespace().next())
            .map(str::to_owned);
        Request {
            packages,
            native_provider,
        }
    }
}

/// The script the interpreter runs: a JSON object on standard output.
const PROBE: &str = r#"
import json, platform, subprocess, sys
from importlib import metadata
names = json.loads(sys.argv[1])
out = {"python": platform.python_version(), "executable": sys.executable, "versions": {}}
for n in names:
    try:
        out["versions"][n] = metadata.version(n)
    except metadata.PackageNotFoundError:
        out["versions"][n] = None
try:
    import psutil
    out["psutil"] = psutil.__version__
except ImportError:
    out["psutil"] = None
r = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
                   capture_output=True, text=True)
out["freeze"] = r.stdout.split() if r.returncode == 0 else None
out["freeze_error"] = None if r.returncode == 0 else (r.stderr.strip().splitlines() or [""])[-1]
print(json.dumps(out))
"#;

/// The runtime identity of `python`, measured ([`measure`]) and checked as `import
/// --runtime-identity` reads it (what this writes, import reads: the same check): the identity
/// and its canonical bytes.
pub fn identity(python: &Path, request: &Request) -> Result<(Value, Vec<u8>)> {
    let identity = measure(python, request)?;
    let bytes = crate::json::canonical(&identity);
    super::rows::parse_runtime_identity(&bytes, "the runtime identity", u64::MAX)?;
    Ok((identity, bytes))
}

/// The runtime identity of `python` (a path or a name on `PATH`), for `request`; refused (exit
/// 2) when the interpreter lacks `psutil`, a named distribution or a freeze; exit 1 when it
/// cannot be run.
pub fn measure(python: &Path, request: &Request) -> Result<Value> {
    let mut names: BTreeSet<&str> = request.packages.iter().map(String::as_str).collect();
    let native = request.native_provider.as_deref();
    if let Some(n) = native.filter(|n| !n.contains(' ')) {
        names.insert(n);
    }
    let names: Vec<&str> = names.into_iter().collect();
    let out = Command::new(python)
        .args(["-c", PROBE, &serde_json::to_string(&names).expect("strings")])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Error::failed_with_hint(
                format!("cannot run {}: {e}", python.display()),
                "name the interpreter the harness runs with --python <PATH> (e.g. .venv/bin/python)",
            )
        })?;
    if !out.status.success() {
        return Err(Error::failed(format!(
            "{} failed while reporting its runtime: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let what = format!("the runtime report of {}", python.display());
    let v = crate::json::parse_document(&out.stdout, &what, 16 << 20)?;
    let shown = v["executable"]
        .as_str()
        .unwrap_or("the interpreter")
        .to_owned();
    let mut r = Reasons::new();
    let version = |name: &str| v["versions"][name].as_str().map(str::to_owned);
    let mut packages = Map::new();
    for name in &request.packages {
        match version(name) {
            Some(ver) => {
                packages.insert(name.clone(), ver.into());
            }
            None => r.push(
                crate::refusal::Reason::new(format!("package {name} is not installed")).at(&shown),
            ),
        }
    }
    let native_provider = match native {
        None => {
            r.push("native_provider: no declaration names one; pass --native-provider <DIST>, or --native-provider '<NAME> <VERSION>' for a provider that is not a Python distribution");
            None
        }
        Some(n) if n.contains(' ') => Some(n.to_owned()),
        Some(n) => match version(n) {
            Some(ver) => Some(format!("{n} {ver}")),
            None => {
                r.push(
                    crate::refusal::Reason::new(format!(
                        "the native provider {n} is not an installed distribution; a provider that is not a Python distribution is given as --native-provider '<NAME> <VERSION>'"
                    ))
                    .at(&shown)
                );
                None
            }
        },
    };
    let psutil = v["psutil"].as_str();
    if psutil.is_none() {
        r.push(
            crate::refusal::Reason::new(
                "psutil is not installed (the runtime identity records its version)",
            )
            .at(&shown),
        );
    }
    let freeze: Option<Vec<String>> = v["freeze"].as_array().map(|a| {
        let mut d: Vec<String> = a
            .iter()
            .filter_map(Value::as_str)
            .filter(|d| d.contains("=="))
            .map(str::to_owned)
            .collect();
        d.sort();
        d
    });
    if freeze.is_none() {
        r.push(
            crate::refusal::Reason::new(format!(
                "`python -m pip freeze` failed ({}): the freeze (dependencies) cannot be recorded",
                v["freeze_error"].as_str().unwrap_or_default()
            ))
            .at(&shown),
        );
    }
    r.into_result()?;
    Ok(json!({
        "python": v["python"],
        "psutil": psutil,
        "native_provider": native_provider,
        "packages": packages,
        "dependencies": freeze,
    }))
}

/// Where a measured identity differs from what `decl` requires, one sentence per key (the rows
/// imported with it will say *runtime differs*).
pub fn differences(decl: &Declaration, identity: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (key, want) in &decl.runtime_requirements {
        match (want, &identity[key]) {
            (Value::Object(wp), Value::Object(gp)) => {
                for (name, w) in wp {
                    let g = gp.get(name).unwrap_or(&Value::Null);
                    if !crate::json::value_eq(w, g) {
                        out.push(format!("packages.{name}: declared {w}, measured {g}"));
                    }
                }
            }
            (w, g) if !crate::json::value_eq(w, g) => {
                out.push(format!("{key}: declared {w}, measured {g}"))
            }
            _ => {}
        }
    }
    out
}
