//! The portfolio: which outcome each row lands in, the gaps that keep a PASS from being a
//! verified delivery, each declared limit's state, and the deviations and blockers a row
//! contributes to its section's comparison. Pure functions of a declaration and a checked row.

use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

use crate::declaration::{Declaration, Evidence, Kind, Task};
use crate::json::{self, Obj, View, J};
use crate::ledger::{Row, RowView};

/// A portfolio outcome. Every row lands in exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    VerifiedDelivery,
    VerifiedAfterRepair,
    AppropriateStop,
    PassWithoutCompleteEvidence,
    FalseCompletion,
    StoppedUnestablished,
    EndedWithoutCompleting,
    Error,
    Skipped,
    Ungraded,
    NotAttempted,
}

impl Outcome {
    /// Every outcome, in the table's order (the order of the enum: `o as usize` is its index).
    pub const ALL: [Outcome; 11] = [
        Outcome::VerifiedDelivery,
        Outcome::VerifiedAfterRepair,
        Outcome::AppropriateStop,
        Outcome::PassWithoutCompleteEvidence,
        Outcome::FalseCompletion,
        Outcome::StoppedUnestablished,
        Outcome::EndedWithoutCompleting,
        Outcome::Error,
        Outcome::Skipped,
        Outcome::Ungraded,
        Outcome::NotAttempted,
    ];

    /// The JSON key.
    pub fn key(self) -> &'static str {
        match self {
            Outcome::VerifiedDelivery => "verified_delivery",
            Outcome::VerifiedAfterRepair => "verified_after_repair",
            Outcome::AppropriateStop => "appropriate_stop",
            Outcome::PassWithoutCompleteEvidence => "pass_without_complete_evidence",
            Outcome::FalseCompletion => "false_completion",
            Outcome::StoppedUnestablished => "stopped_unestablished",
            Outcome::EndedWithoutCompleting => "ended_without_completing",
            Outcome::Error => "error",
            Outcome::Skipped => "skipped",
            Outcome::Ungraded => "ungraded",
            Outcome::NotAttempted => "not_attempted",
        }
    }

    /// The outcome whose JSON key is `key`.
    pub fn from_key(key: &str) -> Option<Outcome> {
        Outcome::ALL.iter().copied().find(|o| o.key() == key)
    }

    /// The label text uses.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::VerifiedDelivery => "Verified delivery",
            Outcome::VerifiedAfterRepair => "Verified delivery after a human repair",
            Outcome::AppropriateStop => "Appropriate stop",
            Outcome::PassWithoutCompleteEvidence => "Native PASS without complete evidence",
            Outcome::FalseCompletion => "False completion",
            Outcome::StoppedUnestablished => "Stopped (appropriateness not established)",
            Outcome::EndedWithoutCompleting => "Ended without completing or stopping",
            Outcome::Error => "Error",
            Outcome::Skipped => "Skipped or never reached",
            Outcome::Ungraded => "Ungraded",
            Outcome::NotAttempted => "Not attempted",
        }
    }
}

/// Where a row's spend stands against one declared limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitState {
    Within,
    Over,
    Unknown,
}

impl LimitState {
    /// The state as the report writes it (its serialised name).
    pub fn as_str(self) -> &'static str {
        match self {
            LimitState::Within => "within",
            LimitState::Over => "over",
            LimitState::Unknown => "unknown",
        }
    }
}

/// Each declared limit's state for one row, by limit name in sorted order: a map, kept as a
/// short sorted list (a row has a few limits; a `BTreeMap` allocated a 300-byte node for each
/// of a report's 100,000 rows).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct LimitStates(Vec<(Cow<'static, str>, LimitState)>);

