#!/usr/bin/env bash
# The prefilter never changes an answer. Usage: prefilter.sh BIN SRC_DIR
#  1. Every fixture set (fixtures/drivers, each tree of fixtures/trees, the
#     shim tests) scanned with and without --no-prefilter gives the same
#     findings for every rule the registry marks PROP_PREFILTERED.
#  2. A file whose only word is one of a rule's words (rules.def, WORDS) is
#     parsed; so is one per site word of grammars/sites.scm's rules.
#  3. P006 and P007 (their own prefilter): a file whose only word is a locking
#     call is parsed; a sleep alone, or with a lock only in a comment, is not;
#     P006 in each kind of atomic function, its only trigger, is found.
set -u
bin=$(readlink -f "$1") src=$(readlink -f "$2")
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# the registry's rows: which rules are prefiltered, and every rule's words
def=$src/src/rules/rules.def
rules=$(awk '/^RULE\(/ { id = substr($1, 6); sub(/,.*/, "", id) } /PROP_PREFILTERED/ && id { print id }' "$def" | sort -u)
words=$(sed -n 's/^[[:space:]]*WORDS(\(.*\)))*$/\1/p' "$def" | tr ',' '\n' | sed 's/[[:space:]"]//g; s/)*$//' | sort -u)
[ -n "$rules" ] && [ -n "$words" ] || { echo "FAIL: cannot read $def"; exit 1; }
pattern=$(echo "$rules" | paste -sd'|')

findings() { # DIR ARGS...: the prefiltered rules' findings of a scan of DIR, one per line
	local dir=$1; shift
	(cd "$dir" && "$bin" scan -j 2 -f json "$@" . 2>/dev/null) | grep -E "\"rule\": \"($pattern)\"" || true
}

sets="$src/fixtures/drivers $src/fixtures/shim-tests"
for t in "$src"/fixtures/trees/*/; do sets="$sets ${t%/}"; done
for s in $sets; do
	findings "$s" >"$tmp/default"
	findings "$s" --no-prefilter >"$tmp/all"
	n=$(wc -l <"$tmp/all")
	if cmp -s "$tmp/default" "$tmp/all"; then
		echo "ok: ${s#$src/}: $n findings of $pattern, same with --no-prefilter"
	else
		bad "${s#$src/}: --no-prefilter changes the findings of $pattern"
		diff "$tmp/default" "$tmp/all" | head -20
	fi
done

# one file per word: the word is its only trigger, and the file is parsed
for w in $words; do
	printf 'void f(void)\n{\n\t%s(0);\n}\n' "$w" >"$tmp/only.c"
	parsed=$("$bin" scan -f json "$tmp/only.c" 2>/dev/null | sed -n 's/.*"parsed": \([0-9]*\).*/\1/p')
	[ "$parsed" = 1 ] && echo "ok: a file whose only word is $w is parsed" || bad "a file whose only word is $w is not parsed"
done
printf 'void f(void)\n{\n\tg(0);\n}\n' >"$tmp/none.c"
parsed=$("$bin" scan -f json "$tmp/none.c" 2>/dev/null | sed -n 's/.*"parsed": \([0-9]*\).*/\1/p')
[ "$parsed" = 0 ] && echo "ok: a file without any word is not parsed" || bad "a file without any word is parsed ($parsed)"

# the findings a lone site word brings: the same with and without the prefilter
while IFS='|' read -r rule body; do
	printf 'struct s { int x; };\nextern struct s v;\nvoid f(void)\n{\n\t%s\n}\n' "$body" >"$tmp/site.c"
	a=$("$bin" scan -f json "$tmp/site.c" 2>/dev/null | grep -c "\"rule\": \"$rule\"")
	b=$("$bin" scan -f json --no-prefilter "$tmp/site.c" 2>/dev/null | grep -c "\"rule\": \"$rule\"")
	[ "$a" -ge 1 ] && [ "$a" = "$b" ] && echo "ok: $rule from \`$body\` alone" ||
		bad "$rule from \`$body\` alone: $a findings, $b with --no-prefilter"
