/*
 * Notes: the account of a commit run (what was fixed, what is left for hand
 * work) attached to its last commit as a git note (refs/notes/commits, as
 * `git notes add` writes it), where `git log` shows it and `series` reads it
 * back for the cover letter. A note keeps the account out of the commit
 * messages, which stay kernel prose.
 */
#include "git/internal.h"

#include <string.h>

int repo_note_add(struct repo *r, const char *commit_hex, const char *text)
{
	git_signature *sig = NULL;
	git_oid commit, note;
	int rc = -1;
	if (git_oid_fromstr(&commit, commit_hex) < 0) {
		repo_git_fail(commit_hex);
		goto done;
	}
	if (repo_identity(r->git, REPO_COMMITTER, &sig) < 0)
		goto done;
	if (git_note_create(&note, r->git, NULL, sig, sig, &commit, text, 1) < 0) {
		repo_git_fail("adding the note");
		goto done;
	}
	rc = 0;
done:
	git_signature_free(sig);
	return rc;
}

char *repo_note_read(git_repository *g, const git_oid *commit)
{
	git_note *n = NULL;
	if (git_note_read(&n, g, NULL, commit) < 0) {
		git_error_clear();
		return NULL;
	}
	const char *msg = git_note_message(n);
	char *s = msg && strncmp(msg, REPO_NOTE_HEAD, strlen(REPO_NOTE_HEAD)) == 0 ? xstrdup(msg) : NULL;
	git_note_free(n);
	return s;
}
