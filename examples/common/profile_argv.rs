//! The flags a harness writes for the declared profile (the declared configuration of
//! `import.md`), shared by `make_examples` and `synth`.

use git_ledger::declaration::Declaration;

/// The declared profile's flags, with `extra` appended.
pub fn declared_argv(decl: &Declaration, extra: &[&str]) -> Vec<String> {
    let p = &decl.profile;
    let mut argv = vec![
        "--provider".to_owned(),
        p.provider.clone().unwrap_or_default(),
    ];
    if p.joint_planning {
        argv.push("--joint-planning".into());
    }
    argv.extend(p.extra_options.iter().cloned());
    if let Some(b) = p.roles.get("builder") {
        argv.push("--reasoning-effort".into());
        argv.push(b.effort.clone().unwrap_or_default());
    }
    for (role, spec) in &p.roles {
        argv.push(format!("--{role}-model"));
        argv.push(spec.model.clone());
    }
    for (role, spec) in p.roles.iter().filter(|(r, _)| *r != "builder") {
        argv.push(format!("--{role}-reasoning-effort"));
        argv.push(spec.effort.clone().unwrap_or_default());
    }
    argv.extend(extra.iter().map(|s| s.to_string()));
    argv
}
