//! A declaration's tasks: their ids always at hand, each task whole when first asked for.
//!
//! The schedule, its positions and the row paths need only the ids; a command reads the tasks
//! of the rows it touches (an import: one of a thousand). A declaration parsed from its bytes
//! holds every task; one rebuilt from the cache of checked declarations
//! ([`super::Declaration::from_cached_form`]) keeps each task's JSON, as the parse that wrote
//! the entry serialised it, and deserialises a task the first time it is read. For the
//! 100,000-row benchmark campaign (1,000 tasks) that is what made reading an entry cost what its
//! size costs, not what 1,000 tasks' deserialisation costs (`docs/benchmarks.md`).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::Task;

/// The tasks of a declaration, in declared order.
#[derive(Clone)]
pub struct Tasks {
    ids: Box<[String]>,
    index: HashMap<String, usize>,
    slots: Box<[OnceLock<Task>]>,
    /// Each task's JSON back to back, and where each one ends: in a declaration rebuilt from
    /// its cached form, for the tasks not read yet.
    json: Option<(Vec<u8>, Box<[usize]>)>,
}

impl Tasks {
    /// Tasks already parsed (and validated: ids are unique).
    pub(super) fn parsed(tasks: Vec<Task>) -> Self {
        let ids: Box<[String]> = tasks.iter().map(|t| t.id.clone()).collect();
        Tasks {
            index: index(&ids),
            ids,
            slots: tasks.into_iter().map(OnceLock::from).collect(),
            json: None,
        }
    }

    /// Tasks kept as their ids and each one's JSON (`json[ends[i - 1]..ends[i]]` is task
    /// `i`), as [`Tasks::cached_form`] wrote them; `None` if the parts do not fit together.
    pub(super) fn cached(ids: Vec<String>, json: Vec<u8>, ends: Box<[usize]>) -> Option<Self> {
        let ids: Box<[String]> = ids.into();
        let index = index(&ids);
        let fits = ids.len() == ends.len()
            && index.len() == ids.len()
            && ends.windows(2).all(|w| w[0] <= w[1])
            && ends.last().copied().unwrap_or(0) == json.len();
        fits.then(|| Tasks {
            slots: (0..ids.len()).map(|_| OnceLock::new()).collect(),
            ids,
            index,
            json: Some((json, ends)),
        })
    }

    /// The ids, the JSON of every task back to back, and where each one ends.
    pub(super) fn cached_form(&self) -> Option<(&[String], Vec<u8>, Vec<usize>)> {
        let mut json = Vec::new();
        let mut ends = Vec::with_capacity(self.len());
        for task in self {
            serde_json::to_writer(&mut json, task).ok()?;
            ends.push(json.len());
        }
        Some((&self.ids, json, ends))
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id of the task at `i` (below [`Tasks::len`]), without reading the task.
    pub fn id(&self, i: usize) -> &str {
        &self.ids[i]
    }

    /// Every task's id, in declared order.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.ids.iter().map(String::as_str)
    }

    /// Where the task with this id is.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The task with this id.
    pub fn by_id(&self, id: &str) -> Option<&Task> {
        self.position(id).map(|i| self.get(i))
    }

    /// The task at `i` (below [`Tasks::len`]).
    pub fn get(&self, i: usize) -> &Task {
        self.slots[i].get_or_init(|| {
            // Only a declaration rebuilt from its cached form has a task not read yet, and its
            // JSON is what a parse of this build serialised (the cache checks version, rules
            // and a checksum): it reads back unless the entry was written by hand.
            let (json, ends) = (self.json.as_ref()).expect("a task not read yet has its JSON");
            let start = if i == 0 { 0 } else { ends[i - 1] };
            serde_json::from_slice::<Task>(&json[start..ends[i]])
                .ok()
                .filter(|t| t.id == self.ids[i])
                .unwrap_or_else(|| {
                    panic!(
                        "the cache of checked declarations holds a task that is not what this \
                         build wrote (an entry changed by hand): remove .git/git-ledger/declarations/"
                    )
                })
        })
    }

    /// Every task, in declared order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            tasks: self,
            at: 0..self.len(),
        }
    }
}

fn index(ids: &[String]) -> HashMap<String, usize> {
    (ids.iter().enumerate())
        .map(|(i, id)| (id.clone(), i))
        .collect()
}

/// The tasks in declared order ([`Tasks::iter`]).
pub struct Iter<'a> {
    tasks: &'a Tasks,
    at: std::ops::Range<usize>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Task;
    fn next(&mut self) -> Option<&'a Task> {
        self.at.next().map(|i| self.tasks.get(i))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.at.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Tasks {
    type Item = &'a Task;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl std::ops::Index<usize> for Tasks {
    type Output = Task;
    fn index(&self, i: usize) -> &Task {
        self.get(i)
    }
}

/// Every task, read if need be: a declaration rebuilt from its cached form prints as the one
/// parsed from its bytes.
impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Tasks {
    fn eq(&self, other: &Self) -> bool {
        self.ids == other.ids && self.iter().eq(other.iter())
    }
}
