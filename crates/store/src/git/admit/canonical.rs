//! Tree canonicality: whether a raw tree object is one Git writes (canonical modes, Git's
//! entry order, one path component per name, no name twice). The diff reads modes as numbers
//! and pairs entries by name, so a tree it cannot see as wrong is refused here.

/// Why a raw tree object is not one Git writes, if it is not: each entry's mode in canonical
/// octal (no leading zero), entries strictly in Git's order (a directory's name compared as if
/// followed by `/`), no name twice (a file and a directory of one name included), each name
/// one path component.
pub(super) fn noncanonical_entry(data: &[u8], hash_len: usize) -> Option<String> {
    fault(data, hash_len).map(|f| match f {
        Fault::Name(why) => why,
        Fault::Entry(why) => {
            format!("{why} (a zero-padded mode, entries out of order or a name twice)")
        }
    })
}

/// What is wrong with a tree object: a name that is not one path component, or how its
/// entries are written.
#[derive(Debug, PartialEq)]
enum Fault {
    Name(String),
    Entry(String),
}

fn fault(data: &[u8], hash_len: usize) -> Option<Fault> {
    use Fault::{Entry, Name};
    let mut rest = data;
    // The previous entry's name and whether it was a directory (compared as `name/`).
    let mut previous: Option<(&[u8], bool)> = None;
    // Files a later directory could share a name with. In Git's order a file `a` comes before
    // the directory `a` (compared as `a/`), with only names `a` + a byte below `/` + … between
    // them, so the candidates are the files that are prefixes of the current name that way: a
    // stack, not a set of every name (which cost `verify` a hash per entry of each changed
    // `records/` tree).
    let mut files: Vec<&[u8]> = Vec::new();
    while !rest.is_empty() {
        let Some(sp) = rest.iter().position(|&b| b == b' ') else {
            return Some(Entry("an entry has no mode".into()));
        };
        if rest[..sp].contains(&0) {
            return Some(Entry("an entry has no name".into()));
        }
        let Some(nul) = memchr::memchr(0, &rest[sp..]).map(|n| sp + n) else {
            return Some(Entry("an entry has no name".into()));
        };
        if rest.len() < nul + 1 + hash_len {
            return Some(Entry("an entry is cut short".into()));
        }
        let (mode, name) = (&rest[..sp], &rest[sp + 1..nul]);
        rest = &rest[nul + 1 + hash_len..];
        let shown = || crate::git::show_path(name);
        // One path component per entry, as Git writes it (`git fsck`: fullPathname, emptyName,
        // hasDot, hasDotdot): an entry `a/b.json` is no file `b.json` in a directory `a`, and
        // naming it by the path it spells would name a file that is not there.
        if name.contains(&b'/') || name.is_empty() || name == b"." || name == b".." {
            return Some(Name(format!(
                "it has an entry named {:?}, which is not one path component (Git writes no '/' in a name, nor an empty, '.' or '..' name)",
                shown()
            )));
        }
        if mode.first() == Some(&b'0') || !mode.iter().all(|b| (b'0'..=b'7').contains(b)) {
            return Some(Entry(format!(
                "entry {} has mode {}",
                shown(),
                crate::git::show_path(mode)
            )));
        }
        let is_dir = mode == b"40000";
        if previous.is_some_and(|p| git_order(p, (name, is_dir)).is_ge()) {
            return Some(Entry(format!("entry {} is out of order", shown())));
        }
        while let Some(&file) = files.last() {
            match name.strip_prefix(file) {
                Some([]) => break,
                Some([next, ..]) if *next < b'/' => break,
                _ => {
                    files.pop();
                }
            }
        }
        if is_dir && files.last() == Some(&name) {
            return Some(Entry(format!("{} appears twice", shown())));
        }
        if !is_dir {
            files.push(name);
        }
        previous = Some((name, is_dir));
    }
    None
}

