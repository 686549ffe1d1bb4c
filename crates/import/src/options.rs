//! Models, efforts and option deviations, from the options a harness forwarded to the agent.
//!
//! [`parse_flags`] splits options into flags the way import.md says; [`analyse`] resolves the
//! provider and each declared role's model and effort in the agent's order of precedence, and
//! compares the options as a whole with the declared configuration (the flags the harnesses
//! write for the profile), giving each difference as one string in import.md's exact form.
//!
//! Decisions where import.md is silent:
//! - Declared flags are listed in import.md's order; roles iterate in sorted (byte) order of
//!   their names, first every role's `--<role>-model`, then every non-builder role's
//!   `--<role>-reasoning-effort`. `--reasoning-effort` is declared only when the profile has a
//!   `builder` role.
//! - A flag the declared configuration names twice (e.g. an `extra_options` entry repeating
//!   `--provider`) is one declared flag, at its first position, with its last value.
//! - A token that is neither a flag nor a flag's value (e.g. a stray `foo`) is kept as a
//!   value-less "flag" named by the token itself, so it is compared like any other option
//!   (`added foo`) and never silently dropped.
//! - A value-less flag differs from the same flag with a value; the missing value is written
//!   `(no value)` in `--flag: declared X, forwarded Y`. `--flag=` has the empty value.
//! - A flag's setting is its last occurrence; an occurrence without a value sets nothing, so a
//!   lower precedence level (or null) applies.
//! - Values are compared as text (`--max-iterations 03` differs from the declared `3`).
//! - `--test-command` (with its value) is ignored on both sides.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The flag that is never compared: the declaration leaves each case's test command open.
const IGNORED: &str = "--test-command";

/// One declared role's model and effort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleSpec {
    /// The model the role is declared to use.
    pub model: String,
    /// The reasoning effort the role is declared to use.
    pub effort: String,
}

/// The declared configuration the forwarded options are compared with (the declaration's
/// `profile`, less its name and source).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeclaredProfile {
    /// The declared provider.
    pub provider: String,
    /// Whether the harness passes `--joint-planning`.
    pub joint_planning: bool,
    /// Role name → declared model and effort.
    pub roles: BTreeMap<String, RoleSpec>,
    /// Extra options forwarded verbatim (parsed like the forwarded options).
    pub extra_options: Vec<String>,
}

/// One option as parsed: `--flag`, `--flag=value` or `--flag value` (or a stray token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// The flag as written, `--` included (or the stray token itself).
    pub name: String,
    /// Its value, if it has one.
    pub value: Option<String>,
}

impl Flag {
    fn new(name: impl Into<String>, value: Option<String>) -> Self {
        Flag {
            name: name.into(),
            value,
        }
    }

    /// `--flag` or `--flag=value`.
    fn spelled(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.name),
            None => self.name.clone(),
        }
    }
}

/// What the options establish: the row's `actual_models_and_efforts` and `option_deviations`.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionsAnalysis {
    /// `{"provider": …, "roles": {role: {"model": …, "effort": …}}}`, exactly the declared roles,
    /// null where no option sets a value.
    pub actual_models_and_efforts: Value,
    /// Each difference from the declared configuration, declared flags first, then added flags
    /// in argv order.
    pub option_deviations: Vec<String>,
}

/// Split options into flags: `--flag=value` has a value; `--flag` followed by a token that does
/// not start with `--` takes that token as its value; any other `--flag` has none. A token that
/// is neither becomes a value-less entry named by itself.
pub fn parse_flags(tokens: &[String]) -> Vec<Flag> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        i += 1;
        if !t.starts_with("--") {
            out.push(Flag::new(t.clone(), None));
            continue;
        }
        if let Some((name, value)) = t.split_once('=') {
            out.push(Flag::new(name, Some(value.to_owned())));
        } else if i < tokens.len() && !tokens[i].starts_with("--") {
            out.push(Flag::new(t.clone(), Some(tokens[i].clone())));
            i += 1;
        } else {
            out.push(Flag::new(t.clone(), None));
        }
    }
    out
}

