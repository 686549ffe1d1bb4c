//! The ledger document: [`Ledger`] (the header and one checked row per scheduled attempt, in
//! schedule order), its parse paths (whole, for a change, kept rows through [`Keep`]), the
//! top-level and header checks, the assembly of checked rows into a ledger, and the
//! document's canonical bytes.

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;

use super::checks::check_members;
use super::row::{sorted_fields, Row, RowSer};
use super::view::RowView;
use super::FORMAT;
use crate::declaration::Declaration;
use crate::error::{Error, Reasons, Result};
use crate::json::{self, Obj};
use crate::refusal::{Reason, Rule};

/// A whole ledger: one checked row per scheduled attempt, in schedule order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ledger {
    pub declaration_id: String,
    pub declaration_sha256: String,
    pub rows: Vec<Row>,
}

impl Ledger {
    /// The template ledger: every row DEFERRED.
    pub fn template(decl: &Declaration) -> Ledger {
        Ledger {
            declaration_id: decl.id.clone(),
            declaration_sha256: decl.sha256.clone(),
            rows: decl
                .schedule()
                .map(|e| Row::template(decl, &e.id).expect("scheduled"))
                .collect(),
        }
    }

    /// [`Ledger::parse`] on the ordinary path, which names every fault.
    pub(super) fn parse_ordinary(
        decl: &Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
    ) -> Result<Ledger> {
        let value = json::parse_document(bytes, "ledger", max_input_bytes)?;
        Self::from_owned_value(decl, value)
    }

    /// [`Ledger::parse_for_change`] on the ordinary path.
    pub(super) fn parse_for_change_ordinary(
        decl: &Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
    ) -> std::result::Result<Ledger, Reasons> {
        let sentences = |e: Error| e.into_reasons();
        let mut value =
            json::parse_document(bytes, "ledger", max_input_bytes).map_err(sentences)?;
        let mut rows_value = match &mut value {
            Value::Object(top) => top.remove("rows"),
            _ => None,
        };
        let mut r = Reasons::new();
        check_top(&mut r, decl, &value).map_err(sentences)?;
        let rows = rows_list(rows_value.take(), &mut r);
        let checked = (rows.into_iter().enumerate()).map(|(i, v)| checked_row(decl, i, v));
        Ok(Ledger {
            declaration_id: decl.id.clone(),
            declaration_sha256: decl.sha256.clone(),
            rows: assemble_rows(decl, r, checked, false).map_err(Reasons::from)?,
        })
    }

    /// [`Ledger::parse_for_change`] of a ledger file.
    pub fn read_for_change(
        decl: &Declaration,
        path: &std::path::Path,
        max_input_bytes: u64,
    ) -> Result<Ledger> {
        let bytes = json::read_mapped(path, max_input_bytes)?;
        Self::parse_for_change(decl, &bytes, max_input_bytes)
            .map_err(Error::Refused)
            .map_err(|e| e.context(path.display()))
    }

    /// [`Ledger::parse_kept`] on the ordinary path (every row built, then kept).
    pub(super) fn parse_kept_ordinary<K: Keep>(
        decl: &Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
        keep: &K,
    ) -> Result<KeptRows<K::Kept>> {
        let value = json::parse_document(bytes, "ledger", max_input_bytes)?;
        let ledger = Self::from_owned_value(decl, value)?;
        let kept: Vec<K::Kept> = ledger
            .rows
            .iter()
            .map(|row| keep.keep(decl, row.view()))
            .collect();
        Ok(kept.into())
    }

    /// Read and check a ledger file.
    pub fn read(
        decl: &Declaration,
        path: &std::path::Path,
        max_input_bytes: u64,
    ) -> Result<Ledger> {
        let bytes = json::read_mapped(path, max_input_bytes)?;
        Self::parse(decl, &bytes, max_input_bytes).map_err(|e| e.context(path.display()))
    }

    /// Check a parsed ledger document.
    pub fn from_value(decl: &Declaration, value: &Value) -> Result<Ledger> {
        Self::from_owned_value(decl, value.clone())
    }

    /// [`Ledger::from_value`] of a document the caller owns: each row keeps its parsed fields
    /// without a copy.
    pub fn from_owned_value(decl: &Declaration, mut value: Value) -> Result<Ledger> {
        let mut rows_value = match &mut value {
            Value::Object(top) => top.remove("rows"),
            _ => None,
        };
        let mut r = Reasons::new();
        check_top(&mut r, decl, &value)?;
        let rows = rows_list(rows_value.take(), &mut r);
        let checked = rows
            .into_iter()
            .enumerate()
            .map(|(i, v)| checked_row(decl, i, v));
        assemble(decl, r, checked)
    }

