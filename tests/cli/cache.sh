#!/usr/bin/env bash
# The result cache: a second run on unchanged inputs replays the first run's
# output byte for byte; any changed byte (even in another file, whose callers
# decide a verdict here) recomputes; a damaged or foreign entry is rebuilt;
# --no-cache writes nothing; an unwritable cache costs one warning only;
# two runs sharing a cache at once are both right.
. "$(dirname "$0")/lib.sh"

C="$WORK/c"
cp -r "$SRC/fixtures/trees" trees
# reused: the stderr of the last run says the output came from the cache
reused() { printf '%s\n' "$err" | grep -q '^preemptify: cache: .* output reused from an earlier run$'; }
entries() { find "$C" 2>/dev/null -maxdepth 1 -type f -regex '.*/[0-9a-f]*' | wc -l; }

# every fixture tree, every text output: cached cold, cached warm and uncached are the same bytes
for t in bringup cpustat fastnet fastring half26 walk; do
	for args in "scan" "scan -v" "scan -f json" "scan --no-tree -v"; do
		"$BIN" $args --no-cache "trees/$t" >ref.out 2>/dev/null; want=$?
		run $args --cache-dir "$C" "trees/$t"; cp .out cold.out
		if reused; then bad "$t $args: a first run is not served from the cache"; else ok; fi
		run $args --cache-dir "$C" "trees/$t"
		[ "$rc" -eq "$want" ] && ok || bad "$t $args: the warm run's exit code is the uncached one ($want)"
		cmp -s ref.out cold.out && cmp -s ref.out .out && ok || bad "$t $args: cold, warm and --no-cache outputs differ"
		reused && ok || bad "$t $args: the second run reuses the first"
	done
done
if command -v spatch >/dev/null; then
	"$BIN" diff --no-cache --color never trees/fastnet >ref.out 2>/dev/null
	run diff --cache-dir "$C" --color never trees/fastnet
	run diff --cache-dir "$C" --color never trees/fastnet
	reused && cmp -s ref.out .out && ok || bad "diff: the warm run replays the uncached diff"
	expect_err '^preemptify: [0-9]+ sites? to fix' "diff: the warm run repeats the summary"
fi

# -v: the tree index's time is not replayed as if measured now
run scan -v --cache-dir "$C" trees/fastnet
expect_err 'tree index: .*, not measured: served from the cache$' "a replayed run measured nothing"
if printf '%s\n' "$err" | grep -Eq 'tree index: .*[0-9]\.[0-9][0-9] s$'; then bad "no stale timing"; else ok; fi

# a caller's lock changed in one file: the callee's verdict in another file changes on the warm run
run scan --cache-dir "$C" trees/fastnet
if printf '%s\n' "$out" | grep -q 'include/net/fastq.h:21:12'; then bad "fastq_note_cpu's caller holds a lock"; else ok; fi
sed -i 's/^\tspin_lock(&fastnet_q.lock);$/\t\/\* no lock \*\//; s/^\tspin_unlock(&fastnet_q.lock);$/\t\/\* no lock \*\//' \
	trees/fastnet/drivers/net/fastnet.c
run scan --cache-dir "$C" trees/fastnet
if reused; then bad "a changed file is recomputed"; else ok; fi
expect_out 'trees/fastnet/include/net/fastq.h:21:12: .*\[P003' "the callee in another file is recomputed with the caller's change"
"$BIN" scan --no-cache trees/fastnet >ref.out 2>/dev/null
cmp -s ref.out .out && ok || bad "the recomputed answer is the uncached one"
# a touched file with the same bytes (mtime only) is still the same input
touch trees/fastnet/drivers/net/fastnet.c
run scan --cache-dir "$C" trees/fastnet
reused && ok || bad "a file whose bytes did not change is not an input change"

# a baseline named by the config, outside every path scanned, is an input too
mkdir bl
"$BIN" scan --no-cache --write-baseline bl/base.txt trees/fastring >/dev/null 2>&1
printf 'baseline = "../../bl/base.txt"\n' >trees/fastring/.preemptify.toml
run scan --cache-dir "$C" trees/fastring
run scan --cache-dir "$C" trees/fastring
reused && [ -z "$out" ] && ok || bad "the config's baseline hides every finding, replayed"
"$BIN" scan --no-cache --write-baseline bl/base.txt trees/walk >/dev/null 2>&1
run scan --cache-dir "$C" trees/fastring
if reused || [ -z "$out" ]; then bad "a changed baseline file is an input change"; else ok; fi
rm trees/fastring/.preemptify.toml

