#!/usr/bin/env bash
# The files' part of the result cache: after one file of a tree changed,
# the run's entry cannot answer, but every other file's result is reused
# (the changed file is scanned again), and the answer is the --no-cache
# one byte for byte, scan and diff; a change in one file that changes a
# caller's context in another makes that other file's answer change; a
# damaged file entry is rebuilt, never trusted.
. "$(dirname "$0")/lib.sh"

C="$WORK/c"
cp -r "$SRC/fixtures/trees" trees
# reuse N M: the last run's -v says N of M file results were reused
reuse_line() { printf '%s\n' "$err" | sed -n 's/^preemptify: cache: \([0-9]*\) of \([0-9]*\) file results reused from earlier runs, the others scanned$/\1 \2/p'; }
fentries() { find "$C/files" 2>/dev/null -maxdepth 1 -type f -regex '.*/[0-9a-f]*' | wc -l; }
have_spatch=false
command -v spatch >/dev/null && have_spatch=true

# every fixture tree: warm the cache, change one file a rule looks at, and
# each output is the uncached one, with the other files' results reused
for t in bringup cpustat ctxswitch fastnet fastring half26 walk; do
	rm -rf "$C" w && cp -r "trees/$t" w
	victim=$(cd w && grep -rlE --include='*.c' 'smp_processor_id|need_resched|NR_CPUS|spin_lock|preempt_' . | sort | sed -n 1p)
	[ -n "$victim" ] && ok || { bad "$t: a file to change"; continue; }
	cmds=("scan -v" "scan -f json" "scan -v -f json")
	$have_spatch && cmds+=("diff --color never")
	for args in "${cmds[@]}"; do
		run $args --cache-dir "$C" w
	done
	[ "$(fentries)" -gt 0 ] && ok || bad "$t: the files' results are kept"
	printf '/* changed %s */\n' "$t" >>"w/$victim"
	for args in "${cmds[@]}"; do
		"$BIN" $args --no-cache w >ref.out 2>/dev/null; want=$?
		run $args --cache-dir "$C" w
		[ "$rc" -eq "$want" ] && cmp -s ref.out .out && ok ||
			bad "$t $args: one file changed, the cached answer is the uncached one"
	done
	run scan -v --cache-dir "$C" -q w # another command line: the run's entry cannot answer, the files' can
	run scan -v --cache-dir "$C" w
	printf '/* again */\n' >>"w/$victim"
	run scan -v --cache-dir "$C" w
	read -r used asked < <(reuse_line)
	# (a tree with one file to parse has nothing else to reuse)
	[ -n "${used:-}" ] && { [ "$used" -gt 0 ] || [ "$asked" -eq 1 ]; } && [ "$used" -lt "$asked" ] && ok ||
		bad "$t: the unchanged files' results are reused, the changed file's not (${used:-none} of ${asked:-none})"
	unset used asked
	# the tree index's analyses of the other files are reused too (fastnet's index reads several)
	tree_line=$(printf '%s\n' "$err" | sed -n 's/^preemptify: cache: \([0-9]*\) of \([0-9]*\) analyses of the tree index.s files reused from earlier runs, the others made$/\1 \2/p')
	if [ "$t" = fastnet ]; then
		read -r used asked <<<"$tree_line"
		[ -n "${used:-}" ] && [ "$used" -gt 0 ] && [ "$used" -lt "$asked" ] && ok ||
			bad "$t: the tree index reads the unchanged files' analyses back (${used:-none} of ${asked:-none})"
		unset used asked
	fi
	# a rewritten file's validation is reused when its texts, edits and scan context recur
	if $have_spatch && [ "$t" = fastnet ]; then
		run diff -v --color never --cache-dir "$C" w
		printf '/* once more */\n' >>"w/$victim"
		run diff -v --color never --cache-dir "$C" w
		vline=$(printf '%s\n' "$err" | sed -n 's/^preemptify: cache: \([0-9]*\) of \([0-9]*\) validations of rewritten files reused from earlier runs, the others made$/\1 \2/p')
		read -r used asked <<<"$vline"
		[ -n "${used:-}" ] && [ "$used" -gt 0 ] && ok ||
			bad "$t: the unchanged files' validations are reused (${used:-none} of ${asked:-none})"
		unset used asked
	fi
