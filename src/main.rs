//! The `git-ledger` binary: parse the command line, run the command, exit with its status.

fn main() {
    allocation_policy();
    std::process::exit(git_ledger::cli::main());
}

/// gix inflates every loose object it reads (or reads the header of) with a fresh zlib state of
/// about 44 KB, allocated aligned and freed again. Between two such states the checks allocate
/// small values (a record's path, its hash, a reason), and glibc's heap then cannot reuse the
/// freed aligned blocks: `verify` of a commit adding 30,000 unclaimed loose record files kept
/// 602 MB resident, 19 KB per record, with a live heap never above 3 MB (`valgrind
/// --tool=massif`, with and without `--pages-as-heap=yes`). Serving blocks of 32 KB and more
/// from their own mappings, returned to the system when freed, keeps it at 48 MB (2.97 s
/// against 2.65 s; debug build). Measured in docs/benchmarks.md.
fn allocation_policy() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt only sets a tunable of glibc's allocator; it is called before any thread
    // is started, and an unaccepted value is ignored (its return value says so).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 * 1024);
    }
}