/// Git's order of tree entries: names compared bytewise, a directory's as if followed by `/`.
fn git_order((a, a_dir): (&[u8], bool), (b, b_dir): (&[u8], bool)) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    let slash = |dir: bool| if dir { Some(&b'/') } else { None };
    a[..n].cmp(&b[..n]).then_with(|| {
        a[n..]
            .iter()
            .chain(slash(a_dir))
            .cmp(b[n..].iter().chain(slash(b_dir)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw tree of `(mode, name)` entries, each with a 20-byte id.
    fn raw_tree(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (mode, name) in entries {
            out.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            out.extend_from_slice(&[7; 20]);
        }
        out
    }

    /// Every tree over a few names that are prefixes of each other, each name absent, a file,
    /// a directory or both, in Git's order: a name twice is found exactly when it is both.
    #[test]
    fn a_name_twice_is_found_wherever_it_sorts() {
        let names = ["a", "a!", "a!b", "a-", "ab", "b"];
        for combo in 0..4usize.pow(names.len() as u32) {
            let mut entries = Vec::new();
            let mut twice = None;
            for (i, name) in names.iter().enumerate() {
                let pick = combo / 4usize.pow(i as u32) % 4;
                if pick & 1 != 0 {
                    entries.push(("100644", *name));
                }
                if pick & 2 != 0 {
                    entries.push(("40000", *name));
                }
                if pick == 3 && twice.is_none() {
                    twice = Some(format!("{name} appears twice"));
                }
            }
            entries.sort_by(|a, b| {
                git_order(
                    (a.1.as_bytes(), a.0 == "40000"),
                    (b.1.as_bytes(), b.0 == "40000"),
                )
            });
            let got = fault(&raw_tree(&entries), 20);
            // With several names twice, the first found is the one whose directory sorts first.
            assert_eq!(got.is_some(), twice.is_some(), "{entries:?}");
            if let Some(got) = got {
                assert!(
                    matches!(&got, Fault::Entry(s) if s.ends_with("appears twice")),
                    "{entries:?}: {got:?}"
                );
            }
        }
    }

    #[test]
    fn trees_as_git_writes_them_are_canonical() {
        for entries in [
            &[][..],
            &[
                ("100644", "campaign.json"),
                ("100644", "ledger.json"),
                ("40000", "rows"),
            ][..],
            // A directory sorts as if followed by `/`: after `a.json` (`.` < `/`), before `a0`.
            &[("100644", "a.json"), ("40000", "a"), ("100644", "a0")][..],
            // A file that is a prefix of a directory's name is another name.
            &[
                ("100644", "a"),
                ("40000", "a-"),
                ("100644", "a-b"),
                ("40000", "ab"),
            ][..],
            &[
                ("100644", "a"),
                ("40000", "a-"),
                ("100644", "b"),
                ("40000", "c"),
            ][..],
        ] {
            assert_eq!(
                noncanonical_entry(&raw_tree(entries), 20),
                None,
                "{entries:?}"
            );
        }
    }

    #[test]
    fn trees_git_would_not_write_are_named() {
        for (entries, why) in [
            (
                &[("0100644", "01.json")][..],
                "entry 01.json has mode 0100644",
            ),
            (&[("040000", "rows")][..], "entry rows has mode 040000"),
            (
                &[("100644", "b"), ("100644", "a")][..],
                "entry a is out of order",
            ),
            (
                &[("100644", "a"), ("100644", "a")][..],
                "entry a is out of order",
            ),
            (
                &[("100644", "a"), ("100644", "a.json"), ("40000", "a")][..],
                "a appears twice",
            ),
            (&[("10x644", "a")][..], "entry a has mode 10x644"),
            (
                &[
                    ("100644", "a"),
                    ("100644", "a!"),
                    ("100644", "a!b"),
                    ("100644", "a-c"),
                    ("40000", "a"),
                ][..],
                "a appears twice",
            ),
            (
                &[
                    ("100644", "a!"),
                    ("100644", "a!!"),
                    ("100644", "a!-"),
                    ("40000", "a!"),
                ][..],
                "a! appears twice",
            ),
            // A directory sorts as `a/`, after `a.json`.
            (
                &[("40000", "a"), ("100644", "a.json")][..],
                "entry a.json is out of order",
            ),
        ] {
            assert_eq!(
                fault(&raw_tree(entries), 20),
                Some(Fault::Entry(why.into()))
            );
            assert_eq!(
                noncanonical_entry(&raw_tree(entries), 20),
                Some(format!(
                    "{why} (a zero-padded mode, entries out of order or a name twice)"
                ))
            );
        }
        for name in ["a/b.json", "", ".", ".."] {
            let why = noncanonical_entry(&raw_tree(&[("100644", name)]), 20);
            assert_eq!(
                why,
                Some(format!("it has an entry named {name:?}, which is not one path component (Git writes no '/' in a name, nor an empty, '.' or '..' name)"))
            );
        }
        assert!(noncanonical_entry(b"100644 a", 20).is_some());
        assert!(noncanonical_entry(b"100644 a\0short", 20).is_some());
        assert!(noncanonical_entry(b"100644a\0", 20).is_some());
    }
}
