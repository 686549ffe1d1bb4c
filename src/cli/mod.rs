//! The command line: clap definitions, one module per command, and the single place where a
//! result becomes output on stdout/stderr and an exit status.

use clap::{Parser, Subcommand};
use std::io::Write;

use crate::error::{exit, Error, Result};

pub mod cite;
pub mod term;

/// Citeable AI coding-agent evaluation ledgers, kept on Git refs.
#[derive(Debug, Parser)]
#[command(name = "git-ledger", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command that reads JSON inputs accepts.
#[derive(Debug, Clone, clap::Args)]
pub struct InputOpts {
    /// Refuse JSON inputs larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::json::DEFAULT_MAX_INPUT_BYTES, global = true)]
    pub max_input_bytes: u64,
}

/// Where a writing command works: file mode with `<DECLARATION> <LEDGER>`, else ref mode on a
/// ledger ref (`--ref`, default the only `refs/ledgers/*` ref) in the repository at `--repo`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LedgerTarget {
    /// The declaration (file mode).
    pub declaration: Option<std::path::PathBuf>,
    /// The ledger file, updated in place atomically (file mode).
    pub ledger: Option<std::path::PathBuf>,
    /// The ledger ref (ref mode): a full ref name or a declaration id; default the only
    /// ledger ref (refs/ledgers/*, or under git config ledger.refPrefix).
    #[arg(long = "ref", value_name = "REF")]
    pub ledger_ref: Option<String>,
    /// The repository (default: discovered from the current directory, as Git does).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<std::path::PathBuf>,
}

impl LedgerTarget {
    /// The target as the library's writing operations take it.
    pub fn to_target(&self) -> crate::write::Target {
        crate::write::Target {
            declaration: self.declaration.clone(),
            ledger: self.ledger.clone(),
            ledger_ref: self.ledger_ref.clone(),
            repo: self.repo.clone(),
        }
    }

    /// Finish the usage error for several ledger refs and no `--ref` with `cmd`'s line to type.
    pub fn name_a_ledger(&self, e: Error, cmd: &str) -> Error {
        name_a_ledger(e, None, |id| format!("git ledger {cmd} … --ref {id}"))
    }
}

mod audit;
mod completions;
mod diff;
mod dry_run;
mod forge;
mod hand;
mod heap;
mod hook;
mod import;
mod init;
mod log;
mod man;
mod pin;
pub mod reference;
mod report;
mod runtime;
mod show;
mod sync;
mod template;
mod verify;
mod witness;