done

# a caller's lock dropped in one file changes the verdict of its callee in
# another (a file whose own bytes did not change); and back again
rm -rf "$C" w && cp -r trees/fastnet w
run scan -f json --cache-dir "$C" w
run scan -v --cache-dir "$C" w
if printf '%s\n' "$out" | grep -q 'include/net/fastq.h:21:12: warning'; then bad "fastq_note_cpu's caller holds a lock"; else ok; fi
cp w/drivers/net/fastnet.c locked.c
sed -i 's/^\tspin_lock(&fastnet_q.lock);$/\t\/\* no lock \*\//; s/^\tspin_unlock(&fastnet_q.lock);$/\t\/\* no lock \*\//' \
	w/drivers/net/fastnet.c
cmp -s locked.c w/drivers/net/fastnet.c && bad "the caller's lock was dropped" || ok
# (-j 1: a command line of its own, which the run's entry of the first run cannot answer)
for round in unlocked locked; do
	"$BIN" scan -v -j 1 --no-cache w >ref.out 2>/dev/null
	run scan -v -j 1 --cache-dir "$C" w
	cmp -s ref.out .out && ok || bad "$round: the cached answer is the uncached one"
	if [ $round = unlocked ]; then
		expect_out 'w/include/net/fastq.h:21:12: warning: .*\[P003' "$round: the callee in another file is scanned again"
	else
		expect_no_out 'fastq.h:21:12: warning' "$round: the callee is protected again"
	fi
	read -r used asked < <(reuse_line)
	[ -n "${used:-}" ] && [ "$used" -gt 0 ] && ok || bad "$round: the files the change cannot reach are reused"
	unset used asked
	"$BIN" scan -j 1 -f json --no-cache w >ref.out 2>/dev/null
	run scan -j 1 -f json --cache-dir "$C" w
	cmp -s ref.out .out && ok || bad "$round: JSON, the cached answer is the uncached one"
	cp locked.c w/drivers/net/fastnet.c
done

# an analysis of the index that took a struct field's verdict from the other
# files (ring_rx() stored only in ->receive, which no other file accessed) is
# not reused once another file accesses the field, though its own bytes and
# the index's state did not change
rm -rf "$C" w && cp -r trees/fastring w
run scan -v --cache-dir "$C" w
expect_out 'w/net/core/ringcore.c:8:16: note: protected' "ring_rx() is called only through the file's ->receive"
sed -i 's|^\treturn r->transmit(r);|\tr->receive(r);\n\treturn r->transmit(r);|' w/drivers/net/ring_diag.c
"$BIN" scan -v --no-cache w >ref.out 2>/dev/null
run scan -v --cache-dir "$C" w
cmp -s ref.out .out && ok || bad "a field accessed in another file: the cached answer is the uncached one"
expect_out 'w/net/core/ringcore.c:8:16: warning' "ring_rx() is called through ->receive from elsewhere too"
read -r used asked < <(printf '%s\n' "$err" | sed -n 's/^preemptify: cache: \([0-9]*\) of \([0-9]*\) analyses of the tree index.s files reused.*/\1 \2/p')
[ -n "${used:-}" ] && [ "$used" -gt 0 ] && ok || bad "fastring: the index's analyses the change does not reach are reused"
unset used asked

# a lock macro of the tree's headers read as the lock it takes: a file using
# it is scanned again when the header changes it, though its own bytes did not
rm -rf "$C" hl && mkdir -p hl/include/linux hl/include/asm-demo hl/drivers/demo
printf 'VERSION = 2\nPATCHLEVEL = 4\n' >hl/Makefile
printf '#define dev_lock(d)\tdo { spin_lock(&(d)->lock); } while (0)\n#define dev_unlock(d)\tspin_unlock(&(d)->lock)\n' \
	>hl/include/asm-demo/dev.h
