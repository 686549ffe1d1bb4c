//! No dead link in the documentation: every relative link (and `#anchor`) in `README.md`,
//! `ARCHITECTURE.md`, `CHANGELOG.md`, `docs/**/*.md` and the packages' READMEs must name a file
//! or directory of the repository, and an anchor a heading of its page (GitHub's heading ids).
//! Every dead link is reported at once, each with its file and line.
//!
//! The documentation stands alone: no link leads outside the repository, and no page, source
//! comment, docstring, hook or schema names a path outside it (a sibling checkout, the
//! document set the tool was first built from), a document by a Markdown file name that no file
//! of the repository has, or a numbered section of one (a section sign).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::common::project_root;

/// Link targets that other branches create, allowed to be missing until they land. The merger
/// empties this list once they are in.
const NOT_YET_HERE: &[&str] = &[];

/// The Markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let root = project_root();
    let mut out: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"]
        .iter()
        .map(|f| root.join(f))
        .filter(|p| p.is_file())
        .collect();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    walk(&root.join("docs"), &mut out);
    // The other READMEs a user or contributor reads (the Inspect hook's, the Harbor plugin's,
    // the example campaign's, the harness's); not the tasks' own files, which are inputs.
    for f in [
        "inspect-hook/README.md",
        "inspect-example/README.md",
        "harbor-plugin/README.md",
        "arena/README.md",
        "arena/runner-tools/README.md",
    ] {
        let p = root.join(f);
        assert!(p.is_file(), "{f} is gone: update the list of documents");
        out.push(p);
    }
    out
}

/// Every link target of a Markdown text with its 1-based line: inline links and images
/// (`[text](target)`, `![alt](target)`) and reference definitions (`[name]: target`), outside
/// fenced code blocks and code spans.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Reference definitions.
        if let Some(rest) = t.strip_prefix('[') {
            if let Some(close) = rest.find("]: ") {
                let target = rest[close + 3..].split_whitespace().next().unwrap_or("");
                out.push((n + 1, target.to_owned()));
                continue;
            }
        }
        // Remove code spans.
        let mut plain = String::with_capacity(line.len());
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
                plain.push(' ');
            } else if !in_code {
                plain.push(c);
            } else {
                plain.push(' ');
            }
        }
        let b = plain.as_bytes();
        let mut i = 0;
        while let Some(at) = plain[i..].find("](") {
            let start = i + at + 2;
            let mut depth = 0;
            let mut end = start;
            while end < b.len() {
                match b[end] {
                    b'(' => depth += 1,
                    b')' if depth == 0 => break,
                    b')' => depth -= 1,
                    _ => {}
                }
                end += 1;
            }
            let target = plain[start..end].split_whitespace().next().unwrap_or("");
            if !target.is_empty() {
                out.push((n + 1, target.to_owned()));
            }
            i = end.min(b.len());
            if i >= b.len() {
                break;
            }
        }
    }
    out
}

/// GitHub's id of a heading: lower case, punctuation other than `-` and `_` removed, spaces
/// as `-`; a repeated heading gets `-1`, `-2`, ….
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !t.starts_with('#') {
            continue;
        }
        let title = t.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let mut slug = String::new();
        for c in title.trim().chars() {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                slug.extend(c.to_lowercase());
            } else if c == ' ' {
                slug.push('-');
            }
        }
        let mut id = slug.clone();
        let mut k = 1;
        while seen.contains(&id) {
            id = format!("{slug}-{k}");
            k += 1;
        }
        seen.insert(id);
    }
    seen
}

/// Every dead link of the documents, as `file:line: target (why)`.
fn dead_links(root: &Path, docs: &[PathBuf]) -> Vec<String> {
    let mut dead = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(doc).unwrap();
        let rel_doc = doc.strip_prefix(root).unwrap_or(doc).display().to_string();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                doc.clone()
            } else if let Some(abs) = path.strip_prefix('/') {
                root.join(abs)
            } else {
                doc.parent().unwrap().join(path)
            };
            let normal = normalise(&file);
            if !normal.starts_with(root) {
                dead.push(format!(
                    "{rel_doc}:{line}: {target} (outside the repository: the documentation stands alone)"
                ));
                continue;
            }
            let rel = normal
                .strip_prefix(root)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| normal.display().to_string());
            let rel = rel.trim_end_matches('/').to_owned();
            if !normal.exists() {
                if !NOT_YET_HERE.contains(&rel.as_str()) {
                    dead.push(format!("{rel_doc}:{line}: {target} (no such file: {rel})"));
                }
                continue;
            }
            if let Some(a) = anchor {
                if normal.extension().is_some_and(|x| x == "md") && normal.is_file() {
                    let page = std::fs::read_to_string(&normal).unwrap();
                    if !anchors(&page).contains(a) {
                        dead.push(format!(
                            "{rel_doc}:{line}: {target} (no heading #{a} in {rel})"
                        ));
                    }
                }
            }
        }
    }
    dead
}

