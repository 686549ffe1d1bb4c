#!/bin/sh
# git-ledger's CI check of one push to a ledger branch (ledgers/<declaration id>), run where a
# hosted forge (GitHub.com, GitLab.com) runs no pre-receive hook. Shipped in the git-ledger
# repository (forge/verify-push.sh) and installed by `git ledger hooks install --forge
# github|gitlab` beside the forge's CI file.
#
# What the forge passes it:
#   GitHub Actions: GITHUB_EVENT_PATH (a push event's payload: its "ref", "before", "after"),
#                   or LEDGER_REF, LEDGER_BEFORE and LEDGER_TIP, set by the scheduled workflow
#                   for each push GitHub's activity log lists;
#   GitLab CI:      CI_COMMIT_REF_NAME (ledgers/<id>), CI_COMMIT_BEFORE_SHA, CI_COMMIT_SHA.
# It runs `git ledger verify <ref> --expect-tip <old value>`: every commit of the ledger is
# checked from its root, and the push's old value must be on the new tip's first-parent chain
# (a push that is no fast-forward fails, though the forge already refused a force push). A new
# branch (old value all zeros) is checked from its root. Exit status: git-ledger verify's (0
# admitted, 2 refused, 1 failed, 64 usage); the reason is on stderr, and the job's status fails with it.
set -eu
ledger=${GIT_LEDGER:-git-ledger}
ref=${LEDGER_REF:-}
before=${LEDGER_BEFORE:-}
if [ -z "$ref" ] && [ -n "${GITHUB_EVENT_PATH:-}" ]; then
	# The payload is JSON; its top-level "ref" and "before" are plain strings (a full ref name,
	# hex digits), so a sed that reads `"key": "value"` is enough and needs no jq.
	json=$(tr -d '\n' <"$GITHUB_EVENT_PATH")
	ref=$(printf '%s' "$json" | sed -n 's/^.*"ref"[[:space:]]*:[[:space:]]*"\([^"]*\)".*$/\1/p')
	before=$(printf '%s' "$json" | sed -n 's/^.*"before"[[:space:]]*:[[:space:]]*"\([0-9a-f]*\)".*$/\1/p')
	after=$(printf '%s' "$json" | sed -n 's/^.*"after"[[:space:]]*:[[:space:]]*"\([0-9a-f]*\)".*$/\1/p')
	: "${LEDGER_TIP:=$after}"
fi
if [ -z "$ref" ] && [ -n "${CI_COMMIT_REF_NAME:-}" ]; then
	ref=refs/heads/$CI_COMMIT_REF_NAME
	before=${CI_COMMIT_BEFORE_SHA:-}
	: "${LEDGER_TIP:=${CI_COMMIT_SHA:-}}"
fi
case $ref in
refs/heads/ledgers/?*) ;;
'')
	echo "verify-push: no pushed ref (GITHUB_EVENT_PATH, LEDGER_REF or CI_COMMIT_REF_NAME)" >&2
	exit 64
	;;
*)
	echo "verify-push: $ref is not a ledger branch (refs/heads/ledgers/<declaration id>); nothing to check"
	exit 0
	;;
esac
# The forge checks out a branch as a detached HEAD or not at all; the ledger ref is made here
# from what was fetched (the pushed tip), so that verify reads the ledger under its own name.
tip=$(git rev-parse --verify --quiet "${LEDGER_TIP:-$ref}^{commit}") || {
	echo "verify-push: the pushed tip of $ref is not in this clone (fetch it with full history)" >&2
	exit 1
}
if [ "$(git rev-parse --verify --quiet "$ref" || true)" != "$tip" ]; then
	git update-ref "$ref" "$tip"
fi
git config ledger.refPrefix refs/heads/ledgers/
case $before in
'' | *[!0]*) ;;
*) before= ;;
esac
if [ -n "$before" ]; then
	echo "verify-push: $ref: $before -> $tip"
	exec "$ledger" verify "$ref" --expect-tip "$before"
fi
echo "verify-push: $ref: created at $tip"
exec "$ledger" verify "$ref"
