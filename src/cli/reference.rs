//! The command reference in Markdown (`docs/reference/cli.md`), generated from the same clap
//! definitions as `--help` and the manual pages: every command and subcommand, its usage, its
//! arguments and options with their defaults and possible values. A test compares the committed
//! file with [`markdown`]; `REFERENCE_BLESS=1 cargo test --lib cli::reference` rewrites it.

use clap::{Arg, ArgAction, Command};
use std::fmt::Write as _;

/// Where the generated reference is committed, relative to the repository root.
pub const PATH: &str = "docs/reference/cli.md";

/// The whole reference, as committed in [`PATH`].
pub fn markdown() -> String {
    let cmd = super::man::command();
    let mut out = String::new();
    let _ = writeln!(out, "# Command reference\n");
    let _ = writeln!(
        out,
        "<!-- Generated from the clap definitions in src/cli/ (the source of `--help` and of the manual pages). Do not edit: run `REFERENCE_BLESS=1 cargo test --lib cli::reference` after changing a command. -->\n"
    );
    let _ = writeln!(
        out,
        "{}\n",
        text(&cmd.get_about().map(|s| s.to_string()).unwrap_or_default())
    );
    // The manual's description, without its paragraph about the manual pages themselves.
    let description = super::man::DESCRIPTION
        .split("\n\n")
        .next()
        .unwrap_or_default();
    let _ = writeln!(out, "{}\n", text(description));
    let _ = writeln!(
        out,
        "On the PATH, Git runs the binary as `git ledger <command>`; `git-ledger <command>` is the same. `git ledger --help` shows the manual page `git-ledger(1)` once `git ledger install-man` has installed the pages; `-h` prints the short help.\n"
    );
    let _ = writeln!(
        out,
        "Exit codes: [exit-codes.md](exit-codes.md). Configuration and environment: [config.md](config.md).\n"
    );
    let _ = writeln!(out, "Examples:\n");
    for (command, what) in super::man::EXAMPLES {
        let _ = writeln!(out, "- `{command}`: {}", text(what));
    }
    let _ = writeln!(out, "\nCommands:\n");
    let mut index = Vec::new();
    collect(&cmd, &mut Vec::new(), &mut index);
    for (path, sub) in &index {
        let _ = writeln!(
            out,
            "- [`{}`](#{}): {}",
            path.join(" "),
            anchor(&path.join(" ")),
            text(&first_line(sub))
        );
    }
    let _ = writeln!(out);
    section(&mut out, &["git-ledger".to_owned()], &cmd);
    for (path, sub) in &index {
        section(&mut out, path, sub);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// Every visible subcommand, depth first, with its path from the top (`["git-ledger", "hooks",
/// "install"]`).
fn collect(cmd: &Command, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, Command)>) {
    if path.is_empty() {
        path.push("git-ledger".to_owned());
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        path.push(sub.get_name().to_owned());
        out.push((path.clone(), sub.clone()));
        collect(sub, path, out);
        path.pop();
    }
}

fn first_line(cmd: &Command) -> String {
    cmd.get_about()
        .map(|s| s.to_string())
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

fn section(out: &mut String, path: &[String], cmd: &Command) {
    let title = path.join(" ");
    let level = if path.len() <= 2 { "##" } else { "###" };
    let _ = writeln!(out, "{level} `{title}`\n");
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|s| s.to_string())
        .unwrap_or_default();
    if !about.is_empty() && path.len() > 1 {
        let _ = writeln!(out, "{}\n", text(&about));
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ").trim_end();
    let _ = writeln!(out, "```text\n{usage}\n```\n");
    let subs: Vec<&Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    if !subs.is_empty() && path.len() > 1 {
        let _ = writeln!(out, "Subcommands:\n");
        for s in subs {
            let full = format!("{title} {}", s.get_name());
            let _ = writeln!(
                out,
                "- [`{}`](#{}): {}",
                s.get_name(),
                anchor(&full),
                text(&first_line(s))
            );
        }
        let _ = writeln!(out);
    }
    let args: Vec<&Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set()).collect();
    let positionals: Vec<&&Arg> = args.iter().filter(|a| a.is_positional()).collect();
    let options: Vec<&&Arg> = args.iter().filter(|a| !a.is_positional()).collect();
    if !positionals.is_empty() {
        let _ = writeln!(out, "Arguments:\n");
        for a in positionals {
            item(out, a);
        }
        let _ = writeln!(out);
    }
    if !options.is_empty() {
        let _ = writeln!(out, "Options:\n");
        for a in options {
            item(out, a);
        }
        let _ = writeln!(out);
    }
}

/// One argument or option as a list item: its spelling, help, default and possible values.
fn item(out: &mut String, a: &Arg) {
    let mut spelling = Vec::new();
    if let Some(s) = a.get_short() {
        spelling.push(format!("-{s}"));
    }
    if let Some(l) = a.get_long() {
        spelling.push(format!("--{l}"));
    }
    let takes_value = matches!(a.get_action(), ArgAction::Set | ArgAction::Append);
    let names: Vec<String> = a
        .get_value_names()
        .map(|v| v.iter().map(|n| n.to_string()).collect())
        .unwrap_or_else(|| vec![a.get_id().as_str().to_uppercase()]);
    let values = names
        .iter()
        .map(|n| format!("<{n}>"))
        .collect::<Vec<_>>()
        .join(" ");
    let shown = if a.is_positional() {
        let dots = if matches!(a.get_action(), ArgAction::Append) {
            "..."
        } else {
            ""
        };
        format!("{values}{dots}")
    } else if takes_value {
        format!("{} {values}", spelling.join(", "))
    } else {
        spelling.join(", ")
    };
    let help = a
        .get_long_help()
        .or(a.get_help())
        .map(|s| s.to_string())
        .unwrap_or_default();
    let mut line = format!("- `{shown}`");
    if !help.is_empty() {
        let help = text(help.trim_end()).replace('\n', "\n  ");
        let _ = write!(line, ": {help}");
        if !help.ends_with('.') {
            line.push('.');
        }
    }
    if a.is_required_set() && !a.is_positional() {
        line.push_str(" Required.");
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && takes_value {
        let _ = write!(line, " Default: `{}`.", defaults.join(","));
    }
    let possible: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| match p.get_help() {
            Some(h) => format!("`{}` ({})", p.get_name(), text(&h.to_string())),
            None => format!("`{}`", p.get_name()),
        })
        .collect();
    if !possible.is_empty() && takes_value {
        let _ = write!(line, " Possible values: {}.", possible.join(", "));
    }
    if a.is_global_set() {
        line.push_str(" Global: also accepted after a subcommand.");
    }
    let _ = writeln!(out, "{line}");
}

/// Escape Markdown outside code spans: `<…>` would be read as HTML, `*` as emphasis.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, part) in s.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
            continue;
        }
        for ch in part.chars() {
            match ch {
                '<' | '>' | '*' | '_' | '[' | ']' => {
                    out.push('\\');
                    out.push(ch);
                }
                _ => out.push(ch),
            }
        }
    }
    out
}