/// `p` with `.` and `..` components resolved lexically.
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn no_relative_link_in_the_documentation_is_dead() {
    let root = project_root();
    let docs = documents();
    assert!(
        docs.len() >= 10,
        "only {} documents found: {docs:?}",
        docs.len()
    );
    let dead = dead_links(&root, &docs);
    assert!(
        dead.is_empty(),
        "{} dead links in the documentation:\n{}",
        dead.len(),
        dead.join("\n")
    );
}

#[test]
fn the_link_check_finds_dead_links_and_anchors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("docs/sub")).unwrap();
    std::fs::write(
        root.join("docs/sub/there.md"),
        "# There\n\n## Two words, here\n",
    )
    .unwrap();
    let page = "# Page\n\n[ok](sub/there.md) [ok](sub/there.md#two-words-here) [ok](#page)\n\
                [dead](sub/missing.md) and ![img](../nope.png)\n\
                [bad anchor](sub/there.md#three) [bad](#nowhere)\n\
                `[in code](missing.md)`\n```\n[in a block](missing.md)\n```\n\
                [external](https://example.com/x.md)\n[ref]: gone.md\n";
    std::fs::write(root.join("docs/page.md"), page).unwrap();
    let dead = dead_links(root, &[root.join("docs/page.md")]);
    assert_eq!(
        dead,
        [
            "docs/page.md:4: sub/missing.md (no such file: docs/sub/missing.md)",
            "docs/page.md:4: ../nope.png (no such file: nope.png)",
            "docs/page.md:5: sub/there.md#three (no heading #three in docs/sub/there.md)",
            "docs/page.md:5: #nowhere (no heading #nowhere in docs/page.md)",
            "docs/page.md:11: gone.md (no such file: docs/gone.md)",
        ]
    );
}

/// The files of the repository a user or contributor reads, relative to the root: every file
/// Git tracks or would add (`git ls-files --cached --others --exclude-standard`), without the
/// test data and fuzz seeds (inputs, not documentation).
fn repository_files(root: &Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .current_dir(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .expect("git ls-files");
    assert!(out.status.success(), "git ls-files failed");
    let mut files: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|f| !f.is_empty())
        .filter(|f| !f.starts_with("tests/data/") && !f.starts_with("tests/fuzz_corpus/"))
        .filter(|f| root.join(f).is_file())
        .map(str::to_owned)
        .collect();
    files.sort();
    files.dedup();
    files
}

/// What kind of text a file is, for [`outside_references`]: a Markdown page (checked outside
/// code blocks), a source file (checked in its comments and docstrings), a JSON Schema (its
/// descriptions), or neither.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Page,
    /// Comments start with `//` (Rust).
    Slashes,
    /// Comments start with `#`; `"""` docstrings are comments too (Python, shell, the hooks).
    Hash,
    Schema,
}

fn kind(rel: &str) -> Option<Kind> {
    let ext = rel.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "md" => Some(Kind::Page),
        "rs" => Some(Kind::Slashes),
        "py" | "sh" | "toml" | "cfg" | "yml" | "yaml" => Some(Kind::Hash),
        "json" if rel.starts_with("docs/schemas/") => Some(Kind::Schema),
        _ if rel.starts_with("hooks/") || rel.starts_with(".ci/") => Some(Kind::Hash),
        _ => None,
    }
}

/// Paths that lead outside the repository, as a page or comment would spell them (built here
/// so that this file does not name them itself).
fn outside_needles() -> Vec<String> {
    let shared = ["sha", "red"].concat();
    vec![
        format!("../{shared}"),
        format!("{shared}/spec"),
        format!("/work/{shared}"),
        format!("../{}", ["se", "eds"].concat()),
    ]
}

/// The names of every Markdown file of the repository (outside `target/` and `.git/`).
fn markdown_names(root: &Path) -> HashSet<String> {
    fn walk(dir: &Path, out: &mut HashSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "target" && name != ".git" {
                    walk(&p, out);
                }
            } else if name.ends_with(".md") {
                out.insert(name);
            }
        }
    }
    let mut out = HashSet::new();
    walk(root, &mut out);
    out
}

