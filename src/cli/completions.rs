//! `git-ledger completions <SHELL>`: the shell completion script, generated from the clap
//! definitions. For bash the script also defines `_git_ledger`, the hook Git's own bash
//! completion calls for `git ledger <TAB>`.

use clap::CommandFactory;
use clap_complete::Shell;

use super::{Cli, Io};
use crate::error::Result;

/// Print the shell completion script (bash, zsh, fish, elvish or powershell).
///
/// bash: `git-ledger completions bash > ~/.local/share/bash-completion/completions/git-ledger`
/// zsh: `git-ledger completions zsh > ~/.zfunc/_git-ledger` (with `~/.zfunc` on `fpath`)
/// fish: `git-ledger completions fish > ~/.config/fish/completions/git-ledger.fish`
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Lets `git ledger <TAB>` use the same completions: Git's bash completion calls
/// `_git_ledger` with the words of `git ledger …`; hand them on as `git-ledger …`.
const BASH_GIT_BRIDGE: &str = r#"
# `git ledger <TAB>`: Git's completion (git-completion.bash) calls _git_<subcommand>.
_git_ledger() {
    local -a words=("git-ledger" "${COMP_WORDS[@]:2}")
    local COMP_WORDS=("${words[@]}")
    local COMP_CWORD=$((COMP_CWORD - 1))
    local COMP_LINE="git-ledger ${COMP_LINE#*ledger}"
    _git__ledger git-ledger "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;

/// clap_complete 4.6 names the state of a subcommand of a hyphenated binary two ways in its
/// bash script (`cmd="git__ledger__subcmd__report"` but `case` arms
/// `git__subcmd__ledger__subcmd__report)`), so nothing after the subcommand completed. Use
/// the name the assignments use everywhere.
fn fix_bash_states(script: &str) -> String {
    script.replace("git__subcmd__ledger__subcmd__", "git__ledger__subcmd__")
}

pub fn run(args: CompletionsArgs, io: &mut Io) -> Result<i32> {
    let mut cmd = Cli::command();
    if args.shell != Shell::Bash {
        clap_complete::generate(args.shell, &mut cmd, "git-ledger", io.out);
        return Ok(0);
    }
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "git-ledger", &mut script);
    let script = String::from_utf8_lossy(&script);
    io.out.write_all(fix_bash_states(&script).as_bytes())?;
    io.out.write_all(BASH_GIT_BRIDGE.as_bytes())?;
    Ok(0)
}