# a damaged entry (one byte flipped, or cut short) is detected and rebuilt, never trusted
for damage in flip truncate foreign; do
	rm -rf "$C"
	run scan --cache-dir "$C" trees/cpustat; cp .out ref.out
	e=$(find "$C" -maxdepth 1 -type f -regex '.*/[0-9a-f]*' | head -1)
	case $damage in
	flip) printf 'X' | dd of="$e" bs=1 seek=200 conv=notrunc status=none ;;
	truncate) truncate -s 150 "$e" ;;
	foreign) sed -i '2s/^version .*/version 0.0.0-other/' "$e" ;;
	esac
	run scan --cache-dir "$C" trees/cpustat
	if reused; then bad "$damage: a damaged entry is not used"; else ok; fi
	cmp -s ref.out .out && ok || bad "$damage: the output is recomputed, right"
	run scan --cache-dir "$C" trees/cpustat
	reused && cmp -s ref.out .out && ok || bad "$damage: the entry was rebuilt"
done

# --no-cache reads and writes nothing
rm -rf "$C"
run scan --no-cache --cache-dir "$C" trees/fastnet
[ ! -e "$C" ] && ok || bad "--no-cache writes nothing"
# the default place is $XDG_CACHE_HOME/preemptify
XDG_CACHE_HOME="$WORK/xdg" "$BIN" scan trees/walk >/dev/null 2>&1
[ -n "$(ls "$WORK/xdg/preemptify" 2>/dev/null)" ] && ok || bad "the cache lives in \$XDG_CACHE_HOME/preemptify"

# an unwritable cache: one warning, the run itself unchanged
touch afile
"$BIN" scan --no-cache trees/fastnet >ref.out 2>ref.err; want=$?
run scan --cache-dir "$WORK/afile/sub" trees/fastnet
[ "$rc" -eq "$want" ] && cmp -s ref.out .out && ok || bad "an unwritable cache does not change the run"
n=$(printf '%s\n' "$err" | grep -c 'cache')
[ "$n" -eq 1 ] && ok || bad "one warning for an unwritable cache (got $n)"
expect_err 'warning: cache: .*afile.*this run was not cached' "the warning says why"

# two runs at once on one cache: both right, and the entry then reused
rm -rf "$C"
"$BIN" scan -v --no-cache trees/fastnet >ref.out 2>/dev/null
"$BIN" scan -v --cache-dir "$C" trees/fastnet >p1.out 2>/dev/null &
"$BIN" scan -v --cache-dir "$C" trees/fastnet >p2.out 2>/dev/null &
wait
cmp -s ref.out p1.out && cmp -s ref.out p2.out && ok || bad "two concurrent runs are both right"
run scan -v --cache-dir "$C" trees/fastnet
reused && cmp -s ref.out .out && ok || bad "after concurrent runs the entry is whole"
[ -z "$(find "$C" -name '.tmp-*')" ] && ok || bad "no temporary file is left"

# runs with effects or other inputs are never cached
rm -rf "$C"
run scan --cache-dir "$C" -o report.txt trees/fastnet
run scan --cache-dir "$C" -f sarif trees/fastnet
[ "$(entries)" -eq 0 ] && ok || bad "-o and SARIF runs are not cached"

# a replay that cannot be written fails as the run would, and so does a run passed on
if [ -w /dev/full ]; then
	run scan --cache-dir "$C" trees/fastnet
	for pass in replayed computed; do
		"$BIN" scan --cache-dir "$C" trees/fastnet >/dev/full 2>full.err; rc=$?
		[ "$rc" -eq 3 ] && grep -q 'cannot write the output: No space left on device' full.err && ok ||
			bad "$pass output to a full disk: exit 3 and says so (rc $rc: $(cat full.err))"
		rm -rf "$C"
	done
fi

# explain is cached too: FILE and FILE:LINE, cold, warm and uncached the same
# bytes; a changed byte in another file of the tree recomputes
rm -rf "$C" ex && cp -r trees/fastnet ex
line=$("$BIN" scan --no-cache ex/drivers/net/fastnet.c 2>/dev/null | sed -n 's/^ex\/drivers\/net\/fastnet\.c:\([0-9]*\):.*/\1/p' | head -1)
[ -n "$line" ] && ok || bad "explain: a line with a finding to explain"
for target in ex/drivers/net/fastnet.c "ex/drivers/net/fastnet.c:$line"; do
	"$BIN" explain --no-cache "$target" >ref.out 2>/dev/null; want=$?
	run explain --cache-dir "$C" "$target"; cp .out cold.out
	if reused; then bad "explain $target: a first run is not served from the cache"; else ok; fi
	run explain --cache-dir "$C" "$target"
	reused && ok || bad "explain $target: the second run reuses the first"
	[ "$rc" -eq "$want" ] && cmp -s ref.out cold.out && cmp -s ref.out .out && ok ||
		bad "explain $target: cold, warm and --no-cache outputs differ"
done
printf '/* changed */\n' >>ex/net/core/fastcore.c
run explain --cache-dir "$C" "ex/drivers/net/fastnet.c:$line"
if reused; then bad "explain: a changed file elsewhere in the tree is not answered from the cache"; else ok; fi
rm -rf "$C"

