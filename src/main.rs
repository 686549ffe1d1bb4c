//! The `git-ledger` binary: parse the command line, run the command, exit with its status.

fn main() {
    std::process::exit(git_ledger::cli::main());
}
