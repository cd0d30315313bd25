/* A strict JSON checker: a recursive descent over RFC 8259, UTF-8 checked in strings. */
#include "json_check.h"

#include <string.h>

struct in {
	const unsigned char *p, *end;
	int depth;
};

static void skip_ws(struct in *in)
{
	while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
		in->p++;
}

/* One UTF-8 sequence at in->p (not ASCII): shortest form, no surrogates, <= U+10FFFF. */
static bool utf8_char(struct in *in)
{
	unsigned c = *in->p, n, cp;
	if (c >= 0xc2 && c <= 0xdf)
		n = 1, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, cp = c & 0x07;
	else
		return false;
	if ((size_t)(in->end - in->p) <= n)
		return false;
	for (unsigned i = 1; i <= n; i++) {
		if ((in->p[i] & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | (in->p[i] & 0x3f);
	}
	if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
		return false;
	in->p += n + 1;
	return true;
}

static bool string(struct in *in)
{
	in->p++; /* the opening quote */
	while (in->p < in->end) {
		unsigned c = *in->p;
		if (c == '"') {
			in->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			if (++in->p >= in->end)
				return false;
			if (*in->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (in->p + i >= in->end || !strchr("0123456789abcdefABCDEF", in->p[i]) || !in->p[i])
						return false;
				in->p += 5;
			} else if (*in->p && strchr("\"\\/bfnrt", *in->p)) {
				in->p++;
			} else {
				return false;
			}
		} else if (c < 0x80) {
			in->p++;
		} else if (!utf8_char(in)) {
			return false;
		}
	}
	return false;
}

static bool digits(struct in *in)
{
	const unsigned char *s = in->p;
	while (in->p < in->end && *in->p >= '0' && *in->p <= '9')
		in->p++;
	return in->p > s;
}

static bool number(struct in *in)
{
	if (*in->p == '-')
		in->p++;
	if (in->p < in->end && *in->p == '0')
		in->p++;
	else if (!digits(in))
		return false;
	if (in->p < in->end && *in->p == '.') {
		in->p++;
		if (!digits(in))
			return false;
	}
	if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
		in->p++;
		if (in->p < in->end && (*in->p == '+' || *in->p == '-'))
			in->p++;
		if (!digits(in))
			return false;
	}
	return true;
}

static bool literal(struct in *in, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(in->end - in->p) < n || memcmp(in->p, word, n) != 0)
		return false;
	in->p += n;
	return true;
}

static bool value(struct in *in);

/* An object or array: OPEN ... CLOSE, members "key": value when IS_OBJECT. */
static bool container(struct in *in, char close, bool is_object)
{
	if (++in->depth > 256)
		return false;
	in->p++;
	skip_ws(in);
	if (in->p < in->end && *in->p == close) {
		in->p++;
		in->depth--;
		return true;
	}
	for (;;) {
		skip_ws(in);
		if (is_object) {
			if (in->p >= in->end || *in->p != '"' || !string(in))
				return false;
			skip_ws(in);
			if (in->p >= in->end || *in->p++ != ':')
				return false;
		}
		if (!value(in))
			return false;
		skip_ws(in);
		if (in->p >= in->end)
			return false;
		if (*in->p == close) {
			in->p++;
			in->depth--;
			return true;
		}
		if (*in->p++ != ',')
			return false;
	}
}

static bool value(struct in *in)
{
	skip_ws(in);
	if (in->p >= in->end)
		return false;
	switch (*in->p) {
	case '{':
		return container(in, '}', true);
	case '[':
		return container(in, ']', false);
	case '"':
		return string(in);
	case 't':
		return literal(in, "true");
	case 'f':
		return literal(in, "false");
	case 'n':
		return literal(in, "null");
	default:
		return number(in);
	}
}

bool json_check(const char *text, size_t len)
{
	struct in in = {(const unsigned char *)text, (const unsigned char *)text + len, 0};
	if (!value(&in))
		return false;
	skip_ws(&in);
	return in.p == in.end;
}