    /// The row of a schedule id.
    pub fn row(&self, decl: &Declaration, schedule_id: &str) -> Option<&Row> {
        decl.schedule_position(schedule_id)
            .and_then(|i| self.rows.get(i))
    }

    /// How many rows hold an attempt.
    pub fn filled(&self) -> usize {
        self.rows.iter().filter(|r| !r.is_deferred()).count()
    }

    /// The ledger document's canonical bytes.
    pub fn canonical(&self, decl: &Declaration) -> Vec<u8> {
        self.canonical_replacing(decl, &HashMap::new())
    }

    /// The canonical bytes of this ledger with the row at each schedule position of `rows`
    /// replaced by the row given for it (a writer's next ledger, without copying this one).
    pub fn canonical_replacing(&self, decl: &Declaration, rows: &HashMap<usize, &Row>) -> Vec<u8> {
        json::canonical(&DocSer {
            ledger: self,
            fields: &decl.attempt_fields,
            replaced: rows,
        })
    }

    /// The header object `{"id", "sha256"}` of the declaration.
    pub fn declaration_header(&self) -> Value {
        serde_json::json!({"id": self.declaration_id, "sha256": self.declaration_sha256})
    }
}

/// The document's top level without its rows: an object of `format`, `declaration` and `rows`.
pub(super) fn check_top(r: &mut Reasons, decl: &Declaration, value: &Value) -> Result<()> {
    let Value::Object(top) = value else {
        return Err(Error::refused(format!(
            "ledger: must be an object, not {}",
            json::type_name(value)
        )));
    };
    for k in top.keys() {
        if !["format", "declaration", "rows"].contains(&k.as_str()) {
            r.push(format!("ledger: {k}: unknown key"));
        }
    }
    match top.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        other => r.push(format!(
            "ledger: format: must be {FORMAT:?}, not {}",
            other.map_or("missing".to_owned(), |v| v.to_string())
        )),
    }
    check_header_declaration(r, decl, top.get("declaration"));
    Ok(())
}

/// A checked row, or why it was refused with its schedule id as written (for the
/// one-row-per-id check; a row that passed has its own).
pub(super) type Checked = std::result::Result<Row, (Option<String>, Vec<Reason>)>;

/// `rows[i]`, naming a row without a schedule id in a reason.
struct RowAt(usize);

impl fmt::Display for RowAt {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "rows[{}]", self.0)
    }
}

/// Check `rows[i]`.
pub(super) fn checked_row(decl: &Declaration, i: usize, v: Value) -> Checked {
    let fields = match v {
        Value::Object(fields) => fields,
        other => {
            let what = format!("a row must be an object, not {}", json::type_name(&other));
            return Err((None, vec![Reason::new(what).at(RowAt(i))]));
        }
    };
    match check_members(decl, &fields, &RowAt(i)) {
        Ok(_) => Ok(Row::new(fields)),
        Err(reasons) => {
            let sid = fields.get("schedule_id").and_then(Value::as_str);
            Err((sid.map(str::to_owned), reasons))
        }
    }
}

