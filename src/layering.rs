//! The layering test: what the compiler cannot check about the layers.
//!
//! The layers are crates of one workspace (`ARCHITECTURE.md`), and each crate's `Cargo.toml`
//! names only the crates below it, so an arrow up does not compile. What Cargo cannot see is
//! inside a crate and below the crate's dependency list; this test reads every non-test
//! source file of the workspace as the one module tree the crates had when they were one crate
//! ([`CRATES`]: `crates/store/src/git/layout.rs` is `git::layout`, `crates/git/src/tree.rs`
//! is `git::tree`), finds each module's references to other modules (`crate::…`, `super::…`,
//! `self::…`, child-module paths and `git_ledger_<crate>::…`, in `use` trees and in code; test
//! code under `#[cfg(test)]` and test-only modules are left out, since fixtures may come from
//! any layer; a name reached through another module's top-level `use` — a `pub use`, or a
//! parent's `use` a child reaches by `super::` — counts as a use of the module it is in),
//! maps each module to a layer by [`LAYERS`], and fails when
//!
//! - two sibling modules refer to each other, directly or round a longer loop (at every level:
//!   `store` ↔ `hand` as much as `import::rows` ↔ `import::batch`); a child using its parent
//!   and a parent using its child are not cycles;
//! - a module held to a narrower list ([`ONLY`]) uses a module outside it: the ref layout is
//!   in the crate of the ledger on a ref, which may use the portfolio and the store;
//! - a module names a path of clap or gix its layer may not ([`EXTERNAL`]): the CLI depends on
//!   gix to hold a repository and an object id, but reads no objects itself;
//! - a module names a path of the workspace its layer may not ([`NOT_NAMED`]): the CLI reads no
//!   Git objects and walks no tree diff itself;
//! - a module is missing from the table;
//! - an entry of [`KNOWN`] (the violations not fixed yet) no longer is one, so the list only
//!   shrinks.
//!
//! Which layer may use which is the crates' dependency lists: the compiler's check, not this
//! test's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first; each is one crate or more (`Store` is the crate of the ledger where
/// it is kept and the importers' above it). Inside a crate, any module may use any other as
/// long as no two import each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    /// What everything uses: the crate root (`sha256_hex`, `hex`), errors and refusal reasons,
    /// strict JSON.
    Base,
    /// The specification's concepts, knowing neither Git nor where a ledger is kept:
    /// declaration, ledger and rows, row admission, portfolio, the report model, ledger diffs.
    Model,
    /// The citeability gate: independent of ledgers, it knows only the base.
    Cite,
    /// Generic Git: opening a repository, objects, revisions, trees, the definition hash,
    /// quarantine, transport. It knows nothing of ledgers.
    Git,
    /// The ledger where it is kept (a file or a ref) and everything that writes or checks it
    /// there: the `Store` and its writers (`store`, `hand`, `import`), the ledger on a ref
    /// (layout, messages and trailers, commit admission, signatures, the ref store, the
    /// declaration cache, replace refs), `sync` and the hooks.
    Store,
    /// Markdown, HTML and text renderings of a report and of a diff.
    Render,
    /// Argument parsing, one operation per command, printing.
    Cli,
}

use Layer::*;

/// Module path prefix -> layer; the longest matching prefix decides, `""` is the crate root
/// only. A new module falls under its parent's entry; a module no entry covers fails the test.
const LAYERS: &[(&str, Layer)] = &[
    ("", Base),
    ("error", Base),
    ("refusal", Base),
    ("json", Base),
    ("civil", Base),
    ("declaration", Model),
    ("ledger", Model),
    ("admission", Model),
    ("portfolio", Model),
    ("report", Model),
    ("ledger_diff", Model),
    ("cite", Cite),
    ("git", Git),
    ("git::objects", Git),
    ("git::revision", Git),
    ("git::tree", Git),
    ("git::defhash", Git),
    ("git::quarantine", Git),
    ("git::transport", Git),
    ("git::params", Git),
    ("git::worktree", Git),
    ("git::pin", Store),
    ("git::ready", Store),
    ("git::history", Store),
    ("git::read", Store),
    ("git::diff", Store),
    ("git::layout", Store),
    ("git::message", Store),
    ("git::store", Store),
    ("git::admit", Store),
    ("git::known", Store),
    ("git::signature", Store),
    ("git::allowed_signers", Store),
    ("git::sign", Store),
    ("git::replace", Store),
    ("git::decl_cache", Store),
    ("store", Store),
    ("hand", Store),
    ("import", Store),
    ("sync", Store),
    ("verify", Store),
    ("write", Store),
    ("audit", Store),
    ("witness", Store),
    ("hook", Store),
    ("render", Render),
    ("cli", Cli),
];