/// The anchor GitHub gives a heading: lowercase, spaces to `-`, punctuation other than `-` and
/// `_` dropped.
fn anchor(title: &str) -> String {
    title
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed docs/reference/cli.md is what the CLI generates. After changing a command's
    /// help, run `REFERENCE_BLESS=1 cargo test --lib cli::reference` and commit the file.
    #[test]
    fn committed_reference_is_what_the_cli_generates() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PATH);
        let want = markdown();
        if std::env::var_os("REFERENCE_BLESS").is_some_and(|v| !v.is_empty()) {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            let diff = similar::TextDiff::from_lines(&have, &want)
                .unified_diff()
                .header(PATH, "generated")
                .to_string();
            panic!(
                "{PATH} differs from what the CLI generates; run `REFERENCE_BLESS=1 cargo test --lib cli::reference` and commit it:\n{diff}"
            );
        }
    }

    #[test]
    fn every_visible_command_and_option_is_in_the_reference() {
        let md = markdown();
        let cmd = super::super::man::command();
        let mut all = Vec::new();
        collect(&cmd, &mut Vec::new(), &mut all);
        for (path, sub) in &all {
            assert!(md.contains(&format!("`{}`\n", path.join(" "))), "{path:?}");
            for a in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(l) = a.get_long() {
                    assert!(md.contains(&format!("--{l}")), "{path:?} --{l}");
                }
            }
        }
        assert!(md.contains("`git-ledger report`"));
        assert!(md.contains("Possible values: `text`"));
        assert!(!md.contains("`git-ledger help`"));
    }

    fn page(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/reference")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The reference pages moved into the repository name what the code has, in its order: the
    /// cite gate's reason codes (in the order `reason` picks the first), run and card fields,
    /// metrics and stop reasons; the declaration's acceptance rules; the ledger's row fields and
    /// portfolio outcomes with their labels.
    #[test]
    fn the_rule_pages_name_what_the_code_has() {
        let in_order = |page_name: &str, text: &str, items: &[String]| {
            let mut at = 0;
            for item in items {
                let found = text[at..].find(item.as_str()).unwrap_or_else(|| {
                    panic!("docs/reference/{page_name}: no {item:?} (after byte {at}, in order)")
                });
                at += found + item.len();
            }
        };
        let cite = page("cite.md");
        let row = |s: &str| format!("| `{s}` |");
        in_order("cite.md", &cite, &crate::cite::RUN_FIELDS.map(row));
        in_order("cite.md", &cite, &crate::cite::CARD_FIELDS.map(row));
        let codes: Vec<String> = crate::cite::Reason::ALL
            .iter()
            .map(|r| row(r.code()))
            .collect();
        in_order("cite.md", &cite, &codes);
        in_order(
            "cite.md",
            &cite,
            &[
                "first_complete_pass_rate",
                "retry_rate",
                "truncation_rate",
                "patch_apply_fail_rate",
            ]
            .map(row),
        );
        assert!(cite.contains(crate::cite::EMPTY_PATCH_SHA256));
        // A JSON document refused before any line is judged, in the words the code prints, and
        // the cap on lines that are not objects.
        let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let ledger = b"{\n  \"format\": \"campaign-ledger/1\",\n  \"rows\": []\n}\n";
        let what = crate::cite::a_json_document(ledger).unwrap();
        let e = crate::cite::cite(
            &ledger[..],
            None,
            crate::cite::Options {
                max_line_bytes: 1 << 20,
            },
        )
        .unwrap_err();
        let sentence = e.refusal_reasons()[0].to_string();
        let after = &sentence[sentence.find(&what).unwrap() + what.len()..];
        for words in [
            what.as_str(),
            after.trim_start_matches(", "),
            "more lines that are not a JSON object",
        ] {
            assert!(flat(&cite).contains(&flat(words)), "cite.md: no {words:?}");
        }
        assert!(
            cite.contains("one of `pass`, `fail`, `timeout`, `budget`, `transport`, `apply_error`")
        );
        let declaration = page("declaration.md");
        in_order(
            "declaration.md",
            &declaration,
            &crate::declaration::ACCEPTANCE_RULES.map(row),
        );
        let ledger = page("ledger.md");
        in_order(
            "ledger.md",
            &ledger,
            &crate::declaration::STANDARD_FIELDS.map(row),
        );
        let outcomes: Vec<String> = crate::portfolio::Outcome::ALL
            .iter()
            .map(|o| format!("| `{}` | {} |", o.key(), o.label()))
            .collect();
        in_order("ledger.md", &ledger, &outcomes);
    }

    /// The hand-written pages name what the code has: every exit status (the constants the
    /// manual lists), every `git config` key of the tool's own, every environment variable of
    /// the manual, every trailer key.
    #[test]
    fn hand_written_pages_name_what_the_code_has() {
        let exit_codes = page("exit-codes.md");
        for (code, _) in super::super::man::EXIT_STATUS {
            assert!(
                exit_codes.contains(&format!("\n| {code} |")),
                "exit-codes.md: {code}"
            );
        }
        for code in [
            crate::error::exit::OK,
            crate::error::exit::FAILED,
            crate::error::exit::REFUSED,
            crate::error::exit::CONTENDED,
            crate::error::exit::USAGE,
        ] {
            assert!(
                exit_codes.contains(&format!("\n| {code} |")),
                "exit-codes.md: {code}"
            );
        }
        let config = page("config.md");
        for key in [
            crate::hook::KEY_BLOB_BYTES,
            crate::hook::KEY_COMMITS,
            crate::hook::KEY_ROWS,
            "ledger.declaration",
            "core.hooksPath",
            "user.name",
        ] {
            assert!(config.contains(&format!("| `{key}`")), "config.md: {key}");
        }
        for (var, _) in super::super::man::ENVIRONMENT {
            assert!(config.contains(&format!("`{var}`")), "config.md: {var}");
        }
        let trailers = page("trailers.md");
        for key in [
            crate::git::layout::T_DECLARATION,
            crate::git::layout::T_ATTEMPT,
            crate::git::layout::T_REPAIR,
            crate::git::layout::T_FILLED,
        ] {
            assert!(
                trailers.contains(&format!("| `{key}` |")),
                "trailers.md: {key}"
            );
        }
        let index = page("README.md");
        for p in [
            "cli.md",
            "exit-codes.md",
            "config.md",
            "trailers.md",
            "report-json.md",
            "layout.md",
            "formats.md",
            "cite.md",
            "workflow.md",
        ] {
            assert!(index.contains(&format!("]({p})")), "README.md links {p}");
        }
    }

    #[test]
    fn markdown_is_escaped_outside_code() {
        assert_eq!(text("a <id> `<id>` *"), "a \\<id\\> `<id>` \\*");
        assert_eq!(
            anchor("git-ledger hooks install"),
            "git-ledger-hooks-install"
        );
    }
}