/// Resolve models and efforts from `argv` and compare it with the declared configuration
/// (`max_iterations` is `Some` for an Arena task, whose harness also writes `--max-iterations`).
pub fn analyse(
    argv: &[String],
    declared: &DeclaredProfile,
    max_iterations: Option<u64>,
) -> OptionsAnalysis {
    let forwarded = group(parse_flags(argv));
    OptionsAnalysis {
        actual_models_and_efforts: resolve(&forwarded, declared),
        option_deviations: deviations(&forwarded, &declared_flags(declared, max_iterations)),
    }
}

/// Flags grouped by name in order of first appearance, with every occurrence's value.
type Grouped = Vec<(String, Vec<Option<String>>)>;

fn group(flags: Vec<Flag>) -> Grouped {
    let mut out: Grouped = Vec::new();
    for f in flags.into_iter().filter(|f| f.name != IGNORED) {
        match out.iter_mut().find(|(n, _)| *n == f.name) {
            Some((_, values)) => values.push(f.value),
            None => out.push((f.name, vec![f.value])),
        }
    }
    out
}

/// The setting of a flag: its last occurrence's value (`None` when absent or value-less).
fn setting<'a>(forwarded: &'a Grouped, name: &str) -> Option<&'a str> {
    forwarded
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, values)| values.last())
        .and_then(|v| v.as_deref())
}

fn resolve(forwarded: &Grouped, declared: &DeclaredProfile) -> Value {
    let pick = |names: &[String]| -> Value {
        names
            .iter()
            .find_map(|n| setting(forwarded, n))
            .map_or(Value::Null, |v| Value::String(v.to_owned()))
    };
    let mut roles = Map::new();
    for role in declared.roles.keys() {
        // Highest precedence first: the role's own flag, the astra flag for the resolver, then
        // the flag that sets every role.
        let mut model = vec![format!("--{role}-model")];
        let mut effort = vec![format!("--{role}-reasoning-effort")];
        if role == "resolver" {
            model.push("--astra-model".into());
            effort.push("--astra-reasoning-effort".into());
        }
        model.push("--single-model".into());
        effort.push("--reasoning-effort".into());
        roles.insert(
            role.clone(),
            json!({ "model": pick(&model), "effort": pick(&effort) }),
        );
    }
    json!({ "provider": pick(&["--provider".to_owned()]), "roles": roles })
}

/// The declared configuration as flags, in import.md's order, each name once.
fn declared_flags(declared: &DeclaredProfile, max_iterations: Option<u64>) -> Vec<Flag> {
    let mut all = vec![Flag::new("--provider", Some(declared.provider.clone()))];
    if declared.joint_planning {
        all.push(Flag::new("--joint-planning", None));
    }
    all.extend(parse_flags(&declared.extra_options));
    if let Some(builder) = declared.roles.get("builder") {
        all.push(Flag::new(
            "--reasoning-effort",
            Some(builder.effort.clone()),
        ));
    }
    for (role, spec) in &declared.roles {
        all.push(Flag::new(
            format!("--{role}-model"),
            Some(spec.model.clone()),
        ));
    }
    for (role, spec) in declared.roles.iter().filter(|(r, _)| *r != "builder") {
        all.push(Flag::new(
            format!("--{role}-reasoning-effort"),
            Some(spec.effort.clone()),
        ));
    }
    if let Some(n) = max_iterations {
        all.push(Flag::new("--max-iterations", Some(n.to_string())));
    }
    let mut out: Vec<Flag> = Vec::new();
    for f in all.into_iter().filter(|f| f.name != IGNORED) {
        match out.iter_mut().find(|d| d.name == f.name) {
            Some(existing) => existing.value = f.value,
            None => out.push(f),
        }
    }
    out
}

fn shown(value: Option<&str>) -> &str {
    value.unwrap_or("(no value)")
}

