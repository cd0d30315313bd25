/*
 * Findings: what the analysis concluded about one candidate site, and the
 * edits a rewrite would make for it. Every later stage (emit, rewrite, git)
 * consumes these; none of them re-derives a verdict.
 */
#ifndef PREEMPTIFY_FINDING_H
#define PREEMPTIFY_FINDING_H

#include "parse/diagnostic.h"

/* One per row of rules/rules.def: RULE_P001 ... RULE_P008. */
enum rule_id {
#define RULE(id, code, name, sev, summary, help, check, sites, fixes, props, words) RULE_##id,
#include "rules/rules.def"
	RULE_COUNT
};

/* What code asks of a rule, a column of rules/rules.def (its header says what each means). */
enum rule_prop {
	PROP_PREFILTERED = 1u << 0,
	PROP_GUARD = 1u << 1,
	PROP_TREE_CONTEXT = 1u << 2,
	PROP_ARRAY_SLOT = 1u << 3,
	PROP_ARRAY_DECL = 1u << 4,
	PROP_PREEMPT = 1u << 5,
};

enum severity { SEV_ERROR, SEV_WARNING, SEV_NOTE };
enum confidence { CONF_HIGH, CONF_MEDIUM, CONF_LOW };

/* How a later rewrite changes the site; FIX_NONE = report only. One per row of rules/fixes.def. */
enum fix_kind {
#define FIX(id, name, cocci, region, alone, alone_short, clause, use_item, token) FIX_##id,
#include "rules/fixes.def"
	FIX_COUNT
};

/* A rule lists at most RULE_MAX_FIXES - 1 fix kinds; the list ends with FIX_NONE. */
#define RULE_MAX_FIXES 5
/* A rule lists at most RULE_MAX_WORDS words (rules/rules.def). */
#define RULE_MAX_WORDS 32

/* How a commit message names a fix kind (rows of rules/fixes.def). */
struct fix_phrases {
	const char *alone, *alone_short; /* the summary when it is the only kind */
	const char *clause;   /* a whole clause of a combined summary, or NULL */
	const char *use_item; /* else an item of the shared "use A, B and C" clause */
	const char *token;    /* its name in the compact "make preempt-safe: a, b" form */
};

/*
 * One textual change, anchored on a syntax node the analysis saw. The
 * rewrite stage hands these to Coccinelle, which must reproduce them; it
 * never invents an edit of its own.
 */
enum edit_op {
	EDIT_REPLACE,       /* replace [start, end) with text */
	EDIT_INSERT_BEFORE, /* insert statement `text` before the statement at start */
	EDIT_INSERT_AFTER,  /* insert statement `text` after the statement [start, end) */
};

struct edit {
	enum edit_op op;
	struct srcpos start, end; /* span of the anchor node */
	const char *node;         /* tree-sitter node type of the anchor, static */
	char *text;               /* replacement / inserted text, owned */
	/*
	 * Insertions only: the anchor is the lone body of an if, else or loop,
	 * so the anchor and the new statement go in braces (as spatch writes it).
	 */
	bool wrap;
	bool in_define; /* a replacement inside a #define body (spatch rewrites macro bodies it parses) */
	/* Insertions: the blanks before the anchor on its first line (cut at 31 bytes), for SARIF fixes. */
	char indent[32];
	/* Insert-after: the end of the anchor's last line when only a comment follows it
	 * there (the statement goes after the comment, as spatch puts it); line 0 otherwise. */
	struct srcpos tail;
	/*
	 * A removal preemptify makes itself, after spatch: the directive line of
	 * a conditional that held only struct fields spatch removes (spatch
	 * removes the fields, never the #if around them).
	 */
	bool by_text;
};

struct finding {
	enum rule_id rule;
	char *file;     /* as given on the command line / walked, owned */
	struct srcpos pos;
	struct srcpos end; /* end of the site's node, exclusive; line 0 when unknown */
	char *function; /* enclosing function, or NULL at file scope; owned */
	char *message;  /* one line, owned */
	enum severity severity;
	enum confidence confidence;
	enum fix_kind fix; /* FIX_NONE when not fixable */
	char *evidence;    /* why: the analysis' reasoning, owned */
	char *fix_note;    /* why not fixable / what the fix drops; may be NULL */
	bool protected_site; /* considered and found protected: --verbose only */
	/*
	 * P008 of an array defined in one file and used in others: its name
	 * (owned; NULL otherwise), and whether this file indexes it by the
	 * running CPU. The files of one array convert together or not at all.
	 */
	char *array;
	bool array_this_cpu;
	/* and whether every use of it by the running CPU in this file already has preemption off */
	bool array_protected;
	/* P001/P002 through a CPU number: the line of its smp_processor_id() read, or 0 */
	unsigned cpu_read_line;
	uint64_t file_hash;  /* hash_bytes() of the text it was planned on */
	size_t file_len;
	VEC(struct edit) edits; /* the planned change; empty when fix == FIX_NONE */
	/* add_edit(): when equal to edits.len, the edits' start offsets increase strictly */
	size_t edits_ordered;
};

typedef VEC(struct finding) finding_vec;

const char *rule_code(enum rule_id r);  /* "P003" */
const char *rule_name(enum rule_id r);  /* "cpu-id" */
const char *rule_summary(enum rule_id r); /* one line */
const char *rule_help(enum rule_id r);  /* a paragraph */
/* The level its findings usually have (a finding may still differ). */
enum severity rule_severity(enum rule_id r);
/* The fix kinds R may plan, ending with FIX_NONE (first FIX_NONE: report only). Static. */
const enum fix_kind *rule_fixes(enum rule_id r);
/* Does R have property P (its row's props column)? */
bool rule_has(enum rule_id r, enum rule_prop p);
/* The rules with property P, as a scan_options.rules mask (bit 1u << id). */
unsigned rule_mask(enum rule_prop p);
/* R's words (its row's words column), NULL-terminated. Static. */
const char *const *rule_words(enum rule_id r);
/* True when R plans no fix at all (NO_FIXES): it only reports. */
bool rule_report_only(enum rule_id r);
/* Parses "P003" or "cpu-id"; -1 if neither. */
int rule_parse(const char *s);
const char *severity_name(enum severity s);     /* "error", "warning", "note" */
const char *confidence_name(enum confidence c); /* "high", ... */
const char *fix_name(enum fix_kind f);          /* "get-cpu", ...; "none" */
/* The semantic patch applying F, a file name in cocci/ ("get-cpu.cocci"); NULL for FIX_NONE. */
const char *fix_cocci(enum fix_kind f);
/* F's commit-message phrases; all NULL for FIX_NONE. Static. */
const struct fix_phrases *fix_phrases(enum fix_kind f);
int fix_parse(const char *s);
/*
 * Does a fix of kind F open a region (get/put, a per-CPU access) that can
 * unbalance a function, move a sleep inside it or leave a new site? The
 * others replace a test or add a call in place (rules/fixes.def).
 */
bool fix_opens_region(enum fix_kind f);

/* Makes F report-only: drops its edits, FIX_NONE, NOTE (taken) says why. */
void finding_unfixable(struct finding *f, char *note);
void finding_release(struct finding *f);
/* Orders by file, line, column, rule. */
int finding_cmp(const void *a, const void *b);

#endif
