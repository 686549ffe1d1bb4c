#!/bin/sh
# git-ledger's scheduled witness run on a hosted forge: the maintainers' side signs a checkpoint
# of each ledger tip the forge serves and that passes the audit, so that a later rewrite (by
# someone who switched a protection off) is caught against a signed statement. Shipped in the
# git-ledger repository (forge/witness.sh) and installed by `git ledger hooks install --forge
# github|gitlab` beside verify-push.sh; the optional witness job of the forge's CI file runs it.
#
# What it needs (the job sets these from the forge's variables and one secret):
#   WITNESS_REPO      the witness's repository (a URL or path): its refs/ledger-witness/* are
#                     fetched first, and pushed back after (not forced: a checkpoint only
#                     extends the witness's chain). Readers pass it to `--witness`.
#   WITNESS_KEY_FILE  the witness's SSH private key (signs each checkpoint; the only secret).
#   WITNESS_EMAIL     the witness's identity: the checkpoints' committer, and the principal of
#                     the signers file readers pass to `--witness-signers`.
#   WITNESS_NAME      optional; default "git-ledger witness".
#   LEDGER_REMOTE     what is witnessed (a URL or path); default `.`, the job's clone with its
#                     ledger branches fetched.
#   GIT_LEDGER        optional; the git-ledger binary (default git-ledger on PATH).
# Exit status: git-ledger witness's (0 every ledger checkpointed, 2 one refused, 1 failed); the
# checkpoints of the ledgers that passed are pushed either way, and the reasons are on stderr.
set -eu
ledger=${GIT_LEDGER:-git-ledger}
: "${WITNESS_REPO:?the witness repository (WITNESS_REPO) is not set}"
: "${WITNESS_KEY_FILE:?the witness key (WITNESS_KEY_FILE) is not set}"
: "${WITNESS_EMAIL:?the witness identity (WITNESS_EMAIL) is not set}"
# A local path, made absolute: git runs below in another directory.
absolute() {
	case $1 in
	/* | *://* | *@*:*) printf '%s\n' "$1" ;;
	*) (cd "$1" && pwd) ;;
	esac
}
remote=$(absolute "${LEDGER_REMOTE:-.}")
wrepo=$(absolute "$WITNESS_REPO")
case $WITNESS_KEY_FILE in
/*) key=$WITNESS_KEY_FILE ;;
*) key=$(pwd)/$WITNESS_KEY_FILE ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$work/witness.git
git init -q --bare "$repo"
git -C "$repo" config gpg.format ssh
git -C "$repo" config user.signingKey "$key"
git -C "$repo" config ledger.refPrefix refs/heads/ledgers/
# The chain so far (nothing the first time).
git -C "$repo" fetch -q --no-tags "$wrepo" '+refs/ledger-witness/*:refs/ledger-witness/*'
name=${WITNESS_NAME:-git-ledger witness}
status=0
GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$WITNESS_EMAIL GIT_COMMITTER_NAME=$name \
	GIT_COMMITTER_EMAIL=$WITNESS_EMAIL "$ledger" witness "$remote" --repo "$repo" || status=$?
if [ -n "$(git -C "$repo" for-each-ref refs/ledger-witness/)" ]; then
	git -C "$repo" push -q "$wrepo" 'refs/ledger-witness/*:refs/ledger-witness/*'
fi
exit "$status"