cat >hl/drivers/demo/poke.c <<'C'
#include <linux/smp.h>
#include <asm/dev.h>
void note(int cpu);
struct dev { spinlock_t lock; };

void dev_poke(struct dev *d)
{
	dev_lock(d);
	note(smp_processor_id());
	dev_unlock(d);
}
C
run scan --cache-dir "$C" hl
expect_no_out 'poke.c:9:7: warning' "the header's dev_lock() protects the CPU read"
printf '#define dev_lock(d)\tdo { } while (0)\n#define dev_unlock(d)\tdo { } while (0)\n' >hl/include/asm-demo/dev.h
"$BIN" scan --no-cache hl >ref.out 2>/dev/null
run scan --cache-dir "$C" hl
cmp -s ref.out .out && ok || bad "a header's lock macro changed: the cached answer is the uncached one"
expect_out 'poke.c:9:7: warning' "dev_lock() takes nothing now: the CPU read is preemptible"

# damaged file entries (a byte flipped, cut short, another version's) are
# never trusted: the answer is the uncached one, and they are rebuilt
for damage in flip truncate foreign; do
	rm -rf "$C" w && cp -r trees/fastnet w
	"$BIN" scan -v --no-cache w >ref.out 2>/dev/null
	run scan -v --cache-dir "$C" w
	n=$(fentries)
	[ "$n" -gt 0 ] && ok || bad "$damage: file entries to damage"
	for e in $(find "$C/files" -maxdepth 1 -type f -regex '.*/[0-9a-f]*'); do
		case $damage in
		flip) printf 'X' | dd of="$e" bs=1 seek=120 conv=notrunc status=none ;;
		truncate) truncate -s 100 "$e" ;;
		foreign) sed -i '2s/^version .*/version 0.0.0-other/' "$e" ;;
		esac
	done
	printf '# changed\n' >>w/Makefile # the run's entry cannot answer
	run scan -v --cache-dir "$C" w
	cmp -s ref.out .out && ok || bad "$damage: damaged entries give the uncached answer"
	read -r used asked < <(reuse_line)
	[ "${used:-x}" = 0 ] && ok || bad "$damage: no damaged entry is used (${used:-none} of ${asked:-none})"
	unset used asked
	printf '# again\n' >>w/Makefile
	run scan -v --cache-dir "$C" w
	cmp -s ref.out .out && ok || bad "$damage: the rebuilt entries give the uncached answer"
	read -r used asked < <(reuse_line)
	[ -n "${used:-}" ] && [ "$used" -gt 0 ] && [ "$used" = "$asked" ] && ok ||
		bad "$damage: the entries were rebuilt (${used:-none} of ${asked:-none} reused)"
	unset used asked
done

# --no-cache neither reads nor writes them; `preemptify cache` shows them, clean removes them
rm -rf "$C"
run scan -v --no-cache --cache-dir "$C" trees/fastnet
[ ! -e "$C" ] && ok || bad "--no-cache writes no file result"
expect_no_err 'file results reused' "--no-cache says nothing of reuse"
run scan --cache-dir "$C" trees/fastnet
# a replayed -v run does not repeat what the stored run reused: it reused its whole output
run scan -v --cache-dir "$C" trees/fastnet
expect_err 'file results reused from earlier runs' "-v says what a run reused"
run scan -v --cache-dir "$C" trees/fastnet
expect_err 'output reused from an earlier run$' "the second -v run is replayed"
expect_no_err 'results reused from earlier runs|analyses of the tree index.s files reused' "a replay does not repeat the stored run's reuse"
run cache --cache-dir "$C"
expect_out '^files     [1-9][0-9]* file results?, [1-9][0-9]* bytes' "cache: shows the files' part"
run cache --cache-dir "$C" clean
[ "$(fentries)" -eq 0 ] && ok || bad "cache clean empties the files' part"

finish
