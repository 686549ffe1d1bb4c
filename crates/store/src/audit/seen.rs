//! The tips an audit has seen, per remote URL: `<git common dir>/git-ledger/audit/<SHA-256 of
//! the URL>.json` (trust on first use, as SSH's `known_hosts`). Not a cache: deleting it
//! forgets what was seen, and the next audit of that URL is a first use again.
//!
//! The file is canonical JSON: `{"format": "ledger-audit-seen/1", "url": …, "ledgers": {<id>:
//! [{"tip": …, "seen": <seconds since the epoch>}, …]}}`, each ledger's tips in the order first
//! seen. It is replaced whole (written beside it, then renamed).

use std::collections::BTreeMap;
use std::path::PathBuf;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

const FORMAT: &str = "ledger-audit-seen/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Tip {
    tip: String,
    seen: i64,
}

#[derive(Debug, Serialize, Deserialize)]
struct File {
    format: String,
    url: String,
    ledgers: BTreeMap<String, Vec<Tip>>,
}

/// What earlier audits of one URL saw.
pub struct Seen {
    path: PathBuf,
    file: File,
}

/// The directory of the files.
pub fn dir(repo: &gix::Repository) -> PathBuf {
    repo.common_dir().join("git-ledger").join("audit")
}

impl Seen {
    /// The tips seen from `url` (none on first use). A file that is not what [`Seen::store`]
    /// writes is an error, never an empty memory: forgetting would hide a rewrite.
    pub fn load(repo: &gix::Repository, url: &str) -> Result<Seen> {
        let path = dir(repo).join(format!("{}.json", crate::sha256_hex(url.as_bytes())));
        let file = match std::fs::read(&path) {
            Ok(bytes) => {
                let v = crate::json::parse_strict(&bytes).map_err(|e| bad(&path, &e))?;
                let f: File = serde_json::from_value(v).map_err(|e| bad(&path, &e))?;
                if f.format != FORMAT || f.url != url {
                    return Err(bad(&path, &format!("it is not {FORMAT} for {url}")));
                }
                f
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => File {
                format: FORMAT.to_owned(),
                url: url.to_owned(),
                ledgers: BTreeMap::new(),
            },
            Err(e) => return Err(bad(&path, &e)),
        };
        Ok(Seen { path, file })
    }

    /// The tips of ledger `id` seen before, oldest first.
    pub fn tips(&self, id: &str) -> Vec<String> {
        (self.file.ledgers.get(id).into_iter().flatten())
            .map(|t| t.tip.clone())
            .collect()
    }

    /// Every ledger seen, with its tips.
    pub fn ledgers(&self) -> Vec<(String, Vec<String>)> {
        (self.file.ledgers.iter())
            .map(|(id, tips)| (id.clone(), tips.iter().map(|t| t.tip.clone()).collect()))
            .collect()
    }

    /// Remember `tip` of `id`, seen at `now`.
    pub fn add(&mut self, id: &str, tip: ObjectId, now: i64) {
        let tips = self.file.ledgers.entry(id.to_owned()).or_default();
        let tip = tip.to_string();
        if !tips.iter().any(|t| t.tip == tip) {
            tips.push(Tip { tip, seen: now });
        }
    }

    /// Write the file (beside it, then renamed over it).
    pub fn store(&self, _repo: &gix::Repository) -> Result<()> {
        let fail = |e: std::io::Error| {
            Error::failed(format!(
                "cannot remember the tips seen in {}: {e}",
                self.path.display()
            ))
        };
        let parent = self.path.parent().expect("a file in a directory");
        std::fs::create_dir_all(parent).map_err(fail)?;
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, crate::json::canonical(&self.file)).map_err(fail)?;
        std::fs::rename(&tmp, &self.path).map_err(fail)
    }
}

fn bad(path: &std::path::Path, e: &dyn std::fmt::Display) -> Error {
    Error::failed_with_hint(
        format!("{}: cannot read the tips earlier audits saw: {e}", path.display()),
        "this file is the audit's memory (trust on first use); restore it, or delete it to start again from a first use",
    )
}
