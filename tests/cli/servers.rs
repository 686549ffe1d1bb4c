//! Servers as deployed (`signing.md`, "Servers, as deployed"): the installed `pre-receive`
//! reached through every transport a Git server speaks — a path, `git daemon`, smart HTTP
//! (`git http-backend` behind lighttpd) and SSH (`sshd`), each on 127.0.0.1. For each, a valid
//! signed push is admitted; an unsigned commit, a commit signed by an undeclared key, a retry
//! and a rewrite are refused with their reasons reaching the pusher as `remote:` lines, and a
//! refused push leaves the server's refs and object store as they were. The signed-ledger
//! attacks of the signature differential test (issue 25: every class of its mutations at least
//! once) get the verdict `git verify-commit` gives them, over every transport alike.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::common::{git, hooked_server, path_with_bin, pin_env, require_tool, which, Daemon};
use crate::gitstore::{canonical_row, read_files, regular, write_tree};
use crate::signing::{
    fingerprint, forge, forge_with, git_ledger_hash_object, have_ssh_keygen, keygen, Key, Signed,
};

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Wait until something accepts on `port`.
fn wait_for(port: u16, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not accept on port {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A server process started by a test, killed (by its own id) on drop.
struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Everything under a bare repository's `objects/` and its refs: what a refused push must not
/// change.
fn server_state(server: &Path) -> (Vec<String>, String) {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        // receive-pack removes its quarantine directory while a push ends: a directory that
        // vanishes under the walk is read as gone (the caller reads again until the state is the one before the push).
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut files = Vec::new();
    walk(&server.join("objects"), server, &mut files);
    files.sort();
    let refs = git(
        server,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    (files, refs)
}

/// How a client reaches the server: the URL and the environment `git push` needs.
struct Transport {
    name: &'static str,
    url: String,
    env: Vec<(String, String)>,
    _server: Option<Server>,
    _daemon: Option<Daemon>,
    _dir: Option<tempfile::TempDir>,
}

/// The ledger of a client with writers, a hooked bare server, and the commits pushed.
struct Scene {
    s: Signed,
    servers: tempfile::TempDir,
    server: PathBuf,
    mallory: Key,
}

/// The mutations of `signature_diff::mutations` pushed through every transport: each class of
/// the differential test (the armour, the headers, payloads signed over, namespace and key,
/// the SSHSIG blob's fields, its length prefixes and ends) at least once, every one of them
/// refused by `git verify-commit`; the red team's attacks of issue 25 among them.
const PUSHED_ATTACKS: &[&str] = &[
    // The armour.
    "CRLF on every line",
    "base64 on the BEGIN line",
    "END on the last base64 line",
    "no END marker",
    // The headers.
    "the committer changed after signing",
    "a garbage signature header first",
    // Signed over other payloads; another namespace (another key: `run`'s undeclared key).
    "gpgsigx signed over",
    "signed in namespace file",
    // The SSHSIG blob's fields.
    "reserved not empty and signed over",
    "the magic changed",
    "garbage signature bytes",
    // Length prefixes and the blob's ends.
    "the key length swallows the rest",
    "the blob truncated",
    "the blob extended",
];

impl Scene {
    /// The signed ledger under `prefix`, in the clone and on the hooked server.
    fn under(prefix: &str) -> Scene {
        let s = Signed::under(prefix);
        s.put("scenario/s-b/01", "ERROR").ok();
        let servers = tempfile::tempdir().unwrap();
        let server = hooked_server(servers.path(), "server.git");
        crate::common::use_prefix(&server, prefix);
        git(&server, &["config", "http.receivepack", "true"]);
        let mallory = keygen(s.keys.path(), "mallory", "ed25519");
        Scene {
            s,
            servers,
            server,
            mallory,
        }
    }

    fn push(&self, t: &Transport, spec: &str, force: bool) -> crate::common::Run {
        let mut cmd = Command::new("git");
        pin_env(&mut cmd)
            .env("PATH", path_with_bin())
            .current_dir(self.s.dir())
            .args(["push", "--porcelain"]);
        if force {
            cmd.arg("--force");
        }
        cmd.arg(&t.url).arg(spec);
        for (k, v) in &t.env {
            cmd.env(k, v);
        }
        let out = cmd.stdin(Stdio::null()).output().unwrap();
        crate::common::Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Push `spec` and expect the hook to refuse it with every needle on a `remote:` line,
    /// the server's refs and objects untouched.
    fn refused(&self, t: &Transport, what: &str, spec: &str, force: bool, needles: &[&str]) {
        let before = server_state(&self.server);
        let r = self.push(t, spec, force);
        assert_ne!(
            r.code, 0,
            "{}: {what}: the push must fail\n{}",
            t.name, r.stderr
        );
        let remote: String = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("remote:"))
            .collect::<Vec<_>>()
            .join("\n");
        for n in needles {
            assert!(
                remote.contains(n),
                "{}: {what}: no {n:?} on a remote: line:\n{}",
                t.name,
                r.stderr
            );
        }
        // git-receive-pack removes the quarantine directory (`objects/incoming-*`) after it
        // has told the client: over a daemon or ssh the client can see the refusal first.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut after = server_state(&self.server);
        while after != before && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
            after = server_state(&self.server);
        }
        assert_eq!(
            after, before,
            "{}: {what}: the refused push changed the server's refs or objects",
            t.name
        );
    }

    /// The whole story over one transport.
    fn run(&self, t: &Transport) {
        let rf = self.s.refname.as_str();
        let d = self.s.dir();
        let t1 = self.s.tip();
        // A valid signed ledger (root + put) is admitted.
        let r = self.push(t, &format!("{rf}:{rf}"), false);
        assert_eq!(
            r.code, 0,
            "{}: the valid push failed:\n{}",
            t.name, r.stderr
        );
        assert!(
            r.stderr.contains("remote: git-ledger: "),
            "{}: {}",
            t.name,
            r.stderr
        );
        assert_eq!(git(&self.server, &["rev-parse", rf]), t1);
        // The next put, valid and signed; pushed last.
        self.s.put("scenario/s-b/02", "ERROR").ok();
        let t2 = self.s.tip();
        let tree2 = git(d, &["rev-parse", &format!("{t2}^{{tree}}")]);
        let message2 = git(d, &["log", "-1", "--format=%B", &t2]);
        // The same change unsigned, made with plumbing.
        let unsigned = forge_with(d, &tree2, Some(&t1), &message2, None, false);
        self.refused(
            t,
            "an unsigned commit",
            &format!("{unsigned}:{rf}"),
            false,
            &[&format!("commit {unsigned}: rule 8: it is not signed")],
        );
        // Signed by a key the writers do not declare.
        let stranger = forge_with(
            d,
            &tree2,
            Some(&t1),
            &message2,
            Some((&self.mallory, "git")),
            false,
        );
        self.refused(
            t,
            "a commit signed by an undeclared key",
            &format!("{stranger}:{rf}"),
            false,
            &[
                &format!("commit {stranger}: rule 8: it is signed with key"),
                &fingerprint(&self.mallory),
                "not a declared writer",
            ],
        );
        // A retry: the filled row replaced, signed by the declared writer.
        let mut files = read_files(d, &t1);
        let path = "rows/scenario/s-b/01.json";
        let mut row: Value = serde_json::from_slice(&files[path].bytes).unwrap();
        row["reason"] = json!("tried again");
        files.insert(path.into(), regular(canonical_row(&row)));
        let retry_tree = write_tree(d, &files);
        let retry = forge(
            d,
            &retry_tree,
            Some(&t1),
            Some((&self.s.alice, "git")),
            false,
        );
        self.refused(
            t,
            "a retry",
            &format!("{retry}:{rf}"),
            false,
            &[&format!("commit {retry}: rule 4: row scenario/s-b/01")],
        );
        // A rewrite: the ref forced back to its root.
        let root = git(d, &["rev-list", "--max-parents=0", rf]);
        self.refused(
            t,
            "a rewrite",
            &format!("{root}:{rf}"),
            true,
            &["not an ancestor", "rewritten ledger history"],
        );
        // The valid commit is admitted.
        let r = self.push(t, &format!("{rf}:{rf}"), false);
        assert_eq!(r.code, 0, "{}: {}", t.name, r.stderr);
        assert_eq!(git(&self.server, &["rev-parse", rf]), t2);
        self.signature_attacks(t);
    }

    /// The signed-ledger attacks of the signature differential test (issue 25), pushed: the
    /// next signed put mutated by `signature_diff::mutations`, one or more of each of its
    /// classes ([`PUSHED_ATTACKS`]), is refused by the hook with rule 8, as
    /// `git verify-commit` refuses it, the server's refs and objects untouched; a variant Git
    /// calls good (re-wrapped, text after END, version 0, a non-empty reserved field, a
    /// `gpgsigx` header and a bare `gpgsig` line added after signing) is admitted.
    fn signature_attacks(&self, t: &Transport) {
        let rf = self.s.refname.as_str();
        use crate::signature_diff::{armour, header, mutations, Base, Fields, Parts, Rng};
        let d = self.s.dir();
        let parent = self.s.tip();
        self.s.put("arena/case-a/01", "FAIL").ok();
        let good = self.s.tip();
        git(d, &["update-ref", rf, &parent]);
        let raw = git(d, &["cat-file", "commit", &good]) + "\n";
        let base = Base {
            kind: "ed25519",
            key: self.s.alice.clone(),
            raw: raw.clone(),
        };
        let all = mutations(&base, &mut Rng::new(0x5eed_0025), &self.mallory, &base);
        for what in PUSHED_ATTACKS {
            let raw = &all
                .iter()
                .find(|(name, _)| name == what)
                .unwrap_or_else(|| panic!("signature_diff::mutations makes no {what:?}"))
                .1;
            let c = git_ledger_hash_object(d, raw.as_bytes());
            assert!(!self.s.git_verdict(&c).0, "{what}: git calls it good");
            self.refused(
                t,
                what,
                &format!("{c}:{rf}"),
                false,
                &[&format!("commit {c}: rule 8: ")],
            );
        }
        let p = Parts::of(&raw);
        let mut fields = Fields::of(&p.blob());
        fields.reserved = b"anything".to_vec();
        fields.version = 0;
        let admitted = format!(
            "{}{}gpgsigx added\n after\ngpgsig\n bare\n{}",
            p.before,
            header(
                "gpgsig",
                &format!("{}text after END\n", armour(&fields.bytes(), 33))
            ),
            p.after
        );
        let c = git_ledger_hash_object(d, admitted.as_bytes());
        assert!(
            self.s.git_verdict(&c).0,
            "git calls the re-encoded variant bad"
        );
        let r = self.push(t, &format!("{c}:{rf}"), false);
        assert_eq!(
            r.code, 0,
            "{}: the variant Git calls good: {}",
            t.name, r.stderr
        );
        assert_eq!(git(&self.server, &["rev-parse", rf]), c);
        git(d, &["update-ref", rf, &c]);
    }

    fn path(&self) -> Transport {
        Transport {
            name: "path",
            url: self.server.display().to_string(),
            env: Vec::new(),
            _server: None,
            _daemon: None,
            _dir: None,
        }
    }

    fn daemon(&self) -> Transport {
        let daemon = Daemon::start(self.servers.path());
        Transport {
            name: "git daemon",
            url: daemon.url("server.git"),
            env: Vec::new(),
            _server: None,
            _daemon: Some(daemon),
            _dir: None,
        }
    }

    /// `git http-backend` behind lighttpd on 127.0.0.1 (receive-pack enabled).
    fn http(&self) -> Option<Transport> {
        let lighttpd = which("lighttpd").or_else(|| {
            let p = PathBuf::from("/usr/sbin/lighttpd");
            p.is_file().then_some(p)
        });
        let Some(lighttpd) = lighttpd else {
            require_tool("lighttpd", "the smart HTTP push test");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let exec_path = git(self.s.dir(), &["--exec-path"]);
        let backend = Path::new(&exec_path).join("git-http-backend");
        let path = path_with_bin().to_string_lossy().into_owned();
        let conf = format!(
            r#"server.bind = "127.0.0.1"
server.port = {port}
server.document-root = "{root}"
server.errorlog = "{dir}/error.log"
server.pid-file = "{dir}/lighttpd.pid"
server.modules = ("mod_alias", "mod_setenv", "mod_cgi")
alias.url = ("/git" => "{backend}")
$HTTP["url"] =~ "^/git" {{
  cgi.assign = ("" => "")
  setenv.add-environment = (
    "GIT_PROJECT_ROOT" => "{root}",
    "GIT_HTTP_EXPORT_ALL" => "1",
    "GIT_CONFIG_NOSYSTEM" => "1",
    "GIT_CONFIG_GLOBAL" => "/dev/null",
    "PATH" => "{path}"
  )
}}
"#,
            root = self.servers.path().display(),
            dir = dir.path().display(),
            backend = backend.display(),
        );
        let conf_path = dir.path().join("lighttpd.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(lighttpd)
            .arg("-D")
            .arg("-f")
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start lighttpd");
        let server = Server { child };
        wait_for(port, "lighttpd");
        Some(Transport {
            name: "smart HTTP (lighttpd + git http-backend)",
            url: format!("http://127.0.0.1:{port}/git/server.git"),
            env: Vec::new(),
            _server: Some(server),
            _daemon: None,
            _dir: Some(dir),
        })
    }

    /// `sshd` on 127.0.0.1 with a host key and a user key made for the test.
    fn ssh(&self) -> Option<Transport> {
        let sshd = which("sshd").or_else(|| {
            let p = PathBuf::from("/usr/sbin/sshd");
            p.is_file().then_some(p)
        });
        let (Some(sshd), true) = (sshd, which("ssh").is_some()) else {
            require_tool(
                "sshd and ssh (openssh-server, openssh-client)",
                "the SSH push test",
            );
            return None;
        };
        let running_as_root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        if running_as_root && !Path::new("/run/sshd").is_dir() {
            require_tool(
                "/run/sshd (sshd's privilege separation directory)",
                "the SSH push test",
            );
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let host = keygen(dir.path(), "host_ed25519", "ed25519");
        let user = keygen(dir.path(), "user_ed25519", "ed25519");
        std::fs::write(
            dir.path().join("authorized_keys"),
            format!("{}\n", user.public),
        )
        .unwrap();
        let port = free_port();
        let bin = crate::common::bin();
        let conf = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {dir}/sshd.pid\nAuthorizedKeysFile {dir}/authorized_keys\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nSetEnv GIT_LEDGER={bin} GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null\n",
            host = host.path.display(),
            dir = dir.path().display(),
            bin = bin.display(),
        );
        let conf_path = dir.path().join("sshd_config");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(sshd)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("sshd.log")).unwrap())
            .spawn()
            .expect("start sshd");
        let server = Server { child };
        wait_for(port, "sshd");
        let user_name = String::from_utf8_lossy(
            &std::process::Command::new("id")
                .arg("-un")
                .output()
                .unwrap()
                .stdout,
        )
        .trim()
        .to_owned();
        let ssh = format!(
            "ssh -F /dev/null -p {port} -i {key} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
            key = user.path.display()
        );
        Some(Transport {
            name: "ssh (sshd)",
            url: format!("ssh://{user_name}@127.0.0.1{}", self.server.display()),
            env: vec![("GIT_SSH_COMMAND".into(), ssh)],
            _server: Some(server),
            _daemon: None,
            _dir: Some(dir),
        })
    }
}

fn a_push_through_a_path_is_admitted_or_refused_by_the_installed_hook(prefix: &str) {
    if !have_ssh_keygen("the server tests") {
        return;
    }
    let scene = Scene::under(prefix);
    scene.run(&scene.path());
}

fn a_push_through_git_daemon_is_admitted_or_refused_by_the_installed_hook(prefix: &str) {
    if !have_ssh_keygen("the server tests") {
        return;
    }
    let scene = Scene::under(prefix);
    let t = scene.daemon();
    scene.run(&t);
}

fn a_push_over_smart_http_behind_lighttpd_is_admitted_or_refused_by_the_installed_hook(
    prefix: &str,
) {
    if !have_ssh_keygen("the server tests") {
        return;
    }
    let scene = Scene::under(prefix);
    if let Some(t) = scene.http() {
        scene.run(&t);
    }
}

fn a_push_over_ssh_to_sshd_is_admitted_or_refused_by_the_installed_hook(prefix: &str) {
    if !have_ssh_keygen("the server tests") {
        return;
    }
    let scene = Scene::under(prefix);
    if let Some(t) = scene.ssh() {
        scene.run(&t);
    }
}

crate::common::under_both_prefixes!(
    a_push_through_a_path_is_admitted_or_refused_by_the_installed_hook,
    a_push_through_git_daemon_is_admitted_or_refused_by_the_installed_hook,
    a_push_over_smart_http_behind_lighttpd_is_admitted_or_refused_by_the_installed_hook,
    a_push_over_ssh_to_sshd_is_admitted_or_refused_by_the_installed_hook,
);