/// What [`Ledger::parse_kept`] keeps of each checked row, read through a [`RowView`] (on the
/// fast path a row is never a [`Row`]).
pub trait Keep: Sync {
    type Kept: Send;
    fn keep<O: Obj>(&self, decl: &Declaration, row: RowView<'_, O>) -> Self::Kept;
}

/// What [`Ledger::parse_kept`] kept of every row, in schedule order. The rows stay in the
/// lists each core kept them in (moving 100,000 kept rows into one list took a pass on one
/// core, and fresh memory, for nothing: they are read once, in order).
pub struct KeptRows<T>(pub(super) Vec<Vec<T>>);

/// What the fast path keeps of a checked row while its share is parsed: the caller's part, and
/// what the ledger-level rules ask of the row, found on the core that parsed it (then split
/// into the share's kept rows and record hashes, `ledger::fast::KeptShare`).
pub(crate) struct Placed<T> {
    /// The row's position in the schedule (a schedule of more rows is left to the ordinary path).
    pub(super) pos: u32,
    /// Its record key (`<kind>:<id>`), hashed: equal keys hash alike.
    pub(super) record: Option<std::num::NonZeroU64>,
    pub(super) kept: T,
}

impl<T> KeptRows<T> {
    /// Rows kept in the given lists, in order.
    pub fn in_lists(lists: Vec<Vec<T>>) -> Self {
        KeptRows(lists)
    }
    /// How many rows.
    pub fn len(&self) -> usize {
        self.0.iter().map(Vec::len).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The rows, in schedule order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.0.iter().flatten()
    }
    /// The rows in two parts of about half each (cut between the lists they are kept in), in
    /// order: for work that can be shared by two cores.
    pub fn halves(self) -> (KeptRows<T>, KeptRows<T>) {
        let half = self.len() / 2;
        let mut lists = self.0;
        let (mut cut, mut seen) = (0, 0);
        while cut < lists.len() && seen + lists[cut].len() <= half {
            seen += lists[cut].len();
            cut += 1;
        }
        // A first list longer than half stays whole on the first side.
        let second = lists.split_off(cut.max(1).min(lists.len()));
        (KeptRows(lists), KeptRows(second))
    }
}

/// Rows kept in one list, in order (as `report` of a ledger read whole keeps them).
impl<T> From<Vec<T>> for KeptRows<T> {
    fn from(rows: Vec<T>) -> Self {
        Self::in_lists(vec![rows])
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for KeptRows<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> IntoIterator for KeptRows<T> {
    type Item = T;
    type IntoIter = KeptIter<T>;
    fn into_iter(self) -> KeptIter<T> {
        KeptIter {
            left: self.len(),
            rows: self.0.into_iter().flatten(),
        }
    }
}

/// The rows of [`KeptRows`], in schedule order.
pub struct KeptIter<T> {
    rows: std::iter::Flatten<std::vec::IntoIter<Vec<T>>>,
    left: usize,
}

impl<T> Iterator for KeptIter<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let row = self.rows.next()?;
        self.left -= 1;
        Some(row)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for KeptIter<T> {}

/// The ledger of checked rows, in document order: one row per schedule id, in schedule order,
/// one record per row, none missing. `r` holds the reasons found so far.
fn assemble(decl: &Declaration, r: Reasons, rows: impl Iterator<Item = Checked>) -> Result<Ledger> {
    Ok(Ledger {
        declaration_id: decl.id.clone(),
        declaration_sha256: decl.sha256.clone(),
        rows: assemble_rows(decl, r, rows, true).map_err(|r| Error::Refused(r.into()))?,
    })
}

/// The checked rows of [`assemble`], in schedule order. `check_records`: refuse two rows that name
/// one record (group 7).
/// A ledger document's `rows` member, taken out of it: the list, or no rows and the reason.
fn rows_list(rows: Option<Value>, r: &mut Reasons) -> Vec<Value> {
    match rows {
        Some(Value::Array(rows)) => rows,
        Some(other) => {
            r.push(format!(
                "ledger: rows: must be a list, not {}",
                json::type_name(&other)
            ));
            Vec::new()
        }
        None => {
            r.push("ledger: rows: missing");
            Vec::new()
        }
    }
}

pub(super) fn assemble_rows(
    decl: &Declaration,
    r: Reasons,
    rows: impl Iterator<Item = Checked>,
    check_records: bool,
) -> std::result::Result<Vec<Row>, Vec<Reason>> {
    let mut r: Vec<Reason> = r.into_vec();
    let n = decl.schedule_len();
    // The rows, while they come in schedule order. A ledger whose rows do not (one out of
    // order, a gap, a refused row) is refused below, so nothing after that is kept.
    let mut out = Vec::with_capacity(n);
    // The last row naming each schedule id: by schedule position for a scheduled id (none:
    // `usize::MAX`), by the id as written otherwise.
    let mut seen = vec![usize::MAX; n];
    let mut seen_unscheduled: HashMap<String, usize> = HashMap::new();
    // Each record key, and the schedule position of the last row it filled.
    let mut records: HashMap<String, usize> = HashMap::with_capacity(n);
    // The furthest schedule position seen so far: rows are in schedule order, and a row
    // out of it is refused rather than silently moved.
    let mut furthest: Option<usize> = None;
    for (i, checked) in rows.enumerate() {
        let sid = match &checked {
            Ok(row) => Some(row.schedule_id()),
            Err((sid, _)) => sid.as_deref(),
        };
        let pos = sid.and_then(|sid| decl.schedule_position(sid));
        if let Some(sid) = sid {
            let before = match pos {
                Some(pos) => {
                    Some(std::mem::replace(&mut seen[pos], i)).filter(|&b| b != usize::MAX)
                }
                None => seen_unscheduled.insert(sid.to_owned(), i),
            };
            if let Some(first) = before {
                r.push(
                    Reason::new(format!("appears twice (also rows[{first}]); one row per schedule id, the original row stays"))
                        .row(sid)
                        .rule(Rule::Ledger(1))
                        .at(format!("rows[{i}]"))
                        .at("ledger"),
                );
                continue;
            }
        }
        match checked {
            Ok(row) => {
                let pos = pos.expect("checked");
                if let Some(key) = row
                    .native_record()
                    .map(|rec| rec.key())
                    .filter(|_| check_records)
                {
                    if let Some(other) = records.get_mut(&key) {
                        let other = std::mem::replace(other, pos);
                        r.push(
                            Reason::new(format!(
                                "record {key} already filled row {} (one record cannot fill two rows)",
                                decl.schedule_at(other).id
                            ))
                            .row(row.schedule_id())
                            .field("native_record")
                            .rule(Rule::Ledger(7)),
                        );
                    } else {
                        records.insert(key, pos);
                    }
                }
                match furthest {
                    Some(last) if pos < last => r.push(
                        Reason::new(format!(
                            "is out of schedule order (it comes before {}; rows are in schedule order)",
                            decl.schedule_at(last).id
                        ))
                        .row(row.schedule_id())
                        .rule(Rule::Ledger(1))
                        .at(format!("rows[{i}]"))
                        .at("ledger"),
                    ),
                    _ => furthest = Some(pos),
                }
                if pos == out.len() {
                    out.push(row);
                }
            }
            Err((_, reasons)) => r.extend(reasons),
        }
    }
    // A schedule id no row names (a row that names one and passed was seen too).
    for (pos, _) in seen.iter().enumerate().filter(|(_, &i)| i == usize::MAX) {
        let entry = decl.schedule_at(pos);
        r.push(
            Reason::new(
                "is missing (every schedule id appears exactly once, DEFERRED if not attempted)",
            )
            .row(entry.id)
            .rule(Rule::Ledger(1))
            .at("ledger"),
        );
    }
    if !r.is_empty() {
        return Err(r);
    }
    assert_eq!(
        out.len(),
        n,
        "a ledger refused for nothing has every row in order"
    );
    Ok(out)
}

/// Check a `declaration` header object (`{"id", "sha256"}`) against the declaration.
pub fn check_header_declaration(r: &mut Reasons, decl: &Declaration, v: Option<&Value>) {
    match v {
        Some(Value::Object(d)) => {
            for k in d.keys() {
                if k != "id" && k != "sha256" {
                    r.push(format!("ledger: declaration.{k}: unknown key"));
                }
            }
            match d.get("id") {
                Some(Value::String(id)) if *id == decl.id => {}
                other => r.push(format!(
                    "ledger: declaration.id: names {}, but the declaration is {:?}",
                    other.map_or("nothing".to_owned(), |v| v.to_string()),
                    decl.id
                )),
            }
            match d.get("sha256") {
                Some(Value::String(h)) if *h == decl.sha256 => {}
                other => r.push(format!(
                    "ledger: declaration.sha256: names {}, but the declaration's bytes hash to {} (its bytes changed after admission, or it is another declaration)",
                    other.map_or("nothing".to_owned(), |v| v.to_string()),
                    decl.sha256
                )),
            }
        }
        Some(other) => r.push(format!(
            "ledger: declaration: must be {{\"id\", \"sha256\"}}, not {}",
            json::type_name(other)
        )),
        None => r.push("ledger: declaration: missing".to_owned()),
    }
}

struct DocSer<'a> {
    ledger: &'a Ledger,
    fields: &'a [String],
    replaced: &'a HashMap<usize, &'a Row>,
}

struct RowsSer<'a>(&'a DocSer<'a>);

impl Serialize for RowsSer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.ledger.rows.len()))?;
        let sorted = sorted_fields(self.0.fields);
        for (i, row) in self.0.ledger.rows.iter().enumerate() {
            seq.serialize_element(&RowSer {
                row: self.0.replaced.get(&i).copied().unwrap_or(row),
                fields: self.0.fields,
                sorted: Some(&sorted),
            })?;
        }
        seq.end()
    }
}

impl Serialize for DocSer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("format", FORMAT)?;
        m.serialize_entry("declaration", &self.ledger.declaration_header())?;
        m.serialize_entry("rows", &RowsSer(self))?;
        m.end()
    }
}
