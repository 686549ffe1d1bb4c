//! `--forge github|gitlab` of `init` and `hooks install`: the forge as an argument. What each
//! forge needs (its protections, its CI files) is [`crate::hook::forge`]'s.

/// Which forge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Forge {
    Github,
    Gitlab,
}

impl From<Forge> for crate::hook::forge::Forge {
    fn from(f: Forge) -> Self {
        match f {
            Forge::Github => crate::hook::forge::Forge::Github,
            Forge::Gitlab => crate::hook::forge::Forge::Gitlab,
        }
    }
}