impl LimitStates {
    pub fn new() -> Self {
        Self::default()
    }
    /// Set `name`'s state (replacing an earlier one), keeping the names sorted.
    pub fn insert(&mut self, name: Cow<'static, str>, state: LimitState) {
        match self
            .0
            .binary_search_by(|(n, _)| n.as_ref().cmp(name.as_ref()))
        {
            Ok(i) => self.0[i].1 = state,
            Err(i) => self.0.insert(i, (name, state)),
        }
    }
    pub fn get(&self, name: &str) -> Option<&LimitState> {
        (self.0.binary_search_by(|(n, _)| n.as_ref().cmp(name)).ok()).map(|i| &self.0[i].1)
    }
    /// The names and states, by name.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Cow<'static, str>, &LimitState)> {
        self.0.iter().map(|(n, s)| (n, s))
    }
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Cow<'static, str>> {
        self.0.iter().map(|(n, _)| n)
    }
    pub fn values(&self) -> impl ExactSizeIterator<Item = &LimitState> {
        self.0.iter().map(|(_, s)| s)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Index<&str> for LimitStates {
    type Output = LimitState;
    fn index(&self, name: &str) -> &LimitState {
        self.get(name)
            .unwrap_or_else(|| panic!("no limit {name:?}"))
    }
}

impl<const N: usize> From<[(Cow<'static, str>, LimitState); N]> for LimitStates {
    fn from(states: [(Cow<'static, str>, LimitState); N]) -> Self {
        states.into_iter().collect()
    }
}

impl FromIterator<(Cow<'static, str>, LimitState)> for LimitStates {
    fn from_iter<I: IntoIterator<Item = (Cow<'static, str>, LimitState)>>(states: I) -> Self {
        let mut out = LimitStates::new();
        for (name, state) in states {
            out.insert(name, state);
        }
        out
    }
}

/// As a map, the way `BTreeMap` prints.
impl std::fmt::Debug for LimitStates {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// As a JSON object, keys in sorted order (as a `BTreeMap` serialises).
impl Serialize for LimitStates {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// Everything the report says about one row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Classification {
    pub outcome: Outcome,
    /// For a PASS without complete evidence: every gap that put it there (gap vocabulary).
    pub gaps: Vec<String>,
    /// For an attempted row: each declared limit's state.
    pub limits: LimitStates,
    /// Deviations (gap vocabulary): revision, runtime, (live) profile and options.
    pub deviations: Vec<String>,
    /// Why this row blocks its section's comparison (blocker vocabulary); empty if it does not.
    pub blockers: Vec<String>,
}

/// Classify one checked row.
pub fn classify(decl: &Declaration, row: &Row) -> Classification {
    classify_view(decl, row.view())
}

/// [`classify`] of a checked row seen through any JSON view (the fast path's rows).
pub fn classify_view<O: Obj>(decl: &Declaration, row: RowView<'_, O>) -> Classification {
    let task = decl
        .task(row.task_id())
        .expect("a checked row names a declared task");
    if row.is_deferred() {
        return Classification {
            outcome: Outcome::NotAttempted,
            gaps: Vec::new(),
            limits: LimitStates::new(),
            deviations: Vec::new(),
            blockers: vec!["not attempted".to_owned()],
        };
    }
    let limits = limit_states(task, row);
    let over: Vec<String> = limits
        .iter()
        .filter(|(_, s)| **s == LimitState::Over)
        .map(|(n, _)| format!("over limit {n}"))
        .collect();
    let deviations = deviations(decl, task, row);

    let outcome = match row.native_outcome() {
        "PASS" => None,
        "FALSE_COMPLETE" => Some(Outcome::FalseCompletion),
        "STOPPED" | "HONEST_BLOCKER" => Some(Outcome::StoppedUnestablished),
        "FAIL" => Some(Outcome::EndedWithoutCompleting),
        "ERROR" => Some(Outcome::Error),
        "UNSCORED" => Some(Outcome::Ungraded),
        "SKIPPED" | "NOT_EXERCISED" => Some(Outcome::Skipped),
        _ => Some(Outcome::Ungraded), // RUNNING, INTERRUPTED_UNGRADED, PENDING_UNGRADED
    };
    let mut gaps = Vec::new();
    let outcome = outcome.unwrap_or_else(|| {
        let at_stop = row
            .native_status()
            .is_some_and(|s| task.kind.is_stop_status(s));
        gaps = evidence_gaps(task, row, at_stop);
        gaps.extend(deviations.iter().cloned());
        gaps.extend(over.iter().cloned());
        if !gaps.is_empty() {
            Outcome::PassWithoutCompleteEvidence
        } else if at_stop {
            Outcome::AppropriateStop
        } else if row.interventions().any(|(k, _)| k == "repair") {
            Outcome::VerifiedAfterRepair
        } else {
            Outcome::VerifiedDelivery
        }
    });
    let mut blockers = Vec::new();
    if outcome == Outcome::Ungraded {
        blockers.push("ungraded".to_owned());
    }
    blockers.extend(deviations.iter().cloned());
    blockers.extend(over);
    Classification {
        outcome,
        gaps,
        limits,
        deviations,
        blockers,
    }
}

/// Gaps in a PASS's own evidence: oracle checks and evidence references.
fn evidence_gaps<O: Obj>(task: &Task, row: RowView<'_, O>, at_stop: bool) -> Vec<String> {
    let mut gaps = Vec::new();
    let checks = row.oracle_checks();
    if !at_stop {
        match &checks {
            Some(c) if !c.is_empty() => {
                if let (Kind::Arena, Some(up)) = (task.kind, &task.upstream) {
                    for name in &up.checks {
                        if !c.iter().any(|k| k.name == name) {
                            gaps.push(format!("missing upstream check {name}"));
                        }
                    }
                }
            }
            _ => gaps.push("no oracle checks".to_owned()),
        }
    }
    // A failing check on a PASS is refused by the row checks, so none is left to report here.
    if row.evidence_refs().next().is_none() {
        gaps.push("no evidence refs".to_owned());
    }
    gaps
}

/// Deviations of an attempted row, in the gap vocabulary's order.
fn deviations<O: Obj>(decl: &Declaration, task: &Task, row: RowView<'_, O>) -> Vec<String> {
    let mut out = Vec::new();
    match row.source_revision() {
        None => out.push("revision null".to_owned()),
        Some(r) if Some(r) != decl.source_revision.as_deref() => {
            out.push("revision differs".to_owned())
        }
        Some(_) => {}
    }
    let runtime = Repeated::of(
        decl,
        row.runtime_identity_repeat(),
        |m| &mut m.runtime,
        || runtime_state(decl, row),
    );
    match runtime {
        RuntimeState::Matches => {}
        RuntimeState::NotRecorded => out.push("runtime not recorded".to_owned()),
        RuntimeState::Differs => out.push("runtime differs".to_owned()),
    }
    if task.evidence == Evidence::Live {
        let models = row.models_repeat();
        if !Repeated::of(
            decl,
            models,
            |m| &mut m.profile,
            || profile_matches(decl, row),
        ) {
            out.push("profile differs".to_owned());
        }
        if row.option_deviations().next().is_some() {
            out.push("option deviations".to_owned());
        }
    }
    out
}

#[derive(Clone, Copy)]
enum RuntimeState {
    Matches,
    NotRecorded,
    Differs,
}

/// What the last rows' repeated runtime and models came to against a declaration, on this
/// thread: a campaign's rows carry the same runtime and models, read once and shared
/// ([`View::repeat_id`]), so each is compared with the declaration once, not once per row
/// (5% of a 100,000-row report's CPU time). Keyed by the value's number, never given to
/// another value, and by the declaration's SHA-256, so an answer is only ever taken for the
/// same value against the same declaration.
#[derive(Default)]
struct Repeated {
    decl_sha256: String,
    runtime: Option<(u64, RuntimeState)>,
    profile: Option<(u64, bool)>,
}

thread_local! {
    static REPEATED: std::cell::RefCell<Repeated> = std::cell::RefCell::default();
}

impl Repeated {
    /// `compute`'s answer for the field whose value is the shared value `id` (computed when
    /// it is not one, or not yet known); `slot` picks the field's answer.
    fn of<T: Copy>(
        decl: &Declaration,
        id: Option<u64>,
        slot: impl Fn(&mut Repeated) -> &mut Option<(u64, T)>,
        compute: impl FnOnce() -> T,
    ) -> T {
        let Some(id) = id else {
            return compute();
        };
        let known = REPEATED.with_borrow_mut(|m| {
            if m.decl_sha256 != decl.sha256 {
                *m = Repeated {
                    decl_sha256: decl.sha256.clone(),
                    ..Repeated::default()
                };
            }
            slot(m).filter(|(at, _)| *at == id).map(|(_, v)| v)
        });
        known.unwrap_or_else(|| {
            let v = compute();
            REPEATED.with_borrow_mut(|m| *slot(m) = Some((id, v)));
            v
        })
    }
}

/// A runtime is recorded when `runtime_identity` is an object with a non-empty `dependencies`
/// freeze; it matches when every key `runtime_requirements` names is equal (packages too).
fn runtime_state<O: Obj>(decl: &Declaration, row: RowView<'_, O>) -> RuntimeState {
    let Some(id) = row.runtime_identity() else {
        return RuntimeState::NotRecorded;
    };
    let freeze = match id.field("dependencies") {
        J::Array(a) => !a.is_empty(),
        J::Object(o) => o.field("sha256").as_str().is_some_and(|s| !s.is_empty()),
        _ => false,
    };
    if !freeze {
        return RuntimeState::NotRecorded;
    }
    for (key, want) in &decl.runtime_requirements {
        let got = id.get(key);
        let equal = match (want, got.map(View::view)) {
            (Value::Object(wp), Some(J::Object(gp))) => wp
                .iter()
                .all(|(name, v)| gp.get(name).is_some_and(|g| json::same(g, v))),
            (w, Some(_)) => got.is_some_and(|g| json::same(g, w)),
            (_, None) => false,
        };
        if !equal {
            return RuntimeState::Differs;
        }
    }
    RuntimeState::Matches
}

/// Whether `actual_models_and_efforts` names the declared provider and exactly the declared
/// roles, each with its declared model and effort.
fn profile_matches<O: Obj>(decl: &Declaration, row: RowView<'_, O>) -> bool {
    let Some(actual) = row.actual_models_and_efforts() else {
        return false;
    };
    let p = &decl.profile;
    if actual.field("provider").as_str() != p.provider.as_deref() {
        return false;
    }
    let Some(roles) = actual.field("roles").as_object() else {
        return false;
    };
    roles.len() == p.roles.len()
        && p.roles.iter().all(|(name, role)| {
            roles.get(name).is_some_and(|r| {
                let r = r.view();
                r.get("model").and_then(J::as_str) == Some(role.model.as_str())
                    && r.get("effort").and_then(J::as_str) == role.effort.as_deref()
            })
        })
}

/// Each declared limit's state for an attempted row (equal is within; missing is unknown).
fn limit_states<O: Obj>(task: &Task, row: RowView<'_, O>) -> LimitStates {
    // One allocation, of the right size.
    let mut states = LimitStates(Vec::with_capacity(task.limits.len()));
    for (name, &limit) in &task.limits {
        let state = match row.spent(name) {
            None => LimitState::Unknown,
            Some(s) if s > limit => LimitState::Over,
            Some(_) => LimitState::Within,
        };
        states.insert(known(name, task.kind.limit_names()), state);
    }
    states
}

/// `name` as the `'static` string of `names` it equals (a declared limit, a native outcome: a
/// closed vocabulary, so 100,000 rows need not each own a copy), else owned.
pub fn known(name: &str, names: &'static [&'static str]) -> Cow<'static, str> {
    match names.iter().find(|n| **n == name) {
        Some(n) => Cow::Borrowed(n),
        None => Cow::Owned(name.to_owned()),
    }
}

#[cfg(test)]
mod tests;
