#!/usr/bin/env bash
# Predicate macros of the tree's headers (2.4 asm-ia64/sn/pda.h's
# `#define enable_shub_wars_1_1() (pda.shub_1_1_found)`): a lower-case
# function-like #define every header gives as an expression that calls and
# changes nothing is read as one value, so a lock taken under one test of
# it and released under a second, with no write between, is balanced (no
# P007). A name another header defines as a function, or whose body
# calls something, is an unknown call, which may change: P007. A test the
# first does not decide still leaves the lock held.
. "$(dirname "$0")/lib.sh"

mkdir -p t/include/linux t/include/asm-demo t/include/asm-other t/drivers/demo
printf 'VERSION = 2\nPATCHLEVEL = 4\n' > t/Makefile
cat > t/include/asm-demo/hub.h <<'H'
struct hub_info { int wars_found; int rev; };
extern struct hub_info hub;
#define hub_wars()	(hub.wars_found)
#define hub_rev_at_least(r) \
	(hub.rev >= (r) && sizeof(struct hub_info) > 0)
#define hub_busy()	(hub_poll() != 0)
#define hub_mixed()	(hub.rev)
H
printf 'extern int hub_mixed(void);\n' > t/include/asm-other/hub.h
cat > t/drivers/demo/hub.c <<'C'
#include <asm/hub.h>
extern spinlock_t hub_lock;
void hub_write(int v);
int hub_poll(void);

void hub_send(int v)
{
	unsigned long flags;

	if (hub_wars())
		spin_lock_irqsave(&hub_lock, flags);
	hub_write(v);
	if (hub_wars())
		spin_unlock_irqrestore(&hub_lock, flags);
}

void hub_send_rev(int v)
{
	if (hub_rev_at_least(2))
		spin_lock(&hub_lock);
	hub_write(v);
	if (hub_rev_at_least(2))
		spin_unlock(&hub_lock);
}

void hub_send_busy(int v)
{
	if (hub_busy())
		spin_lock(&hub_lock);
	hub_write(v);
	if (hub_busy())
		spin_unlock(&hub_lock);
}

void hub_send_mixed(int v)
{
	if (hub_mixed())
		spin_lock(&hub_lock);
	hub_write(v);
	if (hub_mixed())
		spin_unlock(&hub_lock);
}

void hub_send_other(int v)
{
	if (hub_wars())
		spin_lock(&hub_lock);
	hub_write(v);
	if (hub_rev_at_least(3))
		spin_unlock(&hub_lock);
}
C
run scan t
expect_rc 1 "header predicates: findings"
expect_no_out '^t/drivers/demo/hub\.c:11:3: .*\[P007\]' "two tests of a header's pure predicate: one value, balanced"
expect_no_out '^t/drivers/demo/hub\.c:20:3: .*\[P007\]' "a predicate with a parameter and sizeof: one value"
expect_out '^t/drivers/demo/hub\.c:29:3: warning: spin_lock\(\) not balanced on every path \[P007\]' \
	"a predicate that calls a function may change between the tests"
expect_out '^t/drivers/demo/hub\.c:38:3: warning: spin_lock\(\) not balanced on every path \[P007\]' \
	"a name another header declares as a function is a call"
expect_out '^t/drivers/demo/hub\.c:47:3: warning: spin_lock\(\) not balanced on every path \[P007\]' \
	"a test the first does not decide still leaves the lock held"
finish
