#!/usr/bin/env bash
# Outputs never land on inputs (reliability D1, D2, D7): a report, a
# baseline or a backup that would replace a file the run reads is refused
# before anything is read or written; backups never overwrite.
. "$(dirname "$0")/lib.sh"

cp "$SRC/fixtures/drivers/block/nbd_interproc.c" f.c
sum() { cksum <"$1"; }
before=$(sum f.c)

# D1: -o onto the scanned file, through a directory, a second name or a hard link
run scan -o f.c f.c; expect_rc 2 "-o onto the file scanned: refused"
expect_err "option '--output': 'f.c' is one of the files scanned" "-o onto the file scanned: says why"
run scan -o ./f.c f.c; expect_rc 2 "-o ./f.c onto f.c: refused"
run scan -f sarif -o f.c .; expect_rc 2 "-o onto a file under the directory scanned: refused"
expect_err "under '\.'" "-o under a directory: names it"
mkdir drivers && cp f.c drivers/f.c && ln drivers/f.c link.c
run scan -o link.c drivers; expect_rc 2 "-o onto a hard link of a scanned file: refused"
expect_err "hard link of 'drivers/f.c'" "-o onto a hard link: names the other name"
run scan --write-baseline drivers/f.c drivers; expect_rc 2 "--write-baseline onto a scanned file: refused"
if [ "$(sum f.c)" = "$before" ] && [ "$(sum drivers/f.c)" = "$before" ]; then ok; else bad "a source changed"; fi

# a report written whole, and only at the end
run scan -o report.txt f.c; expect_rc 1 "-o a new file: written"
if grep -q 'f.c:' report.txt; then ok; else bad "-o: the report holds the findings"; fi
run scan -o report.json -f json f.c; expect_rc 1 "-o json over an older report"
if grep -q '"findings"' report.json; then ok; else bad "-o: json report written"; fi
run scan -o nodir/r.txt f.c; expect_rc 3 "-o into a missing directory: a failure"
expect_err "cannot write 'nodir/r.txt'" "-o into a missing directory: named before the scan"
expect_no_out 'f.c:' "-o into a missing directory: nothing scanned"
# a baseline replacing the one it reads is the usual update, and allowed
run scan --write-baseline base.txt f.c; expect_rc 0 "--write-baseline: written"
run scan --baseline base.txt --write-baseline base.txt f.c; expect_rc 0 "--write-baseline over the baseline read: allowed"
run scan --baseline base.txt -o base.txt f.c; expect_rc 2 "-o over the baseline read: refused"

# D2: a backup never overwrites a file that exists, and never a scanned one
if have spatch "backup, xattr and CRLF checks"; then
	echo leftover >f.c.orig
	run apply --backup .orig f.c; expect_rc 3 "--backup over an existing file: refused"
	expect_err "its backup 'f.c.orig' exists; not overwritten \(--force replaces it\)" "--backup: says why and how"
	expect_err "no file was written" "--backup refused: nothing written"
	if [ "$(sum f.c)" = "$before" ] && [ "$(cat f.c.orig)" = leftover ]; then ok; else bad "--backup: a file changed"; fi
	cp "$SRC/fixtures/drivers/block/nbd_interproc.c" a.c && cp a.c a.c.c
	run apply --backup .c --force a.c a.c.c; expect_rc 3 "--backup onto another scanned source: refused, even with --force"
	expect_err "its backup 'a.c.c' is one of the files scanned" "--backup onto a scanned source: says so"
	rm -f a.c a.c.c
	run apply --backup .orig --force f.c; expect_rc 0 "--force: the old backup is replaced"
	if [ "$(sum f.c.orig)" = "$before" ] && [ "$(sum f.c)" != "$before" ]; then ok; else bad "--force: backup holds the original"; fi
	cp "$SRC/fixtures/drivers/block/nbd_interproc.c" g.c
	run apply --backup .bak g.c; expect_rc 0 "--backup: a new backup"
	if [ "$(sum g.c.bak)" = "$before" ]; then ok; else bad "--backup: the backup holds the original"; fi
	# D7: extended attributes are kept (skipped where the file system has none)
	cp "$SRC/fixtures/drivers/block/nbd_interproc.c" x.c
	if command -v setfattr >/dev/null 2>&1 && setfattr -n user.origin -v kept x.c 2>/dev/null; then
		run apply x.c; expect_rc 0 "apply of a file with an extended attribute"
		if [ "$(getfattr --only-values -n user.origin x.c 2>/dev/null)" = kept ]; then ok; else bad "apply dropped user.origin"; fi
		if [ "$(sum x.c)" != "$before" ]; then ok; else bad "apply with xattrs: not rewritten"; fi
	else
		skip_part "xattr check" "no setfattr, or no user extended attributes on this file system"
	fi
	# D8: a CRLF file stays CRLF, the lines spatch adds or rewrites included
	sed 's/$/\r/' "$SRC/fixtures/drivers/block/nbd_interproc.c" >crlf.c
	run apply crlf.c; expect_rc 0 "apply of a CRLF file"
	if grep -q 'put_cpu_var' crlf.c; then ok; else bad "CRLF: not rewritten"; fi
	bare=$(grep -c $'[^\r]$' crlf.c)
	if [ "$bare" -eq 0 ]; then ok; else bad "CRLF: $bare lines end in a bare LF"; fi
	run diff crlf.c; expect_rc 0 "CRLF: a second diff is empty"
	# D25: a symbolic link: diff and apply agree; the target is rewritten, the link kept
	mkdir sl && cp "$SRC/fixtures/drivers/block/nbd_interproc.c" sl/real.c && ln -s real.c sl/link.c
	run diff sl/link.c; expect_rc 1 "a symbolic link: diff shows the fix"
	run apply sl/link.c; expect_rc 0 "a symbolic link: apply writes it"
	[ -L sl/link.c ] && grep -q put_cpu_var sl/real.c && ok || bad "a symbolic link: the link kept, its target rewritten"
	# D26: hard links: refused by diff and apply alike, never half the names
	mkdir hl && cp "$SRC/fixtures/drivers/block/nbd_interproc.c" hl/one.c && ln hl/one.c hl/two.c
	run diff hl/one.c; expect_rc 3 "hard links: diff refuses"
	expect_err 'has 2 names \(hard links\)' "hard links: says why"
	run apply hl/one.c; expect_rc 3 "hard links: apply refuses"
	[ "$(sum hl/one.c)" = "$before" ] && [ "$(sum hl/two.c)" = "$before" ] && ok || bad "hard links: a name changed"
	# D30: a name too long to take the temporary suffix
	long=$(printf 'n%.0s' $(seq 1 245)).c
	cp "$SRC/fixtures/drivers/block/nbd_interproc.c" "$long"
	run apply "$long"; expect_rc 0 "a 247-byte name: apply writes it"
	grep -q put_cpu_var "$long" && ok || bad "a 247-byte name: not rewritten"
	[ -z "$(ls -A | grep preemptify-)" ] && ok || bad "a 247-byte name: temporary file left"
fi
finish