/// The prose of each line of a text of `kind`, as (1-based line, prose): a page's lines outside
/// fenced code blocks; a source file's comments and docstrings; a schema's lines.
fn prose(text: &str, kind: Kind) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut fenced, mut docstring) = (false, false);
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let part = match kind {
            Kind::Page => {
                if t.starts_with("```") || t.starts_with("~~~") {
                    fenced = !fenced;
                    continue;
                }
                (!fenced).then_some(line)
            }
            Kind::Schema => Some(line),
            Kind::Slashes => line.find("//").map(|i| &line[i..]),
            Kind::Hash => {
                let quotes = line.matches("\"\"\"").count();
                let in_doc = docstring || quotes > 0;
                if quotes % 2 == 1 {
                    docstring = !docstring;
                }
                if in_doc {
                    Some(line)
                } else {
                    line.find('#').map(|i| &line[i..])
                }
            }
        };
        if let Some(p) = part {
            out.push((n + 1, p.to_owned()));
        }
    }
    out
}

/// The words that point at a specification kept outside the repository rather than at a page of
/// it (built here so that this file does not use them itself).
fn outside_words() -> Vec<String> {
    vec![
        format!("the {}", ["sp", "ec"].concat()),
        format!("{} set", ["sp", "ec"].concat()),
    ]
}

/// Every reference of a text of `kind` to something outside the repository, as `(line, what)`:
/// a path from [`outside_needles`] anywhere (code included); a section sign anywhere (the
/// repository's pages are named by page and rule or heading, never by the numbered sections
/// of an outside document); and in its prose ([`prose`]) a Markdown file name that no file of
/// the repository has, or words of [`outside_words`].
fn outside_references(text: &str, kind: Kind, names: &HashSet<String>) -> Vec<(usize, String)> {
    let needles = outside_needles();
    let section = '\u{a7}';
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for needle in &needles {
            if line.contains(needle.as_str()) {
                out.push((n + 1, format!("names {needle}")));
            }
        }
        if line.contains(section) {
            out.push((n + 1, format!("has a section sign ({section})")));
        }
    }
    let words = outside_words();
    for (n, line) in prose(text, kind) {
        let lower = line.to_lowercase();
        for w in &words {
            let hit = lower.match_indices(w.as_str()).any(|(i, _)| {
                let before = lower[..i].chars().next_back();
                let after = lower[i + w.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric())
                    && !after.is_some_and(|c| c.is_alphanumeric())
            });
            if hit {
                out.push((n, format!("says {w:?}: name the page of the repository")));
            }
        }
        let is_name = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
        let mut rest = line.as_str();
        while let Some(at) = rest.find(".md") {
            let head = &rest[..at];
            let start = head
                .char_indices()
                .rev()
                .take_while(|&(_, c)| is_name(c))
                .last()
                .map_or(at, |(i, _)| i);
            let name = format!("{}.md", &head[start..]);
            let tail = &rest[at + 3..];
            let ends = !tail
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            if ends && name.len() > 3 && !names.contains(&name) {
                out.push((
                    n,
                    format!("names `{name}`, which no file of the repository is"),
                ));
            }
            rest = tail;
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn no_page_or_comment_points_outside_the_repository() {
    let root = project_root();
    let names = markdown_names(&root);
    let files = repository_files(&root);
    let mut found = Vec::new();
    let mut checked = 0;
    for rel in &files {
        // This file spells what it looks for (in its own tests' inputs).
        if rel == "tests/cli/links.rs" {
            continue;
        }
        let Some(kind) = kind(rel) else { continue };
        let Ok(text) = std::fs::read_to_string(root.join(rel)) else {
            continue;
        };
        checked += 1;
        for (line, what) in outside_references(&text, kind, &names) {
            found.push(format!("{rel}:{line}: {what}"));
        }
    }
    for must in [
        "README.md",
        "ARCHITECTURE.md",
        "docs/guide/README.md",
        "src/lib.rs",
        "hooks/pre-commit",
        "inspect-hook/src/git_ledger_inspect/_cli.py",
        "docs/schemas/refusal.schema.json",
    ] {
        assert!(files.iter().any(|f| f == must), "{must} is not checked");
    }
    assert!(checked > 100, "only {checked} files checked");
    assert!(
        found.is_empty(),
        "{} references outside the repository (move what they point to into docs/reference/ and name its page):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_outside_check_finds_links_paths_and_bare_names() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/here.md"), "# Here\n").unwrap();
    let shared = ["sha", "red"].concat();
    let (spec, section) = (["sp", "ec"].concat(), '\u{a7}');
    let page = format!(
        "# Page\n\n[out](../../{shared}/spec/git.md) [in](here.md)\n\
         The rules are in `../{shared}/spec/` and `git.md`, not `here.md` (docs/here.md).\n\
         As workflow.md {section}7 and the {spec}'s order say; the {spec}ial case is fine.\n\
         ```\n$ cat report.md\n```\n"
    );
    std::fs::write(root.join("docs/page.md"), &page).unwrap();
    let dead = dead_links(&root, &[root.join("docs/page.md")]);
    assert_eq!(
        dead,
        [format!(
            "docs/page.md:3: ../../{shared}/spec/git.md (outside the repository: the documentation stands alone)"
        )]
    );
    let names = markdown_names(&root);
    let no_file = |n: &str| format!("names `{n}`, which no file of the repository is");
    let says = format!("says \"the {spec}\": name the page of the repository");
    assert_eq!(
        outside_references(&page, Kind::Page, &names),
        [
            (3, format!("names ../{shared}")),
            (3, no_file("git.md")),
            (3, format!("names {shared}/spec")),
            (4, format!("names ../{shared}")),
            (4, no_file("git.md")),
            (4, format!("names {shared}/spec")),
            (5, format!("has a section sign ({section})")),
            (5, no_file("workflow.md")),
            (5, says.clone()),
        ]
    );
    // In source files only comments and docstrings are prose; a section sign counts anywhere.
    let rust = format!(
        "//! See review.md {section}1.\nlet page = \"notes/todo.md\"; // the {spec}'s list\n\
         let s = \"{section}\";\n"
    );
    assert_eq!(
        outside_references(&rust, Kind::Slashes, &names),
        [
            (1, format!("has a section sign ({section})")),
            (1, no_file("review.md")),
            (2, says.clone()),
            (3, format!("has a section sign ({section})")),
        ]
    );
    let python = format!(
        "\"\"\"The way to run it (workflow.md {section}1).\n\nMore of the docstring: git.md.\n\"\"\"\n\
         x = \"todo.md\"  # here.md is fine\n"
    );
    assert_eq!(
        outside_references(&python, Kind::Hash, &names),
        [
            (1, format!("has a section sign ({section})")),
            (1, no_file("workflow.md")),
            (3, no_file("git.md")),
        ]
    );
    assert_eq!(kind("hooks/pre-commit"), Some(Kind::Hash));
    assert_eq!(kind("docs/schemas/x.schema.json"), Some(Kind::Schema));
    assert_eq!(kind("tests/data/x.json"), None);
}

#[test]
fn heading_ids_follow_github() {
    let a = anchors("# The ledger and its report\n## `pin` and `check`\n## Hooks\n## Hooks\n");
    for id in [
        "the-ledger-and-its-report",
        "pin-and-check",
        "hooks",
        "hooks-1",
    ] {
        assert!(a.contains(id), "{id} not in {a:?}");
    }
}

/// Every `docs/….md` path a text names.
fn named_docs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("docs/") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
            .unwrap_or(tail.len());
        let path = tail[..end].trim_end_matches('.');
        if path.ends_with(".md") {
            out.push(path.to_owned());
        }
        rest = &tail[end.max(5)..];
    }
    out
}

