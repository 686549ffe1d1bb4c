//! How a report names its rows: by their position in the schedule. The ids are made from the
//! declaration's task ids when a report is shown or written, so that a report of 1,000,000
//! rows keeps 4 bytes per mention of a row (in its outcome's list, a blocker, a deviation)
//! instead of a string each, and one pointer per row to the row's [`Shape`], which the rows
//! of one shape share.

use serde::Serialize;
use std::fmt;
use std::sync::Arc;

use super::Shape;
use crate::declaration::fast::push_decimal;
use crate::declaration::{repetition_width, Declaration};
use crate::portfolio::LimitStates;

/// The schedule a report's rows are positions in: the schedule id of a position.
#[derive(Clone)]
pub struct ScheduleIds(Arc<Source>);

enum Source {
    /// `tasks × repetitions`, in task then repetition order (a declaration's schedule).
    Declared {
        tasks: Box<[String]>,
        repetitions: usize,
        width: usize,
    },
    /// The ids, listed (a report built by hand).
    Listed(Box<[String]>),
}

impl ScheduleIds {
    /// The schedule of `decl`.
    pub fn of(decl: &Declaration) -> Self {
        ScheduleIds(Arc::new(Source::Declared {
            tasks: decl.tasks.ids().map(str::to_owned).collect(),
            repetitions: decl.repetitions as usize,
            width: repetition_width(decl.repetitions),
        }))
    }

    /// A schedule of these ids, in order (a report built by hand).
    pub fn listed<S: Into<String>>(ids: impl IntoIterator<Item = S>) -> Self {
        ScheduleIds(Arc::new(Source::Listed(
            ids.into_iter().map(Into::into).collect(),
        )))
    }

    /// The id at `position` (below the schedule's length), after what `out` holds.
    pub fn write(&self, position: u32, out: &mut String) {
        let p = position as usize;
        match &*self.0 {
            Source::Declared {
                tasks,
                repetitions,
                width,
            } => {
                out.push_str(&tasks[p / repetitions]);
                out.push('/');
                push_decimal(out, (p % repetitions + 1) as u64, *width);
            }
            Source::Listed(ids) => out.push_str(&ids[p]),
        }
    }

    /// The id at `position`.
    pub fn id(&self, position: u32) -> String {
        let mut id = String::new();
        self.write(position, &mut id);
        id
    }

    /// The position of `id` in a listed schedule (a report built by hand names its rows by
    /// their ids); `None` when it is not listed, or the schedule is a declaration's.
    pub fn position(&self, id: &str) -> Option<u32> {
        match &*self.0 {
            Source::Listed(ids) => ids.iter().position(|i| i == id).map(|p| p as u32),
            Source::Declared { .. } => None,
        }
    }
}

impl fmt::Debug for ScheduleIds {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &*self.0 {
            Source::Declared {
                tasks, repetitions, ..
            } => write!(f, "ScheduleIds({} × {repetitions})", tasks.len()),
            Source::Listed(ids) => write!(f, "ScheduleIds({ids:?})"),
        }
    }
}

/// The position of a row, as a report keeps it. A schedule longer than `u32::MAX` would be a
/// ledger of hundreds of gigabytes, beyond every input bound.
pub(super) fn position(p: usize) -> u32 {
    u32::try_from(p).expect("a schedule position fits in 32 bits")
}

/// Some rows (an outcome's, those with decisions or repairs), as positions in their schedule;
/// shown and serialised as their schedule ids, in the order added.
#[derive(Clone)]
pub struct Ids {
    ids: ScheduleIds,
    positions: Vec<u32>,
}

impl Ids {
    /// No rows yet, of the schedule `ids`.
    pub fn new(ids: &ScheduleIds) -> Self {
        Ids {
            ids: ids.clone(),
            positions: Vec::new(),
        }
    }