/// Modules held to less than their layer allows: (module, the only modules outside itself it
/// may use). The ref layout (paths, the header, the template, trailer keys) is the floor of the
/// ledger on a ref: it knows the declaration and the rows, not the portfolio or the store.
const ONLY: &[(&str, &[&str])] = &[(
    "git::layout",
    &["", "error", "refusal", "json", "declaration", "ledger"],
)];

/// Known violations, not fixed yet: (from module, to module, why it is still here). Each is an
/// edge the check would otherwise refuse (the edge that closes an import cycle). The test fails
/// when one disappears: delete its line.
const KNOWN: &[(&str, &str, &str)] = &[];

fn layer_of(module: &str) -> Option<Layer> {
    if module.is_empty() {
        return Some(Base);
    }
    LAYERS
        .iter()
        .filter(|(prefix, _)| {
            !prefix.is_empty()
                && (module == *prefix
                    || module.starts_with(prefix) && module[prefix.len()..].starts_with("::"))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, layer)| *layer)
}

/// The workspace's crates: (source directory, the module its root stands for in the one module
/// tree, the crate's name in paths). The roots of the model, the store and the CLI only declare
/// their modules and name the lower crates' (`use git_ledger_model::declaration;`), so they are
/// not read: the base's root is the tree's root.
const CRATES: &[(&str, &str, &str)] = &[
    ("crates/base/src", "", "git_ledger_base"),
    ("crates/model/src", "", "git_ledger_model"),
    ("crates/cite/src", "cite", "git_ledger_cite"),
    ("crates/git/src", "git", "git_ledger_git"),
    ("crates/store/src", "", "git_ledger_store"),
    ("crates/import/src", "import", "git_ledger_import"),
    ("crates/render/src", "render", "git_ledger_render"),
    ("src", "", "git_ledger"),
];

/// The module path of a source file in the one tree (`crates/store/src/git/layout.rs` ->
/// `git::layout`, `crates/git/src/lib.rs` -> `git`, `crates/base/src/lib.rs` -> ``).
fn module_of(src: &Path, prefix: &str, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = (!prefix.is_empty())
        .then(|| prefix.to_owned())
        .into_iter()
        .chain(
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned()),
        )
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Punct(char),
    /// `::`
    Path,
}

/// Rust source as tokens, without comments, strings, characters and lifetimes (enough to find
/// paths; not a parser).
fn tokens(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ident(c) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let word = &src[start..i];
            // Raw strings (r"…", r#"…"#, br"…") and byte strings (b"…").
            if matches!(word, "r" | "br") && i < b.len() && (b[i] == b'"' || b[i] == b'#') {
                let mut hashes = 0;
                while i < b.len() && b[i] == b'#' {
                    hashes += 1;
                    i += 1;
                }
                if i < b.len() && b[i] == b'"' {
                    let end: Vec<u8> = std::iter::once(b'"')
                        .chain(std::iter::repeat_n(b'#', hashes))
                        .collect();
                    i += 1;
                    while i < b.len() && !b[i..].starts_with(&end) {
                        i += 1;
                    }
                    i += end.len();
                    continue;
                }
            }
            if word == "b" && i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                continue; // the string or character that follows is skipped next
            }
            out.push(Tok::Ident(word.to_owned()));
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == b'\'' {
            // A character ('x', '\n', '\u{..}') or a lifetime ('a).
            if i + 2 < b.len() && b[i + 1] == b'\\' {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else {
                let ch_len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(i + 1 + ch_len) == Some(&b'\'') {
                    i += 2 + ch_len;
                } else {
                    i += 1;
                    while i < b.len() && ident(b[i]) {
                        i += 1;
                    }
                }
            }
        } else if b[i..].starts_with(b"::") {
            out.push(Tok::Path);
            i += 2;
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push(Tok::Punct(ch));
            i += ch.len_utf8();
        }
    }
    out
}

fn is_ident(t: Option<&Tok>, word: &str) -> bool {
    matches!(t, Some(Tok::Ident(w)) if w == word)
}

