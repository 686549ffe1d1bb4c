//! Commit messages as part of admission (`docs/reference/layout.md`, rule 7; `docs/messages.md`): what a ledger commit's message
//! must say for the change its tree makes, built once by [`expected`] (or [`root_expected`]),
//! written by the tool through [`compose`], and compared with a commit's actual message by
//! [`check`]. The writers and the validator use the same [`Expected`], so the rule is not
//! written twice.
//!
//! A message is a subject line, a body, and a last paragraph of trailers, each exactly what the
//! tool writes for the change: the body holds one line per row the change fills or repairs (in
//! schedule order), then the repair's note (read from the row) or the `from` line naming the
//! input in the tool's own form (one word: whitespace written `%20`, `%` as `%25`); the
//! trailers are exactly the expected `Ledger-` lines. No free text, no other trailer
//! (`Signed-off-by`, `Reviewed-by`, …): a message says what the change did, nothing more.

use crate::admission::{self, Kind};
use crate::declaration::Declaration;
use crate::error::Reasons;
use crate::ledger::Row;
use crate::portfolio::classify;
use crate::refusal::{Reason, Rule};
use crate::store::{Change, ChangeKind};

use super::layout::{T_ATTEMPT, T_DECLARATION, T_FILLED, T_REPAIR};

/// What a ledger commit's message must say: its subject and its `Ledger-` trailer lines in
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub subject: String,
    /// The body's rows, in schedule order (none for the root).
    pub body: Vec<BodyRow>,
    pub trailers: Vec<String>,
    /// The `k` of `Ledger-Filled: k/n`.
    pub filled: usize,
}

/// What the body says of one row the change fills or repairs, derived from the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyRow {
    /// `<schedule id>  <native outcome>[ (<native status>)]  <portfolio label>`.
    pub line: String,
    /// A repair: its last note (`  repair: <note>` follows the line).
    pub repair: Option<String>,
    /// A fill: a `  from <input>` line may follow (the input is the writer's, not the row's).
    pub fill: bool,
}