#[test]
fn the_manual_and_help_name_only_documents_that_exist() {
    let root = project_root();
    let dir = tempfile::tempdir().unwrap();
    crate::common::ledger(
        dir.path(),
        &["install-man", "--dir", dir.path().to_str().unwrap()],
    )
    .ok();
    let mut text = String::new();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "1") {
            // roff writes hyphens as `\-`.
            text.push_str(&std::fs::read_to_string(&p).unwrap().replace("\\-", "-"));
        }
    }
    text.push_str(&crate::common::ledger(dir.path(), &["report", "--help"]).stdout);
    let named = named_docs(&text);
    assert!(
        named.iter().any(|p| p == "docs/guide/README.md"),
        "the manual does not point at the guide: {named:?}"
    );
    assert!(
        named.iter().any(|p| p == "docs/reference/report-json.md"),
        "report --help does not point at the report's fields: {named:?}"
    );
    let missing: Vec<&String> = named
        .iter()
        .filter(|p| !root.join(p).exists() && !NOT_YET_HERE.contains(&p.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "the manual names missing documents: {missing:?}"
    );
}

#[test]
fn the_readme_is_short_and_its_two_commands_are_the_ones_that_run() {
    let root = project_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines (at most 200)");
    let report = "cargo run --release -- report arena/campaign.json arena/examples/ledger.json";
    assert!(readme.contains(report), "README.md lost its first command");
    assert!(
        readme.contains("\ncargo test --locked\n"),
        "README.md lost its second command"
    );
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(
        ci.contains("\ncargo test --locked\n"),
        ".ci/run no longer runs cargo test --locked"
    );
    // The first command is the built binary's `report` on the embedded campaign.
    let r = crate::common::ledger(
        &root,
        &[
            "report",
            "arena/campaign.json",
            "arena/examples/ledger.json",
        ],
    );
    r.ok();
    assert!(
        r.stdout.starts_with("Campaign reliability-634-slice-1\n"),
        "{}",
        r.stdout
    );
}
