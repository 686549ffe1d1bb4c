//! `--dry-run` of `import`, `put` and `repair`: what the write would be (each row's schedule id,
//! native and portfolio outcome, the gaps that keep a PASS from a verified delivery, the commit
//! message), printed as text or JSON; the checks are the real command's ([`crate::store::rehearse`])
//! and the value printed is [`crate::write::DryRun`].

use super::Io;
use crate::error::Result;
use crate::write::DryRun;

/// Print the dry run: JSON, or (text) the rows unless `rows_shown` (the command printed them its
/// own way already), then what would be written.
pub fn print(dry: &DryRun, json: bool, rows_shown: bool, io: &mut Io) -> Result<()> {
    if json {
        io.out.write_all(&crate::json::canonical(dry))?;
        return Ok(());
    }
    if !rows_shown {
        super::print_change(&dry.rows, io)?;
        for n in &dry.notes {
            writeln!(io.out, "note: {n}")?;
        }
    }
    match (&dry.message, dry.rows.is_empty()) {
        (_, true) => writeln!(io.out, "dry run: nothing to write on {}", dry.ledger)?,
        (Some(m), false) => {
            writeln!(
                io.out,
                "dry run: nothing written; admitted on {}; after the commit {}/{} rows would be filled; its message:",
                dry.ledger, dry.filled, dry.scheduled
            )?;
            for line in m.lines() {
                if line.is_empty() {
                    writeln!(io.out)?;
                } else {
                    writeln!(io.out, "    {line}")?;
                }
            }
        }
        (None, false) => writeln!(
            io.out,
            "dry run: nothing written; admitted on {}; after the write {}/{} rows would be filled",
            dry.ledger, dry.filled, dry.scheduled
        )?,
    }
    Ok(())
}