/// The form of an input's name on a `from` line: one line (control characters escaped) and one
/// word, whitespace percent-encoded (`%20`) and `%` as `%25`, so that the line names an input
/// and cannot carry a sentence.
pub fn input_form(s: &str) -> String {
    let mut out = String::new();
    for c in one_line(s).chars() {
        if c == '%' || c.is_whitespace() {
            let mut b = [0; 4];
            for byte in c.encode_utf8(&mut b).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `s` is a name [`input_form`] writes: not empty, no whitespace, no control character.
fn is_input_form(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn body_row(decl: &Declaration, row: &Row, fill: bool) -> BodyRow {
    let status = row
        .native_status()
        .map(|s| format!(" ({})", one_line(s)))
        .unwrap_or_default();
    BodyRow {
        line: format!(
            "{}  {}{}  {}",
            one_line(row.schedule_id()),
            one_line(row.native_outcome()),
            status,
            label(decl, row)
        ),
        repair: if fill {
            None
        } else {
            row.interventions()
                .filter(|(k, _)| *k == "repair")
                .last()
                .map(|(_, note)| one_line(note))
        },
        fill,
    }
}

/// Text that goes on one line of a message: control characters (newlines included) shown
/// escaped, so a note or a path cannot start a paragraph or fake a trailer.
pub fn one_line(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn declaration_trailer(decl: &Declaration) -> String {
    format!(
        "{T_DECLARATION}: {} sha256:{}",
        one_line(&decl.id),
        decl.sha256
    )
}

/// The root commit's message parts: `declare <id>: <n> scheduled attempts`, the declaration
/// and `Ledger-Filled: 0/n`.
pub fn root_expected(decl: &Declaration) -> Expected {
    let n = decl.schedule_len();
    Expected {
        subject: format!("declare {}: {n} scheduled attempts", one_line(&decl.id)),
        body: Vec::new(),
        trailers: vec![declaration_trailer(decl), format!("{T_FILLED}: 0/{n}")],
        filled: 0,
    }
}

/// The portfolio label of a row's outcome, lowercased, as subjects show it.
pub fn label(decl: &Declaration, row: &Row) -> String {
    classify(decl, row).outcome.label().to_lowercase()
}

/// The message parts of a commit that fills `filled` rows and repairs `repaired` rows (any
/// order: both are put in schedule order) on a parent whose message says `parent_filled` rows
/// are filled, its kind as [`admission::step_kind`] says (the question [`admission::admit`]
/// asks of every change). `Err` is why no message the tool writes fits such a commit (a reason
/// without the commit's name).
pub fn expected(
    decl: &Declaration,
    filled: &[&Row],
    repaired: &[&Row],
    parent_filled: usize,
) -> Result<Expected, String> {
    let kind = admission::step_kind(filled, repaired)
        .and_then(|k| k.ok_or_else(admission::changes_no_row))
        .map_err(|r| r.sentence);
    expected_of(decl, kind, filled, repaired, parent_filled)
}

/// [`expected`] for a step whose kind is known (the commit validator's, from
/// [`admission::admit`]'s answer; `Err`: why the step is of no kind a commit can be).
pub fn expected_of(
    decl: &Declaration,
    kind: Result<Kind, String>,
    filled: &[&Row],
    repaired: &[&Row],
    parent_filled: usize,
) -> Result<Expected, String> {
    let n = decl.schedule_len();
    let mut filled = filled.to_vec();
    let mut repaired = repaired.to_vec();
    filled.sort_by_key(|r| decl.schedule_position(r.schedule_id()));
    repaired.sort_by_key(|r| decl.schedule_position(r.schedule_id()));
    let k = parent_filled + filled.len();
    if k > n {
        return Err(format!(
            "the parent's {T_FILLED} says {parent_filled}/{n} and this commit fills {} more, which makes more than the {n} scheduled: the parent's message does not say what its tree holds (check the chain with `git ledger verify`)",
            filled.len()
        ));
    }
    let subject = match (kind?, filled.as_slice(), repaired.as_slice()) {
        (Kind::Repairs, _, [r]) => format!("repair {}", one_line(r.schedule_id())),
        (Kind::Repairs, _, rs) => format!("repair {} attempts", rs.len()),
        (kind, fs, _) => {
            let verb = if kind == Kind::Hand { "put" } else { "import" };
            match fs {
                [r] => format!(
                    "{verb} {}: {} -> {}",
                    one_line(r.schedule_id()),
                    one_line(r.native_outcome()),
                    label(decl, r)
                ),
                fs => format!("{verb} {} attempts", fs.len()),
            }
        }
    };
    let mut trailers = vec![declaration_trailer(decl)];
    for r in &filled {
        trailers.push(format!(
            "{T_ATTEMPT}: {} {} {}",
            one_line(r.schedule_id()),
            one_line(r.native_outcome()),
            classify(decl, r).outcome.key()
        ));
    }
    for r in &repaired {
        trailers.push(format!("{T_REPAIR}: {}", one_line(r.schedule_id())));
    }
    trailers.push(format!("{T_FILLED}: {k}/{n}"));
    let body = (filled.iter().map(|r| body_row(decl, r, true)))
        .chain(repaired.iter().map(|r| body_row(decl, r, false)))
        .collect();
    Ok(Expected {
        subject,
        body,
        trailers,
        filled: k,
    })
}

/// The message the tool writes: the subject, the body (its rows, each fill's `from` line when
/// `inputs` names one for it: `inputs[i]` for `expected.body[i]`), the trailers.
pub fn compose(expected: &Expected, inputs: &[&str]) -> String {
    let mut out = format!("{}\n\n", expected.subject);
    let body = body_text(expected, inputs);
    if !body.is_empty() {
        out.push_str(&body);
        out.push('\n');
    }
    for t in &expected.trailers {
        out.push_str(t);
        out.push('\n');
    }
    out
}

/// The body's lines, each ending in a newline (empty for no rows).
fn body_text(expected: &Expected, inputs: &[&str]) -> String {
    let mut out = String::new();
    for (i, b) in expected.body.iter().enumerate() {
        out.push_str(&b.line);
        out.push('\n');
        if let Some(note) = &b.repair {
            out.push_str(&format!("  repair: {note}\n"));
        }
        match inputs.get(i) {
            Some(input) if b.fill && !input.is_empty() => {
                out.push_str(&format!("  from {}\n", input_form(input)));
            }
            _ => {}
        }
    }
    out
}

/// The root commit's message (`init`).
pub fn root_message(decl: &Declaration) -> String {
    compose(&root_expected(decl), &[])
}

/// The message of the commit that writes `change` on a parent whose message says
/// `parent_filled` rows are filled, with the number of rows filled after it: [`expected`]'s
/// parts for the rows the change fills or repairs, each fill's `from` line naming its source.
/// `Err` as for [`expected`].
pub fn change_message(
    decl: &Declaration,
    change: &Change,
    parent_filled: usize,
) -> Result<(String, usize), String> {
    let mut writes: Vec<_> = change.rows.iter().collect();
    writes.sort_by_key(|w| decl.schedule_position(w.row.schedule_id()));
    let rows: Vec<&Row> = writes.iter().map(|w| &w.row).collect();
    let e = if change.kind == ChangeKind::Repair {
        expected(decl, &[], &rows, parent_filled)?
    } else {
        expected(decl, &rows, &[], parent_filled)?
    };
    let inputs: Vec<&str> = writes.iter().map(|w| w.source.as_str()).collect();
    Ok((compose(&e, &inputs), e.filled))
}

/// The `k` of an admitted message's `Ledger-Filled: k/n` trailer for a schedule of `n` rows,
/// read from its last paragraph as [`check`] compares it; `None` when it has none that fits.
pub fn filled_of(message: &str, n: usize) -> Option<usize> {
    let (_, _, trailers) = split(message);
    let mut found = None;
    for (_, line) in trailers {
        if let Some(v) = line
            .strip_prefix(T_FILLED)
            .and_then(|v| v.strip_prefix(": "))
        {
            let (k, total) = v.split_once('/')?;
            let (k, total): (usize, usize) = (k.parse().ok()?, total.parse().ok()?);
            if total != n || k > n || found.is_some() {
                return None;
            }
            found = Some(k);
        }
    }
    found
}

/// Lines of a message with their 1-based numbers.
type Lines<'a> = Vec<(usize, &'a str)>;

/// A message split into its subject paragraph's lines, its body lines and its last paragraph
/// (the trailers), each line with its 1-based line number. A message of one paragraph has no
/// trailers.
fn split(message: &str) -> (Lines<'_>, Lines<'_>, Lines<'_>) {
    let mut paragraphs: Vec<Lines<'_>> = Vec::new();
    let mut current: Lines<'_> = Vec::new();
    for (i, line) in message.split('\n').enumerate() {
        // Git: a blank line (empty or whitespace only) ends a paragraph.
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            current.push((i + 1, line));
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    let mut it = paragraphs.into_iter();
    let subject = it.next().unwrap_or_default();
    let mut rest: Vec<_> = it.collect();
    let trailers = rest.pop().unwrap_or_default();
    (subject, rest.into_iter().flatten().collect(), trailers)
}

/// The key of a line that parses as a trailer the way Git reads one (`Key: value`, `Key:value`,
/// `Key : value`; a key of letters, digits and `-`), if it does.
fn trailer_key(line: &str) -> Option<&str> {
    let colon = line.find(':')?;
    let key = line[..colon].trim_end();
    let ok = !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !line.starts_with(char::is_whitespace);
    ok.then_some(key)
}

fn is_ledger_key(key: &str) -> bool {
    key.len() > 7 && key[..7].eq_ignore_ascii_case("ledger-")
}

/// Why `message` is not a message that says exactly what `expected` describes: each reason
/// breaking rule 7 (the caller names the commit; a reason about one trailer line is found at
/// `line <n>`, inside the commit, and the rule follows the commit). Empty when it is.
pub fn check(message: &str, expected: &Expected) -> Vec<Reason> {
    let r = sentences(message, expected);
    (r.into_vec().into_iter())
        .map(|r| r.within_around(Rule::Admission(7)))
        .collect()
}

/// [`check`]'s reasons, without their rule.
fn sentences(message: &str, expected: &Expected) -> Reasons {
    let mut r = Reasons::new();
    let (subject, body, trailers) = split(message);
    let want_subject = &expected.subject;
    match subject.first() {
        Some((_, s)) if *s == want_subject.as_str() => {}
        Some((_, s)) => r.push(format!(
            "its subject is {s:?}; for what its tree does the tool writes {want_subject:?}"
        )),
        None => r.push(format!(
            "its message is empty; for what its tree does the tool writes the subject {want_subject:?}"
        )),
    }
    if subject.len() > 1 {
        r.push(format!(
            "its subject runs on to line 2 ({:?}); Git shows the whole first paragraph as the subject, so the subject is one line followed by a blank line",
            subject[1].1
        ));
    }
    // Lines before the trailers that a reader (or `git interpret-trailers` on a copy) would
    // take for a ledger trailer: the subject paragraph's further lines and the body.
    for (n, line) in subject.iter().skip(1).chain(&body) {
        if trailer_key(line.trim_start()).is_some_and(is_ledger_key) {
            r.push(format!(
                "line {n} of the body parses as a Ledger- trailer ({line:?}); only the trailer paragraph at the end says what the commit did"
            ));
        }
    }
    body_sentences(&body, expected, &mut r);
    if trailers.is_empty() {
        r.push(format!(
            "it has no trailer paragraph; its last paragraph must hold {}",
            expected.trailers.join(", ")
        ));
        return r;
    }
    let mut got: Vec<(usize, &str)> = Vec::new();
    for &(n, line) in &trailers {
        match trailer_key(line) {
            None => r.push(format!(
                "line {n} of the last paragraph is not a trailer ({line:?}); the last paragraph holds only `Key: value` trailers, so that Git reads every one"
            )),
            Some(key) if is_ledger_key(key) => {
                if ![T_DECLARATION, T_ATTEMPT, T_REPAIR, T_FILLED].contains(&key) {
                    r.push(Reason::new(format!(
                        "trailer key {key} is not one the tool writes (Ledger-Declaration, Ledger-Attempt, Ledger-Repair, Ledger-Filled, spelled so)"
                    )).at(format!("line {n}")));
                } else {
                    got.push((n, line));
                }
            }
            Some(key) => r.push(Reason::new(format!(
                "trailer {key} is not one the tool writes; a ledger commit's last paragraph holds only its Ledger- trailers (no Signed-off-by, Reviewed-by or other claim: the message says what the change did, nothing more)"
            )).at(format!("line {n}"))),
        }
    }
    let want: Vec<&str> = expected.trailers.iter().map(String::as_str).collect();
    let got_lines: Vec<&str> = got.iter().map(|(_, l)| *l).collect();
    if got_lines == want {
        if r.is_empty() {
            layout_sentence(message, expected, &body, &mut r);
        }
        return r;
    }
    let key_of = |l: &str| trailer_key(l).unwrap_or_default().to_owned();
    for (n, line) in &got {
        if !want.contains(line) {
            let key = key_of(line);
            let same_key: Vec<&&str> = want.iter().filter(|w| key_of(w) == key).collect();
            let says = match key.as_str() {
                T_FILLED => format!(
                    "the parent's count plus the rows this commit fills is {}",
                    same_key.first().map_or("", |w| **w)
                ),
                T_DECLARATION => format!(
                    "the ledger's declaration is {}",
                    same_key.first().map_or("", |w| **w)
                ),
                T_ATTEMPT if same_key.is_empty() => "this commit fills no row".to_owned(),
                T_ATTEMPT => format!(
                    "the rows this commit fills are, as admitted: {}",
                    same_key
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                _ if same_key.is_empty() => "this commit repairs no row".to_owned(),
                _ => format!(
                    "the rows this commit repairs are: {}",
                    same_key
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            r.push(
                Reason::new(format!(
                    "trailer {line:?} does not say what the commit did ({says})"
                ))
                .at(format!("line {n}")),
            );
        }
    }
    for w in &want {
        let count = |v: &[&str]| v.iter().filter(|l| *l == w).count();
        if count(&got_lines) < count(&want) {
            r.push(format!("trailer {w:?} is missing"));
        } else if count(&got_lines) > count(&want) {
            r.push(format!(
                "trailer {w:?} appears {} times; once per row",
                count(&got_lines)
            ));
        }
    }
    if r.is_empty() {
        r.push(format!(
            "its Ledger- trailers are out of order; the tool writes {}",
            want.join(", ")
        ));
    }
    r
}

/// Why the body `body` (its lines, with their numbers) is not the one the tool writes for
/// `expected`: the first line that differs, or the first line beyond the tool's.
fn body_sentences(body: &Lines<'_>, expected: &Expected, r: &mut Reasons) {
    let mut lines = body.iter().peekable();
    let what = "one line per row it fills or repairs, in schedule order, then the repair's note or the `from` line naming its input";
    for b in &expected.body {
        let mut want = vec![b.line.clone()];
        if let Some(note) = &b.repair {
            want.push(format!("  repair: {note}"));
        }
        for w in want {
            match lines.next() {
                Some((_, l)) if *l == w => {}
                Some((n, l)) => {
                    r.push(format!(
                        "line {n} of the body is {l:?}; for this change the tool writes {w:?} there (the body is {what}; nothing else)"
                    ));
                    return;
                }
                None => {
                    r.push(format!(
                        "its body lacks {w:?}; for this change the tool writes {what}"
                    ));
                    return;
                }
            }
        }
        if b.fill {
            if let Some((n, l)) = lines.peek() {
                if let Some(input) = l.strip_prefix("  from ") {
                    if !is_input_form(input) {
                        r.push(format!(
                            "line {n} of the body ({l:?}) names its input in another form than the tool's (one word, whitespace written %20); a `from` line names an input, it carries no sentence"
                        ));
                        return;
                    }
                    lines.next();
                }
            }
        }
    }
    if let Some((n, l)) = lines.next() {
        let more = lines.count();
        r.push(format!(
            "line {n} of the body ({l:?}){} is not a line the tool writes for this change; the body is {what}, no other text (a claim about the attempt belongs nowhere in a ledger commit: the row says what happened)",
            match more {
                0 => String::new(),
                1 => " and 1 line after it".to_owned(),
                m => format!(" and {m} lines after it"),
            }
        ));
    }
}

/// Once every line is the tool's: whether the message is laid out as the tool lays it out
/// (one blank line between the parts, none inside the body, no trailing blanks).
fn layout_sentence(message: &str, expected: &Expected, body: &Lines<'_>, r: &mut Reasons) {
    let mut written = format!("{}\n\n", expected.subject);
    if !body.is_empty() {
        for (_, l) in body {
            written.push_str(l);
            written.push('\n');
        }
        written.push('\n');
    }
    for t in &expected.trailers {
        written.push_str(t);
        written.push('\n');
    }
    // Newlines at the very end are Git's business (`commit-tree -m` adds one).
    if message.trim_end_matches('\n') != written.trim_end_matches('\n') {
        r.push(
            "its lines are the tool's but not laid out as the tool writes them (the subject, a blank line, the body, a blank line, the trailers, each line ending in one newline, no other blank line and no trailing blanks)"
                .to_owned(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl() -> Declaration {
        crate::testutil::declaration()
    }

    #[test]
    fn one_line_escapes_newlines() {
        assert_eq!(
            one_line("a\n\nLedger-Filled: 9/9"),
            "a\\n\\nLedger-Filled: 9/9"
        );
    }

    /// Schedule entry `i` filled as FAIL from a record of `kind` (`hand`, or the task's kind).
    fn filled(d: &Declaration, i: usize, hand: bool) -> Row {
        let e = d.schedule_at(i);
        let task = d.tasks.iter().find(|t| t.id == e.task).unwrap();
        let kind = if hand { "hand" } else { task.kind.as_str() };
        let mut v = Row::template(d, &e.id).unwrap().to_value();
        v["native_outcome"] = "FAIL".into();
        v["reason"] = "oracle failed".into();
        v["native_record"] =
            serde_json::json!({"kind": kind, "id": e.id, "sha256": "a".repeat(64)});
        Row::check(d, &v, "test").unwrap()
    }

    #[test]
    fn the_subject_follows_what_the_rows_are() {
        let d = decl();
        let n = d.schedule_len();
        let (a, b) = (filled(&d, 0, true), filled(&d, 1, true));
        let e = expected(&d, &[&b, &a], &[], 3).unwrap();
        assert_eq!(e.subject, "put 2 attempts");
        assert_eq!(e.filled, 5);
        // Schedule order whatever the order given.
        assert!(e.trailers[1].contains(a.schedule_id()), "{e:?}");
        assert_eq!(e.trailers.last().unwrap(), &format!("Ledger-Filled: 5/{n}"));
        let one = expected(&d, &[&a], &[], 0).unwrap();
        assert_eq!(
            one.subject,
            format!("put {}: FAIL -> {}", a.schedule_id(), label(&d, &a))
        );
        let imported = filled(&d, 0, false);
        assert!(expected(&d, &[&imported], &[], 0)
            .unwrap()
            .subject
            .starts_with("import "));
        assert_eq!(
            expected(&d, &[], &[&a], 1).unwrap().subject,
            format!("repair {}", a.schedule_id())
        );
        for (f, r, k) in [
            (vec![&imported, &b], vec![], 0),
            (vec![&a], vec![&b], 0),
            (vec![], vec![], 0),
            (vec![&a], vec![], n),
        ] {
            assert!(expected(&d, &f, &r, k).is_err(), "{f:?} {r:?} {k}");
        }
    }

    #[test]
    fn the_root_message_is_what_the_root_check_wants() {
        let d = decl();
        let e = root_expected(&d);
        let m = compose(&e, &[]);
        assert_eq!(check(&m, &e), Vec::<Reason>::new());
        assert_eq!(filled_of(&m, d.schedule_len()), Some(0));
        assert_eq!(filled_of(&m, d.schedule_len() + 1), None);
    }

    #[test]
    fn only_the_tools_body_and_trailers_are_admitted() {
        let d = decl();
        let e = root_expected(&d);
        let t = e.trailers.join("\n");
        let s = &e.subject;
        for (m, line, why) in [
            (
                format!("{s}\n\nIndependently re-run and audited by the maintainers.\n\n{t}\n"),
                None, "line 3 of the body (\"Independently re-run and audited by the maintainers.\") is not a line the tool writes for this change; the body is one line per row it fills or repairs, in schedule order, then the repair's note or the `from` line naming its input, no other text (a claim about the attempt belongs nowhere in a ledger commit: the row says what happened)",
            ),
            (
                format!("{s}\n\n{t}\nReviewed-by: The Maintainers <m@example.org>\n"),
                Some(5), "trailer Reviewed-by is not one the tool writes; a ledger commit's last paragraph holds only its Ledger- trailers (no Signed-off-by, Reviewed-by or other claim: the message says what the change did, nothing more)",
            ),
            (
                format!("{s}\n\n{t}\nSigned-off-by: A <a@b>\n"),
                Some(5), "trailer Signed-off-by is not one the tool writes; a ledger commit's last paragraph holds only its Ledger- trailers (no Signed-off-by, Reviewed-by or other claim: the message says what the change did, nothing more)",
            ),
            (format!("{s}\n\n\n{t}\n"), None, "its lines are the tool's but not laid out as the tool writes them (the subject, a blank line, the body, a blank line, the trailers, each line ending in one newline, no other blank line and no trailing blanks)"),
            (format!("{s}\n \n{t}\n"), None, "its lines are the tool's but not laid out as the tool writes them (the subject, a blank line, the body, a blank line, the trailers, each line ending in one newline, no other blank line and no trailing blanks)"),
        ] {
            let got = check(&m, &e);
            let place: Vec<String> = line.map(|n| format!("line {n}")).into_iter().collect();
            git_ledger_base::assert_reason!(got, rule = Rule::Admission(7), place = place, sentence = why);
        }
        // A trailer's line is a place inside the commit: the rule follows the commit.
        let got = check(&format!("{s}\n\n{t}\nReviewed-by: M <m@x>\n"), &e);
        let got: Vec<Reason> = got.into_iter().map(|r| r.at("commit c")).collect();
        git_ledger_base::assert_only_reason!(
            got,
            place = ["commit c", "line 5"],
            text = "commit c: rule 7: line 5: trailer Reviewed-by is not one the tool writes; a ledger commit's last paragraph holds only its Ledger- trailers (no Signed-off-by, Reviewed-by or other claim: the message says what the change did, nothing more)"
        );
        // A fill: its row's line, then at most one `from` line in the tool's form.
        let a = filled(&d, 0, true);
        let e = expected(&d, &[&a], &[], 0).unwrap();
        let m = compose(&e, &["my runs/row 01.json"]);
        assert!(m.contains("  from my%20runs/row%2001.json\n"), "{m}");
        assert_eq!(check(&m, &e), Vec::<Reason>::new());
        assert_eq!(check(&compose(&e, &[]), &e), Vec::<Reason>::new());
        let line = &e.body[0].line;
        for (body, why) in [
            (
                format!("{line}\n  from audited by the maintainers\n"),
                "line 4 of the body (\"  from audited by the maintainers\") names its input in another form than the tool's (one word, whitespace written %20); a `from` line names an input, it carries no sentence",
            ),
            (
                format!("{line}\n  from x.json\n  from y.json\n"),
                "line 5 of the body (\"  from y.json\") is not a line the tool writes for this change; the body is one line per row it fills or repairs, in schedule order, then the repair's note or the `from` line naming its input, no other text (a claim about the attempt belongs nowhere in a ledger commit: the row says what happened)",
            ),
            (
                format!("{line}\n  note: re-run and audited\n"),
                "line 4 of the body (\"  note: re-run and audited\") is not a line the tool writes for this change; the body is one line per row it fills or repairs, in schedule order, then the repair's note or the `from` line naming its input, no other text (a claim about the attempt belongs nowhere in a ledger commit: the row says what happened)",
            ),
            (
                format!("{line} (audited)\n"),
                "line 3 of the body is \"arena/sympy-matrix/01  FAIL  ended without completing or stopping (audited)\"; for this change the tool writes \"arena/sympy-matrix/01  FAIL  ended without completing or stopping\" there (the body is one line per row it fills or repairs, in schedule order, then the repair's note or the `from` line naming its input; nothing else)",
            ),
            (String::new(), "its body lacks \"arena/sympy-matrix/01  FAIL  ended without completing or stopping\"; for this change the tool writes one line per row it fills or repairs, in schedule order, then the repair's note or the `from` line naming its input"),
        ] {
            let m = format!("{}\n\n{body}\n{}\n", e.subject, e.trailers.join("\n"));
            let m = m.replace("\n\n\n", "\n\n");
            let got = check(&m, &e);
            git_ledger_base::assert_reason!(got, rule = Rule::Admission(7), sentence = why);
        }
    }

    #[test]
    fn each_lie_is_named() {
        let d = decl();
        let e = root_expected(&d);
        let t = e.trailers.join("\n");
        let s = &e.subject;
        let n = d.schedule_len();
        for (m, line, why) in [
            (format!("declare x\n\n{t}\n"), None, "its subject is \"declare x\"; for what its tree does the tool writes \"declare reliability-slice-1: 6 scheduled attempts\""),
            (format!("{s}\nmore\n\n{t}\n"), None, "its subject runs on to line 2 (\"more\"); Git shows the whole first paragraph as the subject, so the subject is one line followed by a blank line"),
            (
                format!("{s}\n\nLedger-Filled: 9/9\n\n{t}\n"),
                None, "line 3 of the body parses as a Ledger- trailer (\"Ledger-Filled: 9/9\"); only the trailer paragraph at the end says what the commit did",
            ),
            (
                format!("{s}\n\nledger-attempt : x\n\n{t}\n"),
                None, "line 3 of the body parses as a Ledger- trailer (\"ledger-attempt : x\"); only the trailer paragraph at the end says what the commit did",
            ),
            (
                format!("{s}\n\n{t}\nLedger-Foo: 1\n"),
                Some(5), "trailer key Ledger-Foo is not one the tool writes (Ledger-Declaration, Ledger-Attempt, Ledger-Repair, Ledger-Filled, spelled so)",
            ),
            (
                format!("{s}\n\n{t}\nledger-filled: 0/{n}\n"),
                Some(5), "trailer key ledger-filled is not one the tool writes (Ledger-Declaration, Ledger-Attempt, Ledger-Repair, Ledger-Filled, spelled so)",
            ),
            (format!("{s}\n\n{t}\nsome words\n"), None, "line 5 of the last paragraph is not a trailer (\"some words\"); the last paragraph holds only `Key: value` trailers, so that Git reads every one"),
            (format!("{s}\n\n{t}\n{t}\n"), None, &*format!("trailer \"Ledger-Filled: 0/{n}\" appears 2 times; once per row")),
            (format!("{s}\n\n{}\n", e.trailers[0]), None, "trailer \"Ledger-Filled: 0/6\" is missing"),
            (
                format!("{s}\n\n{}\n{}\n", e.trailers[1], e.trailers[0]),
                None, "its Ledger- trailers are out of order; the tool writes Ledger-Declaration: reliability-slice-1 sha256:e4fe8355a4c8dcf63269372858757bef4aa7a7cbf063aa305f452feb0046cd2c, Ledger-Filled: 0/6",
            ),
            (
                format!("{s}\n\n{}\nLedger-Filled: 1/{n}\n", e.trailers[0]),
                Some(4), "trailer \"Ledger-Filled: 1/6\" does not say what the commit did (the parent's count plus the rows this commit fills is Ledger-Filled: 0/6)",
            ),
            (
                format!("{s}\n\n{t}\nLedger-Attempt: a/01 PASS verified_delivery\n"),
                Some(5), "trailer \"Ledger-Attempt: a/01 PASS verified_delivery\" does not say what the commit did (this commit fills no row)",
            ),
            (format!("{s}\n"), None, "it has no trailer paragraph; its last paragraph must hold Ledger-Declaration: reliability-slice-1 sha256:e4fe8355a4c8dcf63269372858757bef4aa7a7cbf063aa305f452feb0046cd2c, Ledger-Filled: 0/6"),
        ] {
            let got = check(&m, &e);
            assert!(
                got.iter().all(|g| g.rule == Some(Rule::Admission(7))),
                "{got:?}"
            );
            let place: Vec<String> = line.map(|n| format!("line {n}")).into_iter().collect();
            git_ledger_base::assert_reason!(got, rule = Rule::Admission(7), place = place, sentence = why);
        }
    }
}