# the spatch steps' part: a run the run's entry cannot answer (a file
# changed) asks spatch only for steps whose input changed; a changed
# function runs again; a damaged step entry is rebuilt; the answer is
# always the uncached one, byte for byte
if command -v spatch >/dev/null; then
	rm -rf "$C" st && cp -r trees/fastnet st
	"$BIN" diff --no-cache --color never st >ref.out 2>/dev/null
	run diff --cache-dir "$C" -v --color never st
	cmp -s ref.out .out && ok || bad "steps: a cold run gives the uncached diff"
	expect_err 'spatch process.*, 0 answered by the cache\)' "steps: nothing answered on a cold cache"
	steps=$(find "$C/spatch" -type f -regex '.*/[0-9a-f]*' | wc -l)
	[ "$steps" -gt 0 ] && ok || bad "steps: the steps' outputs are kept"
	printf '# a comment\n' >>st/Makefile
	run diff --cache-dir "$C" -v --color never st
	cmp -s ref.out .out && ok || bad "steps: a file changed elsewhere, same diff"
	expect_err '^preemptify: 0 spatch processes \(0 file runs shared a process, [1-9][0-9]* answered by the cache\)' \
		"steps: every step answered by the cache when no input changed"
	printf '\nstatic int fastnet_extra(void)\n{\n\tint cpu = smp_processor_id();\n\n\tfastnet_note(cpu);\n\treturn 0;\n}\n' >>st/drivers/net/fastnet.c
	"$BIN" diff --no-cache --color never st >ref3.out 2>/dev/null
	run diff --cache-dir "$C" -v --color never st
	cmp -s ref3.out .out && ok || bad "steps: a changed file's diff is the uncached one"
	expect_err '^preemptify: [1-9][0-9]* spatch process' "steps: a changed input runs spatch again"
	# every step entry damaged: each is rebuilt, never trusted
	for f in "$C"/spatch/*; do printf 'x' | dd of="$f" bs=1 seek=80 conv=notrunc 2>/dev/null; done
	printf '# again\n' >>st/Makefile
	"$BIN" diff --no-cache --color never st >ref4.out 2>/dev/null
	run diff --cache-dir "$C" -v --color never st
	cmp -s ref4.out .out && ok || bad "steps: damaged entries give the uncached diff"
	expect_err '^preemptify: [1-9][0-9]* spatch process.*, 0 answered by the cache\)' "steps: damaged entries are not used"
	run cache --cache-dir "$C"
	expect_out '^spatch    [1-9][0-9]* steps, [1-9][0-9]* bytes' "cache: shows the steps' part"
	run cache --cache-dir "$C" clean
	[ -z "$(find "$C" -type f -regex '.*/[0-9a-f]*')" ] && ok || bad "cache clean empties the steps' part too"
	rm -rf "$C"
fi

# preemptify cache: where, how many, how big; clean empties it
run scan --cache-dir "$C" trees/fastnet
run cache --cache-dir "$C"
expect_rc 0 "cache shows"
expect_out "^location  $C\$" "cache: the location"
expect_out '^entries   1$' "cache: the entries"
expect_out '^bytes     [1-9][0-9]* ' "cache: the bytes"
n=$(( $(entries) + $(find "$C/files" -maxdepth 1 -type f -regex '.*/[0-9a-f]*' | wc -l) ))
run cache --cache-dir "$C" clean
expect_out "^removed $n entries from " "cache clean: says what it removed (the run's entry and the files' results)"
[ "$(entries)" -eq 0 ] && ok || bad "cache clean empties it"
# whatever directory --cache-dir names, clean removes entries only: a
# user's file named like one (32 hex digits, .tmp-*) stays
mkdir -p own
printf 'int x;\n' > own/0123456789abcdef0123456789abcdef
printf 'notes\n' > own/.tmp-notes
run cache --cache-dir own clean
expect_rc 0 "cache clean of a directory without entries"
[ -f own/0123456789abcdef0123456789abcdef ] && [ -f own/.tmp-notes ] && ok ||
	bad "cache clean removed a file that is not an entry"
# nor does a run replace a file of the user's that has an entry's name
# (XDG_CACHE_HOME is not part of the key, so both runs want one name)
XDG_CACHE_HOME=$PWD/x1 "$BIN" scan trees/fastnet >/dev/null 2>&1
name=$(ls x1/preemptify | grep -E '^[0-9a-f]{32}$' | head -n 1)
mkdir -p x2/preemptify
printf 'keep me\n' > "x2/preemptify/$name"
XDG_CACHE_HOME=$PWD/x2 "$BIN" scan trees/fastnet >x2.out 2>x2.err
rc=$?
[ "$rc" -eq 1 ] && cmp -s x2.out <(XDG_CACHE_HOME=$PWD/x1 "$BIN" scan --no-cache trees/fastnet 2>/dev/null) && ok ||
	bad "a user's file where an entry would go: the run still answers"
[ -n "$name" ] && [ "$(cat "x2/preemptify/$name")" = "keep me" ] && ok || bad "a user's file named like an entry was replaced"
grep -q 'not a cache entry: not replaced' x2.err && ok || { out=$(cat x2.err); bad "the warning names the file"; }
run cache --cache-dir "$C" wipe
expect_rc 2 "cache: an unknown action is a usage error"

finish
