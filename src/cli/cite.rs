//! `git-ledger cite`: the citeability gate.

use std::io::BufReader;
use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::cite::{self, Card, Options};
use crate::error::{Error, Result};

/// The citeability gate: print the three metrics and the one shippable sentence, or refuse.
///
/// Reads RUNS (JSON Lines, one attempt per line, streamed) and, with --card, the dataset card;
/// opens no socket. Exits 0 when the runs are citeable, 2 when they are not: then it prints the
/// list of what is missing instead of any rate (on standard output; under --json as a JSON object
/// on standard output and as text on standard error).
#[derive(Debug, clap::Args)]
pub struct CiteArgs {
    /// The runs: JSON Lines, one attempt per line ("-" reads standard input).
    #[arg(value_name = "RUNS.jsonl")]
    pub runs: PathBuf,

    /// The dataset card (JSON) the runs must match.
    #[arg(long, value_name = "CARD.json")]
    pub card: Option<PathBuf>,

    /// Print the verdict as JSON on standard output.
    #[arg(long)]
    pub json: bool,

    /// List every row of a refusal in the text (by default at most a few rows of each field's
    /// problem, after one line per field counting them; --json always lists them all).
    #[arg(long, short)]
    pub verbose: bool,

    #[command(flatten)]
    pub input: InputOpts,
}

/// Run the gate; the verdict's exit status is returned (0 citeable, 2 not).
pub fn run(args: CiteArgs, io: &mut Io) -> Result<i32> {
    let max = args.input.max_input_bytes;
    let card = match &args.card {
        Some(path) => Some(Card::read(path, max)?),
        None => None,
    };
    let options = Options {
        max_line_bytes: max,
    };
    let verdict = if args.runs.as_os_str() == "-" {
        cite::cite(std::io::stdin().lock(), card.as_ref(), options)?
    } else {
        let path = &args.runs;
        let file = std::fs::File::open(path)
            .map_err(|e| Error::failed(format!("{}: cannot open: {e}", path.display())))?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(Error::failed(format!(
                "{}: is a directory, not a file",
                path.display()
            )));
        }
        cite::cite(BufReader::new(file), card.as_ref(), options)
            .map_err(|e| e.context(path.display()))?
    };
    if args.json {
        write(io.out, &verdict.to_json())?;
        if let cite::Verdict::Refused(_) = verdict {
            write(io.err, verdict.to_text_with(args.verbose).as_bytes())?;
        }
    } else {
        write(io.out, verdict.to_text_with(args.verbose).as_bytes())?;
    }
    Ok(verdict.exit_code())
}

/// Write everything; a closed pipe (`git ledger cite runs.jsonl | head`) is not an error.
fn write(w: &mut dyn std::io::Write, bytes: &[u8]) -> Result<()> {
    match w.write_all(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::failed(format!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}