fn deviations(forwarded: &Grouped, declared: &[Flag]) -> Vec<String> {
    let mut out = Vec::new();
    for d in declared {
        match forwarded.iter().find(|(n, _)| *n == d.name) {
            None => out.push(format!("missing {}", d.spelled())),
            Some((_, values)) => {
                let last = values.last().and_then(|v| v.as_deref());
                if last != d.value.as_deref() {
                    out.push(format!(
                        "{}: declared {}, forwarded {}",
                        d.name,
                        shown(d.value.as_deref()),
                        shown(last)
                    ));
                }
                if values.len() > 1 {
                    out.push(format!("{} given {} times", d.name, values.len()));
                }
            }
        }
    }
    for (name, values) in forwarded {
        if declared.iter().any(|d| d.name == *name) {
            continue;
        }
        let last = values.last().cloned().flatten();
        out.push(format!("added {}", Flag::new(name.clone(), last).spelled()));
        if values.len() > 1 {
            out.push(format!("{name} given {} times", values.len()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(tokens: &[&str]) -> Vec<String> {
        tokens.iter().map(|t| t.to_string()).collect()
    }

    fn role(model: &str, effort: &str) -> RoleSpec {
        RoleSpec {
            model: model.into(),
            effort: effort.into(),
        }
    }

    /// An example profile: four roles, joint planning, one extra option.
    fn profile() -> DeclaredProfile {
        DeclaredProfile {
            provider: "prov".into(),
            joint_planning: true,
            roles: [
                ("builder", role("mb", "high")),
                ("planner", role("mp", "medium")),
                ("reviewer", role("mr", "medium")),
                ("resolver", role("mx", "high")),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
            extra_options: s(&["--no-telemetry"]),
        }
    }

    /// Exactly the flags the harness writes for `profile()`, in a shuffled order.
    fn exact_argv() -> Vec<String> {
        s(&[
            "--reviewer-model",
            "mr",
            "--provider",
            "prov",
            "--no-telemetry",
            "--reasoning-effort",
            "high",
            "--joint-planning",
            "--builder-model",
            "mb",
            "--planner-model",
            "mp",
            "--resolver-model",
            "mx",
            "--planner-reasoning-effort",
            "medium",
            "--reviewer-reasoning-effort",
            "medium",
            "--resolver-reasoning-effort",
            "high",
        ])
    }

    fn without(argv: &[String], flag: &str, with_value: bool) -> Vec<String> {
        let i = argv.iter().position(|t| t == flag).unwrap();
        let mut out = argv.to_vec();
        out.drain(i..i + if with_value { 2 } else { 1 });
        out
    }

    fn declared_profile_value() -> Value {
        json!({
            "provider": "prov",
            "roles": {
                "builder": {"model": "mb", "effort": "high"},
                "planner": {"model": "mp", "effort": "medium"},
                "resolver": {"model": "mx", "effort": "high"},
                "reviewer": {"model": "mr", "effort": "medium"},
            }
        })
    }

    // ---- parsing -------------------------------------------------------------------------

    #[test]
    fn parse_equals_form_has_a_value() {
        assert_eq!(
            parse_flags(&s(&["--a=b=c", "--e="])),
            vec![
                Flag::new("--a", Some("b=c".into())),
                Flag::new("--e", Some(String::new()))
            ]
        );
    }

    #[test]
    fn parse_next_token_is_the_value_unless_it_starts_with_dashes() {
        assert_eq!(
            parse_flags(&s(&["--a", "x", "--b", "--c", "-1", "--d"])),
            vec![
                Flag::new("--a", Some("x".into())),
                Flag::new("--b", None),
                Flag::new("--c", Some("-1".into())),
                Flag::new("--d", None),
            ]
        );
    }

    #[test]
    fn parse_keeps_stray_tokens() {
        assert_eq!(
            parse_flags(&s(&["stray", "--a", "x", "y"])),
            vec![
                Flag::new("stray", None),
                Flag::new("--a", Some("x".into())),
                Flag::new("y", None),
            ]
        );
    }

    // ---- the declared configuration itself ------------------------------------------------

    #[test]
    fn exact_declared_flags_give_no_deviation_in_any_order() {
        let a = analyse(&exact_argv(), &profile(), None);
        assert_eq!(a.option_deviations, Vec::<String>::new());
        assert_eq!(a.actual_models_and_efforts, declared_profile_value());
        // Reorder flag by flag (keeping each value after its flag).
        let flags = parse_flags(&exact_argv());
        let mut argv = Vec::new();
        for f in flags.iter().rev() {
            argv.push(f.name.clone());
            argv.extend(f.value.clone());
        }
        let b = analyse(&argv, &profile(), None);
        assert!(b.option_deviations.is_empty(), "{:?}", b.option_deviations);
        assert_eq!(b.actual_models_and_efforts, declared_profile_value());
    }

    #[test]
    fn equals_form_matches_the_declared_flag() {
        let argv: Vec<String> = parse_flags(&exact_argv())
            .iter()
            .map(|f| f.spelled())
            .collect();
        assert!(analyse(&argv, &profile(), None)
            .option_deviations
            .is_empty());
    }

    #[test]
    fn missing_declared_flags_in_the_spec_order() {
        let a = analyse(&[], &profile(), Some(3));
        assert_eq!(
            a.option_deviations,
            s(&[
                "missing --provider=prov",
                "missing --joint-planning",
                "missing --no-telemetry",
                "missing --reasoning-effort=high",
                "missing --builder-model=mb",
                "missing --planner-model=mp",
                "missing --resolver-model=mx",
                "missing --reviewer-model=mr",
                "missing --planner-reasoning-effort=medium",
                "missing --resolver-reasoning-effort=high",
                "missing --reviewer-reasoning-effort=medium",
                "missing --max-iterations=3",
            ])
        );
        assert_eq!(
            a.actual_models_and_efforts,
            json!({
                "provider": null,
                "roles": {
                    "builder": {"model": null, "effort": null},
                    "planner": {"model": null, "effort": null},
                    "resolver": {"model": null, "effort": null},
                    "reviewer": {"model": null, "effort": null},
                }
            })
        );
    }

    #[test]
    fn missing_provider_only() {
        let a = analyse(
            &without(&exact_argv(), "--provider", true),
            &profile(),
            None,
        );
        assert_eq!(a.option_deviations, s(&["missing --provider=prov"]));
        assert_eq!(a.actual_models_and_efforts["provider"], Value::Null);
    }

    #[test]
    fn joint_planning_declared_only_when_true() {
        let a = analyse(
            &without(&exact_argv(), "--joint-planning", false),
            &profile(),
            None,
        );
        assert_eq!(a.option_deviations, s(&["missing --joint-planning"]));
        let mut p = profile();
        p.joint_planning = false;
        let a = analyse(&exact_argv(), &p, None);
        assert_eq!(a.option_deviations, s(&["added --joint-planning"]));
        let a = analyse(&without(&exact_argv(), "--joint-planning", false), &p, None);
        assert!(a.option_deviations.is_empty());
    }

    #[test]
    fn extra_options_are_declared_and_parsed_like_argv() {
        let a = analyse(
            &without(&exact_argv(), "--no-telemetry", false),
            &profile(),
            None,
        );
        assert_eq!(a.option_deviations, s(&["missing --no-telemetry"]));

        let mut p = profile();
        p.extra_options = s(&["--temperature", "0", "--seed=7"]);
        let mut argv = without(&exact_argv(), "--no-telemetry", false);
        argv.extend(s(&["--seed", "7", "--temperature=0"]));
        assert!(analyse(&argv, &p, None).option_deviations.is_empty());

        argv.extend(s(&["--temperature", "1"]));
        assert_eq!(
            analyse(&argv, &p, None).option_deviations,
            s(&[
                "--temperature: declared 0, forwarded 1",
                "--temperature given 2 times"
            ])
        );
    }

    #[test]
    fn builder_effort_is_declared_as_reasoning_effort() {
        let a = analyse(
            &without(&exact_argv(), "--reasoning-effort", true),
            &profile(),
            None,
        );
        assert_eq!(a.option_deviations, s(&["missing --reasoning-effort=high"]));
        assert_eq!(
            a.actual_models_and_efforts["roles"]["builder"]["effort"],
            Value::Null
        );
        // The builder's own effort flag is not declared: it is added, though it sets the effort.
        let mut argv = without(&exact_argv(), "--reasoning-effort", true);
        argv.extend(s(&["--builder-reasoning-effort", "high"]));
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.option_deviations,
            s(&[
                "missing --reasoning-effort=high",
                "added --builder-reasoning-effort=high"
            ])
        );
        assert_eq!(
            a.actual_models_and_efforts["roles"]["builder"]["effort"],
            "high"
        );
    }

    #[test]
    fn no_builder_role_declares_no_reasoning_effort() {
        let mut p = profile();
        p.roles.remove("builder");
        let argv = without(
            &without(&exact_argv(), "--builder-model", true),
            "--reasoning-effort",
            true,
        );
        let a = analyse(&argv, &p, None);
        assert!(a.option_deviations.is_empty(), "{:?}", a.option_deviations);
        assert_eq!(
            a.actual_models_and_efforts["roles"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["planner", "resolver", "reviewer"]
        );
    }

    #[test]
    fn role_model_and_effort_differences() {
        let mut argv = exact_argv();
        let i = argv.iter().position(|t| t == "--planner-model").unwrap();
        argv[i + 1] = "other".into();
        let i = argv
            .iter()
            .position(|t| t == "--reviewer-reasoning-effort")
            .unwrap();
        argv[i + 1] = "low".into();
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.option_deviations,
            s(&[
                "--planner-model: declared mp, forwarded other",
                "--reviewer-reasoning-effort: declared medium, forwarded low",
            ])
        );
        assert_eq!(
            a.actual_models_and_efforts["roles"]["planner"],
            json!({"model": "other", "effort": "medium"})
        );
        assert_eq!(
            a.actual_models_and_efforts["roles"]["reviewer"],
            json!({"model": "mr", "effort": "low"})
        );
    }

    #[test]
    fn max_iterations_declared_for_arena_only() {
        let mut argv = exact_argv();
        argv.extend(s(&["--max-iterations", "3"]));
        assert!(analyse(&argv, &profile(), Some(3))
            .option_deviations
            .is_empty());
        assert_eq!(
            analyse(&argv, &profile(), None).option_deviations,
            s(&["added --max-iterations=3"])
        );
        assert_eq!(
            analyse(&exact_argv(), &profile(), Some(3)).option_deviations,
            s(&["missing --max-iterations=3"])
        );
        let mut argv = exact_argv();
        argv.extend(s(&["--max-iterations=03"]));
        assert_eq!(
            analyse(&argv, &profile(), Some(3)).option_deviations,
            s(&["--max-iterations: declared 3, forwarded 03"])
        );
    }

    // ---- added flags, repeats, value-less flags --------------------------------------------

    #[test]
    fn added_flags_in_argv_order() {
        let mut argv = s(&["--zeta", "1"]);
        argv.extend(exact_argv());
        argv.extend(s(&["--alpha", "--beta=", "stray"]));
        assert_eq!(
            analyse(&argv, &profile(), None).option_deviations,
            s(&[
                "added --zeta=1",
                "added --alpha",
                "added --beta=",
                "added stray"
            ])
        );
    }

    #[test]
    fn repeated_flag_with_same_value_is_still_a_deviation() {
        let mut argv = exact_argv();
        argv.extend(s(&["--provider", "prov"]));
        let a = analyse(&argv, &profile(), None);
        assert_eq!(a.option_deviations, s(&["--provider given 2 times"]));
        assert_eq!(a.actual_models_and_efforts, declared_profile_value());
    }

    #[test]
    fn repeated_flag_takes_the_last_value() {
        let mut argv = exact_argv();
        argv.extend(s(&["--provider=other", "--provider", "third"]));
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.option_deviations,
            s(&[
                "--provider: declared prov, forwarded third",
                "--provider given 3 times"
            ])
        );
        assert_eq!(a.actual_models_and_efforts["provider"], "third");
        // ... and the last value decides even when it returns to the declared one.
        let mut argv = exact_argv();
        argv.extend(s(&["--provider=other", "--provider", "prov"]));
        assert_eq!(
            analyse(&argv, &profile(), None).option_deviations,
            s(&["--provider given 3 times"])
        );
    }

    #[test]
    fn repeated_value_less_flags_and_added_repeats() {
        let mut argv = exact_argv();
        argv.extend(s(&["--joint-planning", "--extra", "a", "--extra", "b"]));
        assert_eq!(
            analyse(&argv, &profile(), None).option_deviations,
            s(&[
                "--joint-planning given 2 times",
                "added --extra=b",
                "--extra given 2 times"
            ])
        );
    }

    #[test]
    fn value_less_flag_versus_declared_value() {
        // `--provider` directly followed by another flag has no value.
        let mut argv = without(&exact_argv(), "--provider", true);
        argv.insert(0, "--provider".into());
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.option_deviations,
            s(&["--provider: declared prov, forwarded (no value)"])
        );
        assert_eq!(a.actual_models_and_efforts["provider"], Value::Null);
    }

    #[test]
    fn declared_value_less_flag_forwarded_with_a_value() {
        let mut argv = without(&exact_argv(), "--joint-planning", false);
        argv.push("--joint-planning=false".into());
        assert_eq!(
            analyse(&argv, &profile(), None).option_deviations,
            s(&["--joint-planning: declared (no value), forwarded false"])
        );
        // A value-taking next token is absorbed, making it a value too.
        let mut argv = without(&exact_argv(), "--joint-planning", false);
        argv.extend(s(&["--joint-planning", "yes"]));
        assert_eq!(
            analyse(&argv, &profile(), None).option_deviations,
            s(&["--joint-planning: declared (no value), forwarded yes"])
        );
    }

    #[test]
    fn value_less_last_occurrence_sets_nothing() {
        let argv = s(&[
            "--single-model",
            "s",
            "--builder-model",
            "b",
            "--builder-model",
        ]);
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.actual_models_and_efforts["roles"]["builder"]["model"],
            "s"
        );
    }

    #[test]
    fn test_command_is_ignored_with_its_value() {
        let mut argv = exact_argv();
        argv.extend(s(&[
            "--test-command",
            "pytest -q",
            "--test-command=make check",
        ]));
        assert!(analyse(&argv, &profile(), None)
            .option_deviations
            .is_empty());
        let mut p = profile();
        p.extra_options.extend(s(&["--test-command", "tox"]));
        assert!(analyse(&exact_argv(), &p, None)
            .option_deviations
            .is_empty());
    }

    #[test]
    fn declared_flag_named_twice_is_one_flag_with_the_last_value() {
        let mut p = profile();
        p.extra_options = s(&["--no-telemetry", "--no-telemetry", "--provider", "prov2"]);
        let a = analyse(&exact_argv(), &p, None);
        assert_eq!(
            a.option_deviations,
            s(&["--provider: declared prov2, forwarded prov"])
        );
    }

    // ---- precedence --------------------------------------------------------------------------

    #[test]
    fn single_model_sets_every_role_and_is_a_deviation() {
        let argv = s(&["--provider", "prov", "--single-model", "m"]);
        let a = analyse(&argv, &profile(), None);
        for r in ["builder", "planner", "resolver", "reviewer"] {
            assert_eq!(a.actual_models_and_efforts["roles"][r]["model"], "m", "{r}");
            assert_eq!(
                a.actual_models_and_efforts["roles"][r]["effort"],
                Value::Null
            );
        }
        assert_eq!(
            a.option_deviations.last().unwrap(),
            "added --single-model=m"
        );
    }

    #[test]
    fn role_model_overrides_single_model_in_any_order() {
        let argv = s(&["--planner-model", "p", "--single-model", "m"]);
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.actual_models_and_efforts["roles"]["planner"]["model"],
            "p"
        );
        assert_eq!(
            a.actual_models_and_efforts["roles"]["builder"]["model"],
            "m"
        );
    }

    #[test]
    fn reasoning_effort_sets_every_role_unless_the_role_sets_its_own() {
        let argv = s(&[
            "--planner-reasoning-effort",
            "low",
            "--reasoning-effort",
            "high",
        ]);
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.actual_models_and_efforts["roles"]["planner"]["effort"],
            "low"
        );
        for r in ["builder", "resolver", "reviewer"] {
            assert_eq!(
                a.actual_models_and_efforts["roles"][r]["effort"], "high",
                "{r}"
            );
        }
    }

    #[test]
    fn astra_flags_set_the_resolver_over_the_global_flags() {
        let argv = s(&[
            "--astra-model",
            "a",
            "--astra-reasoning-effort",
            "xhigh",
            "--single-model",
            "m",
            "--reasoning-effort",
            "low",
        ]);
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.actual_models_and_efforts["roles"]["resolver"],
            json!({"model": "a", "effort": "xhigh"})
        );
        assert_eq!(
            a.actual_models_and_efforts["roles"]["reviewer"],
            json!({"model": "m", "effort": "low"})
        );
        let devs = a.option_deviations;
        assert!(devs.contains(&"added --astra-model=a".to_owned()));
        assert!(devs.contains(&"added --astra-reasoning-effort=xhigh".to_owned()));
    }

    #[test]
    fn resolver_flags_override_astra_flags() {
        let argv = s(&[
            "--resolver-model",
            "r",
            "--resolver-reasoning-effort",
            "medium",
            "--astra-model",
            "a",
            "--astra-reasoning-effort",
            "xhigh",
        ]);
        let a = analyse(&argv, &profile(), None);
        assert_eq!(
            a.actual_models_and_efforts["roles"]["resolver"],
            json!({"model": "r", "effort": "medium"})
        );
    }

    #[test]
    fn astra_flags_touch_no_role_but_the_resolver() {
        let mut p = profile();
        p.roles.remove("resolver");
        let argv = s(&["--astra-model", "a"]);
        let a = analyse(&argv, &p, None);
        assert_eq!(
            a.actual_models_and_efforts["roles"],
            json!({
                "builder": {"model": null, "effort": null},
                "planner": {"model": null, "effort": null},
                "reviewer": {"model": null, "effort": null},
            })
        );
    }

    #[test]
    fn actual_lists_exactly_the_declared_roles() {
        let mut argv = exact_argv();
        argv.extend(s(&["--critic-model", "c"]));
        let a = analyse(&argv, &profile(), None);
        assert_eq!(a.actual_models_and_efforts, declared_profile_value());
        assert_eq!(a.option_deviations, s(&["added --critic-model=c"]));
        let empty = DeclaredProfile::default();
        assert_eq!(
            analyse(&[], &empty, None).actual_models_and_efforts,
            json!({"provider": null, "roles": {}})
        );
    }

    #[test]
    fn declared_order_then_added_order_together() {
        let argv = s(&[
            "--extra",
            "--provider",
            "other",
            "--single-model",
            "m",
            "--provider",
            "other",
        ]);
        let mut p = profile();
        p.roles.retain(|r, _| r == "builder");
        p.joint_planning = false;
        p.extra_options.clear();
        assert_eq!(
            analyse(&argv, &p, None).option_deviations,
            s(&[
                "--provider: declared prov, forwarded other",
                "--provider given 2 times",
                "missing --reasoning-effort=high",
                "missing --builder-model=mb",
                "added --extra",
                "added --single-model=m",
            ])
        );
    }
}