    /// These rows of a listed schedule, by their ids (a report built by hand); `None` if one
    /// is not listed.
    pub fn of<'a>(ids: &ScheduleIds, names: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let mut out = Ids::new(ids);
        for name in names {
            out.push(ids.position(name)?);
        }
        Some(out)
    }

    pub fn push(&mut self, position: u32) {
        self.positions.push(position);
    }
    pub fn len(&self) -> usize {
        self.positions.len()
    }
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
    /// The positions, in the order added.
    pub fn positions(&self) -> &[u32] {
        &self.positions
    }
    /// The schedule ids, in the order added.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = String> + '_ {
        self.positions.iter().map(|&p| self.ids.id(p))
    }
    /// The schedule ids, joined by `sep`.
    pub fn join(&self, sep: &str) -> String {
        let mut out = String::new();
        for (i, &p) in self.positions.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            self.ids.write(p, &mut out);
        }
        out
    }
}

/// The same ids, in the same order (for tests).
impl<const N: usize> PartialEq<[&str; N]> for Ids {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.len() == N && self.iter().zip(other).all(|(a, b)| a == *b)
    }
}

impl fmt::Debug for Ids {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Ids {
    /// The schedule ids, each written into one buffer in turn (not a `String` each).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.positions.len()))?;
        let mut id = String::new();
        for &p in &self.positions {
            id.clear();
            self.ids.write(p, &mut id);
            seq.serialize_element(id.as_str())?;
        }
        seq.end()
    }
}

/// Notes on rows (a blocker's reason, a deviation): each a row's position and a text, in the
/// order added; each distinct text is kept once (a few name 100,000 rows).
#[derive(Clone)]
struct Notes {
    ids: ScheduleIds,
    items: Vec<(u32, u32)>,
    texts: Vec<String>,
}

impl Notes {
    fn new(ids: &ScheduleIds) -> Self {
        Notes {
            ids: ids.clone(),
            items: Vec::new(),
            texts: Vec::new(),
        }
    }

    fn push(&mut self, position: u32, text: &str) {
        // The last texts first: a row's notes repeat the row before's.
        let t = match self.texts.iter().rposition(|t| t == text) {
            Some(t) => t,
            None => {
                self.texts.push(text.to_owned());
                self.texts.len() - 1
            }
        };
        self.items.push((position, t as u32));
    }

    fn iter(&self) -> impl ExactSizeIterator<Item = (String, &str)> + '_ {
        self.items
            .iter()
            .map(|&(p, t)| (self.ids.id(p), self.texts[t as usize].as_str()))
    }

    /// How many distinct rows are noted.
    fn rows(&self) -> usize {
        let mut rows: Vec<u32> = self.items.iter().map(|&(p, _)| p).collect();
        rows.sort_unstable();
        rows.dedup();
        rows.len()
    }
}

/// Why one row blocks the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Blocker<'a> {
    pub schedule_id: String,
    pub why: &'a str,
}

/// A deviation of one row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deviation<'a> {
    pub schedule_id: String,
    pub what: &'a str,
}

/// A section's blockers, in the order found (serialised as a list of [`Blocker`]).
#[derive(Clone)]
pub struct Blockers(Notes);

/// A section's deviations, in the order found (serialised as a list of [`Deviation`]).
#[derive(Clone)]
pub struct Deviations(Notes);

macro_rules! notes {
    ($list:ident, $item:ident, $text:ident) => {
        impl $list {
            /// None yet, of the schedule `ids`.
            pub fn new(ids: &ScheduleIds) -> Self {
                $list(Notes::new(ids))
            }
            /// A note on the row at `position`.
            pub fn push(&mut self, position: u32, $text: &str) {
                self.0.push(position, $text)
            }
            /// A note on a row of a listed schedule, by its id (a report built by hand);
            /// `None` if it is not listed.
            pub fn push_id(&mut self, id: &str, $text: &str) -> Option<()> {
                let p = self.0.ids.position(id)?;
                self.0.push(p, $text);
                Some(())
            }
            pub fn len(&self) -> usize {
                self.0.items.len()
            }
            pub fn is_empty(&self) -> bool {
                self.0.items.is_empty()
            }
            /// How many distinct rows are noted.
            pub fn rows(&self) -> usize {
                self.0.rows()
            }
            pub fn iter(&self) -> impl ExactSizeIterator<Item = $item<'_>> + '_ {
                self.0
                    .iter()
                    .map(|(schedule_id, $text)| $item { schedule_id, $text })
            }
        }

        impl fmt::Debug for $list {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.debug_list().entries(self.iter()).finish()
            }
        }

        impl Serialize for $list {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.iter())
            }
        }
    };
}