#[derive(Debug, Subcommand)]
// The doc comments are the commands' help text, where `<id>` and `<STATE>` are placeholders.
#[allow(rustdoc::invalid_html_tags)]
pub enum Command {
    /// Build a declaration from a draft and Git objects at a revision.
    Pin(pin::PinArgs),
    /// Validate a declaration and recompute every pinned hash from local Git objects.
    Check(pin::CheckArgs),
    /// Print the ledger with every row DEFERRED.
    Template(template::TemplateArgs),
    /// Classify every attempt; portfolio per section; blocked or not.
    Report(report::ReportArgs),
    /// Write one hand-written row into a DEFERRED slot.
    Put(hand::PutArgs),
    /// Append a repair intervention to a filled row.
    Repair(hand::RepairArgs),
    /// The citeability gate: refuse the pass rate until the run envelope is complete.
    Cite(cite::CiteArgs),
    /// Fill DEFERRED rows from native records (scenario runs, Arena attempts).
    Import(import::ImportArgs),
    /// Record the runtime identity of a Python interpreter for import --runtime-identity.
    RuntimeIdentity(runtime::RuntimeIdentityArgs),
    /// Create the ledger ref (refs/ledgers/<id>; --forge: refs/heads/ledgers/<id>) with the root commit.
    Init(init::InitArgs),
    /// Print the ledger document (or one row, or the declaration) of a ledger commit.
    Show(show::ShowArgs),
    /// One line per ledger commit, newest first.
    Log(log::LogArgs),
    /// What changed between two ledger states, and whether B follows A.
    Diff(diff::DiffArgs),
    /// Re-check whole ledger chains from their roots.
    Verify(verify::VerifyArgs),
    /// Fetch, fast-forward or replay, and push ledgers with a remote.
    Sync(sync::SyncArgs),
    /// A reviewer's read-only check of every ledger a remote serves.
    Audit(audit::AuditArgs),
    /// Audit a remote and append a signed checkpoint of each ledger that passes to this
    /// (the witness's) repository.
    Witness(witness::WitnessArgs),
    /// The hook entry points: pre-receive, reference-transaction <STATE>, pre-commit.
    Hook(hook::HookArgs),
    /// Install the hooks in this repository (--server: only pre-receive).
    Hooks(hook::HooksArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Install the manual pages, so that `git ledger --help` shows them.
    InstallMan(man::InstallManArgs),
}

/// Where a command writes: results to `out`, messages to `err`.
pub struct Io<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

/// Run the binary: parse arguments, dispatch, print errors once, return the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp
                | clap::error::ErrorKind::DisplayVersion
                | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    {
                        exit::USAGE
                    } else {
                        exit::OK
                    }
                }
                _ => exit::USAGE,
            };
            if code == exit::OK {
                let _ = e.print();
            } else if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                // No command given: a usage error too, then the help of what was typed.
                let _ = write!(
                    std::io::stderr(),
                    "usage error: a command is required\n\n{}",
                    e.render()
                );
            } else {
                let _ = write!(std::io::stderr(), "{}", usage_error_text(&e));
            }
            return code;
        }
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    // A reader that goes away (`git ledger report | head -1`) is not an error: noticed here,
    // and the command's failed write then ends quietly with status 0. On a terminal each line
    // shows as it is written; into a pipe or file the output goes in blocks (the text report
    // of 100,000 rows was one `write` call per line).
    let lock = stdout.lock();
    let inner: Box<dyn Write> = if std::io::IsTerminal::is_terminal(&lock) {
        Box::new(lock)
    } else {
        Box::new(std::io::BufWriter::with_capacity(1 << 16, lock))
    };
    let mut out = term::PipeWatch::new(inner);
    let mut err = stderr.lock();
    let json = cli.command.wants_json();
    let result = {
        let mut io = Io {
            out: &mut out,
            err: &mut err,
        };
        run(cli.command, &mut io)
    };
    let code = match result {
        Ok(code) => code,
        Err(_) if out.broken() => exit::OK,
        Err(e) => report_error(&e, json, &mut out, &mut err),
    };
    match out.flush() {
        Err(_) if out.broken() => code,
        Err(e) => {
            let _ = writeln!(err, "error: cannot write output: {e}");
            exit::FAILED
        }
        Ok(()) => code,
    }
}

/// A usage error from clap as the reference prints it: `usage error:` in place of clap's
/// `error:`, then clap's suggestion (`tip: a similar argument exists …`) and usage lines as
/// clap words them (no colour: the same bytes on a terminal and in a pipe).
pub fn usage_error_text(e: &clap::Error) -> String {
    let text = e.render().to_string();
    match text.strip_prefix("error:") {
        Some(rest) => format!("usage error:{rest}"),
        None => format!("usage error: {text}"),
    }
}

/// Print an error once: on stderr, and under `--json` also as an object on stdout.
pub fn report_error(e: &Error, json: bool, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let hints = e.hints();
    if json {
        let _ = write_error_json(e, &hints, out);
    }
    let mut r = match e {
        Error::Refused(reasons) => {
            let all = reasons.reasons();
            let mut r = writeln!(
                err,
                "refused ({} reason{}):",
                all.len(),
                if all.len() == 1 { "" } else { "s" }
            );
            // Many of one kind: the first of each kind, then how many more (--json all).
            let (shown, omitted) = crate::error::shown_reasons(all);
            for reason in shown {
                r = r.and(writeln!(err, "  {reason}"));
            }
            if omitted > 0 {
                r = r.and(writeln!(err, "  {}", crate::error::more_reasons(omitted)));
            }
            r
        }
        Error::Failed { message, .. } => writeln!(err, "error: {message}"),
        Error::Contended(m) => writeln!(err, "error: {m}"),
        Error::Usage(m) => writeln!(err, "usage error: {m}"),
        e @ Error::SeveralLedgers(_) => writeln!(err, "usage error: {e}"),
    };
    for h in hints {
        r = r.and(writeln!(err, "hint: {h}"));
    }
    let _ = r;
    e.exit_code()
}