/// The index after the item starting at `i` (the first `;` at depth 0, or the `}` closing a
/// block opened at depth 0).
fn skip_item(toks: &[Tok], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']') => depth -= 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            Tok::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// The index after the bracketed group opening at `i`.
fn skip_group(toks: &[Tok], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// `#[cfg(test)]` at `i`: the index after it.
fn cfg_test(toks: &[Tok], i: usize) -> Option<usize> {
    let want = [
        Tok::Punct('#'),
        Tok::Punct('['),
        Tok::Ident("cfg".into()),
        Tok::Punct('('),
        Tok::Ident("test".into()),
        Tok::Punct(')'),
        Tok::Punct(']'),
    ];
    (toks.get(i..i + want.len()) == Some(&want[..])).then_some(i + want.len())
}

/// Paths of a `use` tree or an expression path starting at `i`, each as its segments; returns
/// the index after it.
fn paths(toks: &[Tok], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut segs = prefix.to_vec();
    loop {
        match toks.get(i) {
            Some(Tok::Punct('{')) => {
                i += 1;
                while i < toks.len() && toks[i] != Tok::Punct('}') {
                    i = paths(toks, i, &segs, out);
                    if toks.get(i) == Some(&Tok::Punct(',')) {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Some(Tok::Ident(w)) => {
                segs.push(w.clone());
                i += 1;
                if toks.get(i) == Some(&Tok::Path) {
                    i += 1;
                    continue;
                }
                out.push(segs);
                return i;
            }
            Some(Tok::Punct('*')) => {
                out.push(segs);
                return i + 1;
            }
            _ => {
                out.push(segs);
                return i;
            }
        }
    }
}

/// The module a path names: the longest prefix of `segments` (read from `base`) that is a module.
fn resolve(modules: &BTreeSet<String>, base: &[String], segments: &[String]) -> String {
    for k in (0..=segments.len()).rev() {
        let candidate: Vec<&str> = base
            .iter()
            .chain(&segments[..k])
            .map(String::as_str)
            .collect();
        let candidate = candidate.join("::");
        if modules.contains(&candidate) {
            return candidate;
        }
    }
    base.join("::")
}

/// What each non-test module refers to.
#[derive(Default)]
struct Refs {
    /// The other modules of the crate it uses.
    modules: BTreeMap<String, BTreeSet<String>>,
    /// The paths it names in the crates [`EXTERNAL`] watches (`gix::Repository`, `clap::Args`).
    external: BTreeMap<String, BTreeSet<String>>,
    /// The paths of the crate it names, from the crate root (`git::admit::tree_changes`), for
    /// [`NOT_NAMED`].
    items: BTreeMap<String, BTreeSet<String>>,
}

/// Paths of the crate a layer may not name, though its layer may use the module they are in:
/// (layer, path prefixes). The CLI parses arguments, calls one operation and prints, so it
/// reads no Git objects itself (`git::objects`, `git::tree`) and walks no commit's tree diff
/// or row files (`git::admit`'s `tree_changes`, `TreeChange`, `read_row`:
/// that is `git::diff`'s, `git::history`'s and `git::read`'s work), and decides no ledger
/// state's admission and classifies no row (`git::read`'s `admitted_state`, `state_at`, and the
/// row reads `show` and `report` do are `git::read::show_at`'s and `report_at`'s;
/// `portfolio::classify` of a written row is `write::Applied`'s). The validator itself,
/// `git::admit::Admission`, is one operation (`verify` runs a chain through it). A name
/// reached through another module's re-export is checked as the path written, not the path it
/// stands for (the module edges see through re-exports; these names do not).
const NOT_NAMED: &[(Layer, &[&str])] = &[(
    Cli,
    &[
        "git::objects",
        "git::tree",
        "git::admit::tree_changes",
        "git::admit::TreeChange",
        "git::admit::read_row",
        "git::read::admitted",
        "git::read::admitted_state",
        "git::read::state_at",
        "git::store::kept_at",
        "git::store::write_ledger_at",
        "portfolio::classify",
    ],
)];

/// Crates only some layers may name: (crate, the layers that may name any of its paths, the
/// paths every other layer may name). Nothing below the CLI knows clap; the model knows no Git;
/// the CLI reads no Git objects itself (it may hold a repository and an object id, and calls
/// the library).
const EXTERNAL: &[(&str, &[Layer], &[&str])] = &[
    ("clap", &[Cli], &[]),
    ("gix", &[Git, Store], &["gix::Repository", "gix::ObjectId"]),
];

/// Each non-test module's references to other modules and to the crates [`EXTERNAL`] watches.
fn references() -> Refs {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // (file, its module, the module its crate's root stands for)
    let mut files: Vec<(PathBuf, String, String)> = Vec::new();
    for (dir, prefix, _) in CRATES {
        let src = root.join(dir);
        let mut found = Vec::new();
        rust_files(&src, &mut found);
        for f in found {
            let is_root = f == src.join("lib.rs") || f == src.join("main.rs");
            if is_root && prefix.is_empty() && *dir != "crates/base/src" {
                continue;
            }
            // Test code whose `#[cfg(…)]` is on a root not read, or not `cfg(test)` alone
            // (the `test-support` helpers).
            if f.ends_with("layering.rs") || f.ends_with("testutil.rs") {
                continue;
            }
            let module = module_of(&src, prefix, &f);
            files.push((f, module, (*prefix).to_owned()));
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|(_, m, _)| m.clone()).collect();
    let mut test_only = BTreeSet::new();
    let mut refs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut external: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut items: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // Names a module's top-level `use` items make (a `pub use` for every module, any `use` for
    // its children): the path another module names (`ledger::Row`) and the path it stands for
    // (`ledger::row::Row`), with the module that holds it.
    let mut reexports: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (file, module, crate_root) in &files {
        let module = module.clone();
        let crate_root: Vec<String> = if crate_root.is_empty() {
            Vec::new()
        } else {
            crate_root.split("::").map(str::to_owned).collect()
        };
        let me: Vec<String> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").map(str::to_owned).collect()
        };
        let toks = tokens(&std::fs::read_to_string(file).unwrap());
        let children: BTreeSet<&str> = modules
            .iter()
            .filter_map(|m| {
                let rest = if module.is_empty() {
                    m.as_str()
                } else {
                    m.strip_prefix(&module)?.strip_prefix("::")?
                };
                (!rest.is_empty() && !rest.contains("::")).then_some(rest)
            })
            .collect();
        let out = refs.entry(module.clone()).or_default();
        let ext = external.entry(module.clone()).or_default();
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut depth = 0usize;
        // Inside a top-level `use …;` item: its names are visible to other modules (`pub use`)
        // and to this module's children (`super::X`), which name the item through it.
        let mut in_use = false;
        let mut i = 0;
        while i < toks.len() {
            if toks[i] == Tok::Punct(';') {
                in_use = false;
            }
            if is_ident(toks.get(i), "use") && depth == 0 {
                in_use = true;
            }
            if let Some(after) = cfg_test(&toks, i) {
                let mut j = after;
                while toks.get(j) == Some(&Tok::Punct('#')) {
                    j = skip_group(&toks, j + 1);
                }
                let k = if is_ident(toks.get(j), "pub") {
                    j + 1
                } else {
                    j
                };
                let k = if toks.get(k) == Some(&Tok::Punct('(')) {
                    skip_group(&toks, k)
                } else {
                    k
                };
                if is_ident(toks.get(k), "mod") {
                    if let Some(Tok::Ident(name)) = toks.get(k + 1) {
                        let child = if module.is_empty() {
                            name.clone()
                        } else {
                            format!("{module}::{name}")
                        };
                        test_only.insert(child);
                    }
                }
                i = skip_item(&toks, j);
                continue;
            }
            let prev_is_path = i > 0 && toks[i - 1] == Tok::Path;
            let next_is_path = toks.get(i + 1) == Some(&Tok::Path);
            match &toks[i] {
                // `mod x;` declares a child, it does not use it.
                Tok::Ident(w) if w == "mod" => {
                    if let (Some(Tok::Ident(name)), Some(Tok::Punct('{'))) =
                        (toks.get(i + 1), toks.get(i + 2))
                    {
                        // An inline module: `super` inside it is this file's module.
                        inline.push((name.clone(), depth));
                        depth += 1;
                    }
                    i += 3;
                }
                Tok::Punct('{') => {
                    depth += 1;
                    i += 1;
                }
                Tok::Punct('}') => {
                    depth -= 1;
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                    i += 1;
                }
                Tok::Ident(w)
                    if next_is_path
                        && !prev_is_path
                        && EXTERNAL.iter().any(|(krate, _, _)| krate == w) =>
                {
                    let mut found = Vec::new();
                    i = paths(&toks, i, &[], &mut found);
                    ext.extend(found.iter().map(|p| p.join("::")));
                }
                Tok::Ident(w)
                    if next_is_path
                        && !prev_is_path
                        && (w == "crate"
                            || w.starts_with("git_ledger")
                            || w == "super"
                            || w == "self"
                            || children.contains(w.as_str())) =>
                {
                    let mut found = Vec::new();
                    i = paths(&toks, i, &[], &mut found);
                    let me: Vec<String> = me
                        .iter()
                        .cloned()
                        .chain(inline.iter().map(|(n, _)| n.clone()))
                        .collect();
                    for p in found {
                        let (base, rest): (Vec<String>, &[String]) = match p[0].as_str() {
                            // `crate::` is the crate's root, unless it names a lower crate's
                            // module through the root's `use` (`crate::error` in `git`).
                            "crate" => {
                                let lower = p.get(1).is_some_and(|first| {
                                    modules.contains(first)
                                        && !modules.contains(
                                            &crate_root
                                                .iter()
                                                .chain([first])
                                                .cloned()
                                                .collect::<Vec<_>>()
                                                .join("::"),
                                        )
                                });
                                if lower {
                                    (Vec::new(), &p[1..])
                                } else {
                                    (crate_root.clone(), &p[1..])
                                }
                            }
                            krate if krate.starts_with("git_ledger") => {
                                let prefix = CRATES
                                    .iter()
                                    .find(|(_, _, name)| *name == krate)
                                    .map_or("", |(_, prefix, _)| prefix);
                                let base = if prefix.is_empty() {
                                    Vec::new()
                                } else {
                                    vec![prefix.to_owned()]
                                };
                                (base, &p[1..])
                            }
                            "self" => (me.clone(), &p[1..]),
                            "super" => {
                                let ups = p.iter().take_while(|s| *s == "super").count();
                                (me[..me.len() - ups].to_vec(), &p[ups..])
                            }
                            _ => (me.clone(), &p[..]),
                        };
                        let rest: Vec<String> =
                            rest.iter().filter(|s| *s != "self").cloned().collect();
                        let target = resolve(&modules, &base, &rest);
                        let item: Vec<&str> =
                            base.iter().chain(&rest).map(String::as_str).collect();
                        if in_use && depth == 0 {
                            if let Some(name) = rest.last() {
                                let shown = if module.is_empty() {
                                    name.clone()
                                } else {
                                    format!("{module}::{name}")
                                };
                                reexports.insert(shown, (item.join("::"), target.clone()));
                            }
                        }
                        items
                            .entry(module.clone())
                            .or_default()
                            .insert(item.join("::"));
                        if target != module {
                            out.insert(target);
                        }
                    }
                }
                _ => i += 1,
            }
        }
    }
    // A path that names a re-exported item uses the module the item is in, through each
    // `use` on the way (`ledger::Row` is `ledger::row::Row`): an edge a parent's re-export
    // would hide from the module table.
    for (module, paths) in &items {
        let out = refs.entry(module.clone()).or_default();
        for path in paths {
            let mut at = path.clone();
            for _ in 0..8 {
                let Some((next, holder)) = reexports.get(&at) else {
                    break;
                };
                if holder != module && !is_within(module, holder) {
                    out.insert(holder.clone());
                }
                at = next.clone();
            }
        }
    }
    // A test-only module's children are test-only too.
    let is_test = |m: &str| test_only.iter().any(|t| is_within(m, t) && !t.is_empty());
    refs.retain(|m, _| !is_test(m));
    external.retain(|m, _| !is_test(m));
    items.retain(|m, _| !is_test(m));
    Refs {
        modules: refs,
        external,
        items,
    }
}

fn is_within(module: &str, ancestor: &str) -> bool {
    ancestor.is_empty() || module == ancestor || module.starts_with(&format!("{ancestor}::"))
}

/// The sibling modules an edge joins (the children of the two modules' nearest common ancestor
/// that hold them), or `None` when one holds the other.
fn siblings(from: &str, to: &str) -> Option<(String, String)> {
    if is_within(from, to) || is_within(to, from) {
        return None;
    }
    let a: Vec<&str> = from.split("::").collect();
    let b: Vec<&str> = to.split("::").collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    Some((a[..=common].join("::"), b[..=common].join("::")))
}

/// The sibling pairs that lie on an import cycle of the given edges.
fn cycles(edges: &BTreeSet<(String, String)>) -> BTreeSet<(String, String)> {
    let lifted: BTreeSet<(String, String)> =
        edges.iter().filter_map(|(f, t)| siblings(f, t)).collect();
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(n) = todo.pop() {
            if n == to {
                return true;
            }
            if seen.insert(n.clone()) {
                todo.extend(
                    lifted
                        .iter()
                        .filter(|(f, _)| *f == n)
                        .map(|(_, t)| t.clone()),
                );
            }
        }
        false
    };
    lifted
        .iter()
        .filter(|(f, t)| reaches(t, f))
        .cloned()
        .collect()
}

#[test]
fn layers_point_one_way() {
    let Refs {
        modules: refs,
        external,
        items,
    } = references();
    let mut problems = Vec::new();
    for (module, paths) in &items {
        let Some(layer) = layer_of(module) else {
            continue; // reported below
        };
        for (_, prefixes) in NOT_NAMED.iter().filter(|(l, _)| *l == layer) {
            for path in paths
                .iter()
                .filter(|p| prefixes.iter().any(|x| is_within(p, x)))
            {
                problems.push(format!("{module} ({layer:?}) names {path}"));
            }
        }
    }
    for (module, paths) in &external {
        for path in paths {
            let krate = path.split("::").next().unwrap_or_default();
            let Some((_, anywhere, shared)) = EXTERNAL.iter().find(|(k, _, _)| *k == krate) else {
                continue;
            };
            let may = layer_of(module).is_some_and(|l| anywhere.contains(&l))
                || shared.contains(&path.as_str());
            if !may {
                problems.push(format!("{module} names {path}"));
            }
        }
    }
    let mut edges = BTreeSet::new();
    for (from, tos) in &refs {
        if layer_of(from).is_none() {
            problems.push(format!("{from}: no layer (add it to LAYERS)"));
            continue;
        }
        for to in tos {
            edges.insert((from.clone(), to.clone()));
            if let Some((_, only)) = ONLY.iter().find(|(m, _)| m == from) {
                // A child of a listed module is that module's (the crate root, "", only itself).
                let listed = only
                    .iter()
                    .any(|o| *o == to.as_str() || (!o.is_empty() && is_within(to, o)));
                if !listed && !is_within(to, from) {
                    problems.push(format!("{from} may use only {only:?}, but uses {to}"));
                }
            }
        }
    }
    let unknown: BTreeSet<(String, String)> = edges
        .iter()
        .filter(|(f, t)| !KNOWN.iter().any(|(kf, kt, _)| kf == f && kt == t))
        .cloned()
        .collect();
    for (a, b) in cycles(&unknown) {
        let through: Vec<String> = unknown
            .iter()
            .filter(|(f, t)| siblings(f, t) == Some((a.clone(), b.clone())))
            .map(|(f, t)| format!("{f} -> {t}"))
            .collect();
        problems.push(format!("import cycle: {a} -> {b} ({})", through.join(", ")));
    }
    for (from, to, why) in KNOWN {
        let edge = (from.to_string(), to.to_string());
        let still_wrong = edges.contains(&edge) && {
            let mut with = unknown.clone();
            with.insert(edge.clone());
            siblings(from, to).is_some_and(|s| cycles(&with).contains(&s))
        };
        if !still_wrong {
            problems.push(format!(
                "KNOWN lists {from} -> {to} ({why}), which is no longer a violation: delete it"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "layering:\n  {}",
        problems.join("\n  ")
    );
}

/// A name reached through a parent's `use` (`super::Ledger` in `ledger::fast`, which
/// `ledger.rs` re-exports from `ledger::document`) is a use of the module it is in: the edge a
/// re-export would hide is seen (it once hid a `document` ↔ `fast` cycle).
#[test]
fn a_name_reached_through_a_reexport_counts_as_its_module() {
    let refs = references();
    assert!(
        refs.modules["ledger::fast"].contains("ledger::document"),
        "{:?}",
        refs.modules["ledger::fast"]
    );
    assert!(!refs.modules["ledger::document"].contains("ledger::fast"));
}

#[test]
fn the_reader_finds_paths_in_use_trees_and_code() {
    let toks = tokens(
        "use crate::{a::b, c::{d, e::*}}; // crate::f\nfn x() { let s = \"crate::g\"; super::h::i(); let c = '\\''; let l: &'a str; }",
    );
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if matches!(&toks[i], Tok::Ident(w) if w == "crate" || w == "super")
            && toks.get(i + 1) == Some(&Tok::Path)
        {
            i = paths(&toks, i, &[], &mut found);
        } else {
            i += 1;
        }
    }
    let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        ["crate::a::b", "crate::c::d", "crate::c::e", "super::h::i"]
    );
    assert_eq!(
        siblings("import::rows", "import::batch"),
        Some(("import::rows".into(), "import::batch".into()))
    );
    assert_eq!(siblings("git::layout", "git"), None);
    assert_eq!(
        siblings("git::message", "store"),
        Some(("git".into(), "store".into()))
    );
}