done <<'SITES'
P002|__get_cpu_var(v).x++;
P003|g(smp_processor_id());
P004|if (current->need_resched) schedule();
P004|current->policy |= SCHED_YIELD; schedule();
P005|preempt_enable_no_resched();
P005|preempt_enable_noresched();
SITES
# P006 and P007 have no words of their own but a prefilter (rule_hooks.wants, analysis/api_words.c):
# a locking call of analysis/apis.def is enough for P007, a call that may sleep and something
# that turns preemption off for P006
for w in $(sed -n 's/^API("\([A-Za-z0-9_]*\)".*/\1/p' "$src/src/analysis/apis.def") lock_kernel; do
	printf 'void f(void)\n{\n\t%s(0);\n}\n' "$w" >"$tmp/only.c"
	parsed=$("$bin" scan -f json "$tmp/only.c" 2>/dev/null | sed -n 's/.*"parsed": \([0-9]*\).*/\1/p')
	[ "$parsed" = 1 ] || bad "a file whose only word is the locking call $w is not parsed"
done
echo "ok: a file whose only word is a locking call of apis.def is parsed"
not_parsed() { # NAME TEXT: a file the prefilter leaves alone
	printf '%b' "$2" >"$tmp/$1.c"
	parsed=$("$bin" scan -f json "$tmp/$1.c" 2>/dev/null | sed -n 's/.*"parsed": \([0-9]*\).*/\1/p')
	[ "$parsed" = 0 ] && echo "ok: $1 is not parsed" || bad "$1 is parsed"
}
not_parsed "a sleep alone" 'void f(void)\n{\n\tschedule();\n}\n'
not_parsed "a sleep with a lock named in a comment or a string" \
	'void f(void)\n{\n\tschedule(); /* spin_lock(&l) */\n\tputs("cli()");\n}\n'
# each way a function is atomic by construction, its only trigger beside the sleep
while IFS='|' read -r what text; do
	printf '%b' "$text" >"$tmp/ctx.c"
	a=$("$bin" scan -f json "$tmp/ctx.c" 2>/dev/null | grep -c '"rule": "P006"')
	b=$("$bin" scan -f json --no-prefilter "$tmp/ctx.c" 2>/dev/null | grep -c '"rule": "P006"')
	[ "$a" -ge 1 ] && [ "$a" = "$b" ] && echo "ok: P006 in $what" ||
		bad "P006 in $what: $a findings, $b with --no-prefilter"
done <<'CONTEXTS'
a lock's region|void f(void)\n{\n\tspin_lock(&l);\n\tschedule();\n\tspin_unlock(&l);\n}\n
interrupts off|void f(void)\n{\n\tcli();\n\tschedule();\n\tsti();\n}\n
a 2.4 interrupt handler|void h(int irq, void *d, struct pt_regs *r)\n{\n\tschedule();\n}\n
a timer's .function|static void t(unsigned long d)\n{\n\tschedule();\n}\nstatic struct timer_list tl = { .function = t };\n
a timer_list initialiser|static void t(unsigned long d)\n{\n\tschedule();\n}\nstatic struct timer_list tl = { {0, 0}, 0, 0, t };\n
a tasklet|static void t(unsigned long d)\n{\n\tschedule();\n}\nDECLARE_TASKLET(tk, t, 0);\n
a packet handler|static int rcv(void *a, void *b, void *c)\n{\n\tschedule();\n\treturn 0;\n}\nstatic struct packet_type pt = { 0, 0, rcv };\n
an IPI handler|static void t(void *d)\n{\n\tkmalloc(4, GFP_KERNEL);\n}\nvoid s(void)\n{\n\tsmp_call_function(t, 0, 0, 1);\n}\n
a function calling irq_enter()|void f(void)\n{\n\tirq_enter(0, 1);\n\tschedule();\n}\n
CONTEXTS
exit $fail