/// An error as the JSON object of `refusal.schema.json`, canonical (keys sorted, two-space
/// indent): `reasons`, every reason's text; for a refusal `details`, the same reasons as values
/// (place, row, field, rule, sentence); `hints`; `refused`. Every reason, however many (the
/// text form shows the first of each kind): written one at a time, so 300,000 reasons cost
/// the output, not a second copy of them in memory.
pub fn write_error_json(e: &Error, hints: &[String], out: &mut dyn Write) -> std::io::Result<()> {
    /// One member `"key": [items…]`, each item's canonical JSON indented under the key.
    fn array<I: Iterator<Item = Vec<u8>>>(
        out: &mut dyn Write,
        key: &str,
        items: I,
    ) -> std::io::Result<()> {
        write!(out, "  \"{key}\": [")?;
        let mut first = true;
        for item in items {
            out.write_all(if first { b"\n" } else { b",\n" })?;
            first = false;
            let text = item.strip_suffix(b"\n").unwrap_or(&item);
            for (i, line) in text.split(|b| *b == b'\n').enumerate() {
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                out.write_all(b"    ")?;
                out.write_all(line)?;
            }
        }
        out.write_all(if first { b"]" } else { b"\n  ]" })
    }
    let canonical = crate::json::canonical::<serde_json::Value>;
    out.write_all(b"{\n")?;
    if let Error::Refused(r) = e {
        let details = r
            .reasons()
            .iter()
            .map(|r| canonical(&serde_json::to_value(r).expect("a reason serializes")));
        array(out, "details", details)?;
        out.write_all(b",\n")?;
    }
    if !hints.is_empty() {
        array(
            out,
            "hints",
            hints.iter().map(|h| canonical(&h.as_str().into())),
        )?;
        out.write_all(b",\n")?;
    }
    match e {
        Error::Refused(r) => array(
            out,
            "reasons",
            r.reasons().iter().map(|r| canonical(&r.to_string().into())),
        )?,
        e => array(
            out,
            "reasons",
            e.message().into_iter().map(|m| canonical(&m.into())),
        )?,
    }
    writeln!(
        out,
        ",\n  \"refused\": {}\n}}",
        matches!(e, Error::Refused(_))
    )
}

impl Command {
    /// Whether the command was asked for JSON output (refusals then go to stdout as JSON too).
    pub fn wants_json(&self) -> bool {
        match self {
            Command::Template(_) | Command::Pin(_) => false,
            Command::Check(a) => a.json,
            Command::Report(a) => a.format() == report::Format::Json,
            Command::Cite(args) => args.json,
            Command::Import(a) => a.json,
            Command::Put(a) => a.json,
            Command::Repair(a) => a.json,
            Command::Init(_) | Command::Show(_) | Command::RuntimeIdentity(_) => false,
            Command::Log(a) => a.json,
            Command::Diff(a) => a.format() == diff::DiffFormat::Json,
            Command::Verify(a) => a.json,
            Command::Audit(a) => a.json,
            Command::Witness(_) => false,
            Command::Completions(_) | Command::InstallMan(_) => false,
            Command::Sync(_) | Command::Hook(_) | Command::Hooks(_) => false,
        }
    }
}

