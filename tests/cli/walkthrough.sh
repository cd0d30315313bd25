#!/usr/bin/env bash
# The README's "Port one driver" section, run as written: every command it
# shows runs (in order) on a git copy of fixtures/trees/walk, and every line
# of output it prints must appear, in order, in what the command prints
# (stdout and stderr together). "..." stands for any lines; a commit id in
# "[master 1234abc]" matches any id. The exit status of each is checked too:
# scan 1 (findings), diff 1 (changes), the others 0.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || skip_all "spatch is not installed; this test runs the rewrite"
command -v python3 >/dev/null || skip_all "python3 is not installed"
export GIT_AUTHOR_NAME="Tess Porter" GIT_AUTHOR_EMAIL=tess@example.org
export COLUMNS=80 # explain wraps as on an 80-column terminal, as the README shows it
export GIT_COMMITTER_NAME="Tess Porter" GIT_COMMITTER_EMAIL=tess@example.org
cp -r "$SRC/fixtures/trees/walk" tree && cd tree || exit 1
git init -q && git add -A && git commit -qm "Import 2.4" || bad "test repository"

# the section's blocks, as "$ command" lines and expected lines, one file per command
python3 - "$SRC/README.md" "$WORK" <<'PY' || bad "the README's walkthrough could not be read"
import re, sys
text = open(sys.argv[1]).read()
sec = text.split("\n## Port one driver\n", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"^```\n(.*?)^```$", sec, re.S | re.M)
n = 0
for b in blocks:
    for line in b.splitlines():
        if line.startswith("$ "):
            n += 1
            open(f"{sys.argv[2]}/cmd{n:02d}", "w").write(line[2:] + "\n")
            open(f"{sys.argv[2]}/want{n:02d}", "w").close()
        elif n:
            open(f"{sys.argv[2]}/want{n:02d}", "a").write(line + "\n")
if n < 5:
    sys.exit(f"only {n} commands in the section")
PY

for c in "$WORK"/cmd*; do
	k=${c##*/cmd}
	read -r prog args <"$c"
	[ "$prog" = preemptify ] || { bad "command $k is not preemptify: $prog"; continue; }
	# shellcheck disable=SC2086
	"$BIN" $args >"$WORK/got$k" 2>&1
	rc=$?
	case "$args" in
	scan* | diff*) want_rc=1 ;;
	*) want_rc=0 ;;
	esac
	out=$(cat "$WORK/got$k") err=""
	[ "$rc" -eq "$want_rc" ] && ok || bad "README: preemptify $args (exit $want_rc)"
	if python3 - "$WORK/want$k" "$WORK/got$k" <<'PY'; then ok; else bad "README: the output shown for preemptify $args"; fi
import re, sys
want = open(sys.argv[1]).read().splitlines()
got = open(sys.argv[2]).read().splitlines()
def same(w, g):
    if "1234abc" in w:
        return re.fullmatch(re.escape(w).replace("1234abc", "[0-9a-f]{7}"), g) is not None
    return w == g
i = 0
skip = False
for w in want:
    if w == "...":
        skip = True
        continue
    while i < len(got) and not same(w, got[i]):
        if not skip:
            print(f"expected: {w!r}\n     got: {got[i]!r}")
            sys.exit(1)
        i += 1
    if i == len(got):
        print(f"not found: {w!r}")
        sys.exit(1)
    i += 1
    skip = False
if not skip and i != len(got):
    print(f"more output than shown: {got[i]!r}")
    sys.exit(1)
PY
done
[ -f outgoing/0001-char-pollbox-use-get_cpu-put_cpu-and-cond_resched.patch ] && ok || bad "the patch the README names"
grep -q 'kmalloc(GFP_KERNEL) may sleep' outgoing/0000-cover-letter.patch && ok || bad "the cover letter lists what is left"
git notes show >/dev/null 2>&1 && ok || bad "the last commit carries the account as a note"
finish
