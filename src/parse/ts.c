#include "parse/ts.h"

#include <string.h>

TSNode ts_null(void)
{
	TSNode n;
	memset(&n, 0, sizeof n);
	return n;
}

bool ts_type_is(TSNode n, const char *type)
{
	return !ts_node_is_null(n) && strcmp(ts_node_type(n), type) == 0;
}

TSNode ts_field(TSNode n, const char *field)
{
	if (ts_node_is_null(n))
		return n;
	return ts_node_child_by_field_name(n, field, (uint32_t)strlen(field));
}

bool ts_text_is(TSNode n, const char *src, const char *text)
{
	if (ts_node_is_null(n))
		return false;
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	size_t len = strlen(text);
	return e - s == len && memcmp(src + s, text, len) == 0;
}

size_t ts_call_name(TSNode call, const char *src, const char **out)
{
	TSNode f = ts_field(call, "function");
	if (!ts_type_is(f, "identifier"))
		return 0;
	*out = src + ts_node_start_byte(f);
	return ts_node_end_byte(f) - ts_node_start_byte(f);
}

bool ts_call_is(TSNode call, const char *src, const char *name)
{
	const char *callee;
	size_t len = ts_call_name(call, src, &callee);
	return len && len == strlen(name) && memcmp(callee, name, len) == 0;
}

TSNode ts_strip_parens(TSNode n, const char *src)
{
	for (;;) {
		if (ts_type_is(n, "parenthesized_expression") && ts_node_named_child_count(n) == 1) {
			n = ts_node_named_child(n, 0);
			continue;
		}
		if (ts_type_is(n, "call_expression")) {
			const char *name;
			size_t len = ts_call_name(n, src, &name);
			TSNode args = ts_field(n, "arguments");
			if (((len == 6 && memcmp(name, "likely", 6) == 0) ||
			     (len == 8 && memcmp(name, "unlikely", 8) == 0)) &&
			    ts_node_named_child_count(args) == 1) {
				n = ts_node_named_child(args, 0);
				continue;
			}
		}
		return n;
	}
}

void ts_walk(TSNode root, bool (*visit)(TSNode n, void *ctx), void *ctx)
{
	TSTreeCursor c = ts_tree_cursor_new(root);
	bool descend = visit(root, ctx);
	for (;;) {
		if (descend && ts_tree_cursor_goto_first_child(&c)) {
			descend = visit(ts_tree_cursor_current_node(&c), ctx);
			continue;
		}
		for (;;) {
			if (ts_tree_cursor_goto_next_sibling(&c))
				break;
			if (!ts_tree_cursor_goto_parent(&c)) {
				ts_tree_cursor_delete(&c);
				return;
			}
		}
		descend = visit(ts_tree_cursor_current_node(&c), ctx);
	}
}

unsigned ts_count_errors(TSNode n)
{
	if (ts_node_is_null(n) || !ts_node_has_error(n))
		return 0;
	unsigned c = ts_node_is_missing(n) || ts_type_is(n, "ERROR");
	uint32_t k = ts_node_child_count(n);
	for (uint32_t i = 0; i < k; i++)
		c += ts_count_errors(ts_node_child(n, i));
	return c;
}