/// Dispatch one command. Returns the exit status on success (0, or 2 for a verdict such as
/// `cite`'s "not citeable" that is an answer rather than an error).
pub fn run(command: Command, io: &mut Io) -> Result<i32> {
    match command {
        Command::Pin(a) => pin::run_pin(a, io),
        Command::Check(a) => pin::run_check(a, io),
        Command::Template(a) => template::run(a, io),
        Command::Report(a) => report::run(a, io),
        Command::Put(a) => hand::put(a, io),
        Command::Repair(a) => hand::repair(a, io),
        Command::Cite(args) => cite::run(args, io),
        Command::Import(a) => import::run(a, io),
        Command::RuntimeIdentity(a) => runtime::run(a, io),
        Command::Init(a) => init::run(a, io),
        Command::Show(a) => show::run(a, io),
        Command::Log(a) => log::run(a, io),
        Command::Diff(a) => diff::run(a, io),
        Command::Verify(a) => verify::run(a, io),
        Command::Sync(a) => sync::run(a, io),
        Command::Audit(a) => audit::run(a, io),
        Command::Witness(a) => witness::run(a, io),
        Command::Hook(a) => hook::run_hook(a, io),
        Command::Hooks(a) => hook::run_hooks(a, io),
        Command::Completions(a) => completions::run(a, io),
        Command::InstallMan(a) => man::install(a, io),
    }
}

/// Print what a written change did: one line per row with its schedule id, native outcome,
/// portfolio outcome and gaps (each row as [`crate::write::Applied`] classified it).
pub fn print_change(rows: &[crate::write::DryRow], io: &mut Io) -> Result<()> {
    for row in rows {
        let status = (row.native_status.as_ref())
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        write!(
            io.out,
            "{}  {}{}  {}",
            row.schedule_id,
            row.native_outcome,
            status,
            row.label.to_lowercase()
        )?;
        if !row.gaps.is_empty() {
            write!(io.out, "  [{}]", row.gaps.join("; "))?;
        } else if !row.deviations.is_empty() {
            write!(io.out, "  [{}]", row.deviations.join("; "))?;
        }
        if row.repair {
            write!(io.out, "  + repair")?;
        }
        writeln!(io.out)?;
    }
    Ok(())
}

/// Finish the usage error for several ledger refs and no `--ref` with the line to type:
/// `example(id)` for the first ledger's declaration id; `flag` replaces "with --ref" for the
/// commands that take the ref as an argument.
pub fn name_a_ledger(e: Error, flag: Option<&str>, example: impl Fn(&str) -> String) -> Error {
    match e {
        Error::SeveralLedgers(refs) => {
            let m = crate::error::several_ledgers(&refs, flag.unwrap_or("with --ref:"));
            let first = (refs.first())
                .map(|r| r.rsplit('/').next().unwrap_or(r)) // a declaration id has no /
                .unwrap_or("<ID>");
            Error::Usage(format!("{m}\nfor example: `{}`", example(first)))
        }
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use crate::error::{Error, Reasons};
    use crate::refusal::Reason;

    /// The object as a JSON value is built and printed canonically (what the writer streams).
    fn built(e: &Error) -> Vec<u8> {
        let reasons: Vec<String> = match e {
            Error::Refused(r) => r.reasons().iter().map(ToString::to_string).collect(),
            e => e.message().into_iter().collect(),
        };
        let mut obj =
            serde_json::json!({"reasons": reasons, "refused": matches!(e, Error::Refused(_))});
        if let Error::Refused(r) = e {
            obj["details"] = serde_json::to_value(r.reasons()).unwrap();
        }
        if !e.hints().is_empty() {
            obj["hints"] = e.hints().into();
        }
        crate::json::canonical(&obj)
    }

    fn streamed(e: &Error) -> Vec<u8> {
        let mut out = Vec::new();
        super::write_error_json(e, &e.hints(), &mut out).unwrap();
        out
    }

    #[test]
    fn the_streamed_error_json_is_the_canonical_object_with_every_reason() {
        let mut r = Reasons::new();
        for i in 0..1_500 {
            r.push(
                Reason::new(format!("line {i}: \"not\" an object\n"))
                    .at("runs.jsonl")
                    .row("t/01")
                    .field("x"),
            );
        }
        r.hint("a hint");
        let e = Error::Refused(r);
        let out = streamed(&e);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            String::from_utf8(built(&e)).unwrap()
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["reasons"].as_array().unwrap().len(), 1_500);
        assert_eq!(v["details"].as_array().unwrap().len(), 1_500);
        for e in [
            Error::failed_with_hint("no such file", "give another"),
            Error::Usage("bad".into()),
            Error::refused("one"),
        ] {
            assert_eq!(streamed(&e), built(&e), "{e}");
        }
    }
}
