//! No dead link in the documentation: every relative link (and `#anchor`) in `README.md`,
//! `ARCHITECTURE.md`, `CHANGELOG.md` and `docs/**/*.md` must name a file or directory of the
//! repository, and an anchor a heading of its page (GitHub's heading ids). Every dead link is
//! reported at once, each with its file and line.
//!
//! The documentation stands alone: no link leads outside the repository, and no page (nor a
//! source comment) names a path outside it — the specification the tool was built from, a
//! sibling checkout — or a document by a bare name (`` `git.md` ``) that no file of the
//! repository has.

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

/// The pages a user or contributor reads: the documents whose links are checked, and the other
/// READMEs of the repository (the Inspect hook's, the example campaign's, the harness's).
fn pages() -> Vec<PathBuf> {
    let root = project_root();
    let mut out = documents();
    for f in [
        "inspect-hook/README.md",
        "inspect-example/README.md",
        "arena/README.md",
    ] {
        if root.join(f).is_file() {
            out.push(root.join(f));
        }
    }
    out
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

/// Every reference of a text to something outside the repository, as `line: what`: a path
/// from [`outside_needles`] anywhere (code spans and blocks included), or a code span that is a
/// bare Markdown file name (`` `x.md` ``) no file of the repository has.
fn outside_references(text: &str, names: &HashSet<String>) -> Vec<(usize, String)> {
    let needles = outside_needles();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for needle in &needles {
            if line.contains(needle.as_str()) {
                out.push((n + 1, format!("names {needle}")));
            }
        }
        for (i, span) in line.split('`').enumerate() {
            let bare = span.ends_with(".md")
                && span.len() > 3
                && span
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
            if i % 2 == 1 && bare && !names.contains(span) {
                out.push((
                    n + 1,
                    format!("names `{span}`, which no file of the repository is"),
                ));
            }
        }
    }
    out
}

#[test]
fn no_page_or_comment_points_outside_the_repository() {
    let root = project_root();
    let names = markdown_names(&root);
    let mut found = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let rel = page.strip_prefix(&root).unwrap().display().to_string();
        for (line, what) in outside_references(&text, &names) {
            found.push(format!("{rel}:{line}: {what}"));
        }
    }
    // Source comments are the contributor's documentation: no path outside the repository.
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                sources(&p, out);
            } else if p
                .extension()
                .is_some_and(|x| x == "rs" || x == "py" || x == "sh")
            {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for d in [
        "src",
        "tests/cli",
        "fuzz",
        "examples",
        "hooks",
        "inspect-hook",
        ".ci",
    ] {
        if root.join(d).is_dir() {
            sources(&root.join(d), &mut files);
        }
    }
    let needles = outside_needles();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            if needles.iter().any(|x| line.contains(x.as_str())) {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "{} references outside the repository (move what they point to into docs/reference/):\n{}",
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
    let page = format!(
        "# Page\n\n[out](../../{shared}/spec/git.md) [in](here.md)\n\
         The rules are in `../{shared}/spec/` and `git.md`, not `here.md`.\n"
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
    assert_eq!(
        outside_references(&page, &names),
        [
            (3, format!("names ../{shared}")),
            (3, format!("names {shared}/spec")),
            (4, format!("names ../{shared}")),
            (4, format!("names {shared}/spec")),
            (
                4,
                "names `git.md`, which no file of the repository is".to_owned()
            ),
        ]
    );
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