notes!(Blockers, Blocker, why);
notes!(Deviations, Deviation, what);

/// One row's classification, as a report shows it (its id made from its position).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowReport<'a> {
    pub schedule_id: String,
    pub section: &'static str,
    pub native_outcome: &'a str,
    pub native_status: Option<&'a str>,
    pub outcome: &'static str,
    pub gaps: &'a [String],
    pub limits: &'a LimitStates,
}

/// Every row of a report, in schedule order: the row at position `p` is the `p`-th, kept as a
/// pointer to its shape.
#[derive(Clone)]
pub struct Rows {
    ids: ScheduleIds,
    shapes: Vec<Arc<Shape>>,
}

impl Rows {
    /// No rows yet, of the schedule `ids`.
    pub fn new(ids: &ScheduleIds) -> Self {
        Rows {
            ids: ids.clone(),
            shapes: Vec::new(),
        }
    }
    pub(super) fn with_capacity(ids: &ScheduleIds, n: usize) -> Self {
        Rows {
            ids: ids.clone(),
            shapes: Vec::with_capacity(n),
        }
    }
    /// The next row (at the next position), of this shape.
    pub fn push(&mut self, shape: Arc<Shape>) {
        self.shapes.push(shape);
    }
    pub fn len(&self) -> usize {
        self.shapes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }
    /// The schedule the rows are in.
    pub fn schedule(&self) -> &ScheduleIds {
        &self.ids
    }
    /// The shapes of the rows, in order (the row at position `p` is the `p`-th).
    pub fn shapes(&self) -> &[Arc<Shape>] {
        &self.shapes
    }
    /// The rows, in schedule order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RowReport<'_>> + '_ {
        self.shapes
            .iter()
            .enumerate()
            .map(|(p, s)| s.row(self.ids.id(p as u32)))
    }
}

impl fmt::Debug for Rows {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Rows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl Shape {
    /// The row of this shape with this id, as a report shows it.
    pub fn row(&self, schedule_id: String) -> RowReport<'_> {
        let c = &self.classification;
        RowReport {
            schedule_id,
            section: self.evidence.as_str(),
            native_outcome: &self.native_outcome,
            native_status: self.native_status.as_deref(),
            outcome: c.outcome.key(),
            gaps: &c.gaps,
            limits: &c.limits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_task_and_its_repetition_zero_padded_as_format_pads_it() {
        for width in 1..=7 {
            for n in [
                1, 7, 9, 10, 42, 99, 100, 999, 1000, 123_456, 9_999_999, 12_345_678,
            ] {
                let mut out = String::from("t/");
                push_decimal(&mut out, n, width);
                assert_eq!(out, format!("t/{n:0width$}"), "{n} in {width} digits");
            }
        }
        let ids = ScheduleIds(Arc::new(Source::Declared {
            tasks: vec!["a/x".to_owned(), "b".to_owned()].into_boxed_slice(),
            repetitions: 100,
            width: 3,
        }));
        let written: Vec<String> = [0, 9, 99, 100, 199].map(|p| ids.id(p)).to_vec();
        assert_eq!(written, ["a/x/001", "a/x/010", "a/x/100", "b/001", "b/100"]);
        let mut listed = Ids::new(&ids);
        for p in [199, 0, 100] {
            listed.push(p);
        }
        assert_eq!(
            serde_json::to_string(&listed).unwrap(),
            r#"["b/100","a/x/001","b/001"]"#
        );
    }
}
