//! `git-ledger runtime-identity`: write the runtime identity of the interpreter a harness runs
//! with, in the shape `import --runtime-identity` reads.

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::import::runtime::{self, Request};

/// Record the runtime identity of a Python interpreter (its version, psutil's, the declared
/// packages' and native provider's installed versions, its freeze) for `import
/// --runtime-identity`. With a declaration, the distributions its runtime_requirements name
/// are asked for, and each difference from what it declares is named on standard error.
#[derive(Debug, clap::Args)]
pub struct RuntimeIdentityArgs {
    /// The pinned declaration whose runtime_requirements name the packages and the native
    /// provider to record.
    pub declaration: Option<PathBuf>,
    /// The interpreter the harness runs with.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: PathBuf,
    /// The native provider: a Python distribution (its installed version is recorded) or, with
    /// a space, '<NAME> <VERSION>' for a provider that is not one (default: the declaration's).
    #[arg(long, value_name = "DIST")]
    pub native_provider: Option<String>,
    /// Also record this distribution's version under packages (repeatable).
    #[arg(long = "package", value_name = "DIST")]
    pub packages: Vec<String>,
    /// Write the runtime identity to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run(args: RuntimeIdentityArgs, io: &mut Io) -> Result<i32> {
    let decl = match &args.declaration {
        Some(p) => Some(Declaration::read(p, args.input.max_input_bytes)?),
        None => None,
    };
    let mut request = decl.as_ref().map(Request::of).unwrap_or_default();
    request.packages.extend(args.packages.iter().cloned());
    if let Some(n) = &args.native_provider {
        request.native_provider = Some(n.clone());
    }
    if request.native_provider.is_none() {
        return Err(Error::Usage(
            "runtime-identity needs the native provider: give the declaration, or --native-provider <DIST> (or '<NAME> <VERSION>')".into(),
        ));
    }
    let (identity, bytes) = runtime::identity(&args.python, &request)?;
    if let Some(d) = &decl {
        for diff in runtime::differences(d, &identity) {
            writeln!(
                io.err,
                "note: {diff}: rows imported with this identity say runtime differs"
            )?;
        }
    }
    match &args.output {
        Some(path) => {
            crate::store::file::write_atomically(path, &bytes)?;
            writeln!(
                io.err,
                "wrote the runtime identity of Python {} ({} dependencies) to {}",
                identity["python"].as_str().unwrap_or_default(),
                identity["dependencies"].as_array().map_or(0, Vec::len),
                path.display()
            )?;
        }
        None => io.out.write_all(&bytes)?,
    }
    Ok(0)
}
