#!/usr/bin/env bash
# File names that are not UTF-8 (Latin-1, as 2.4-era trees have them) and
# control bytes, through JSON and SARIF: both stay valid UTF-8 JSON with the
# byte written as its Latin-1 reading (\u00e9 in JSON, %E9 in a SARIF URI),
# a control byte never raw, and the SARIF still valid against the schema.
. "$(dirname "$0")/lib.sh"

site_c() {
	printf '#include <linux/smp.h>\nvoid note(int cpu);\n\nvoid f(void)\n{\n\tnote(smp_processor_id());\n}\n' >"$1"
}
latin=$(printf 'caf\351.c')   # café.c in Latin-1: the byte 0xe9 alone is not UTF-8
ctl=$(printf 'e\033[1mx.c')  # an escape sequence in a name
site_c "$latin"
site_c "$ctl"
mkdir "$(printf 'r\351p')" && site_c "$(printf 'r\351p/d\351j\340.c')"

# check_doc FORMAT PYTHON: the report of FORMAT parsed as strict UTF-8 JSON, then PYTHON run on `doc`
check_doc() {
	"$BIN" scan -f "$1" "$latin" "$ctl" "$(printf 'r\351p')" >"report.$1" 2>/dev/null
	python3 - "report.$1" "$2" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
if any(b < 0x20 and b not in (0x0a,) for b in raw):
    sys.exit("a raw control byte in the report")
doc = json.loads(raw.decode("utf-8"))  # strict: a raw 0xe9 fails here
exec(sys.argv[2])
PY
}

if check_doc json '
files = sorted({f["file"] for f in doc["findings"]})
assert files == ["caf\u00e9.c", "r\u00e9p/d\u00e9j\u00e0.c"], files
diags = [d["file"] for d in doc["diagnostics"]]
assert diags == ["e\\x1b[1mx.c"], diags
'; then ok; else bad "JSON: Latin-1 names as \\u00XX, the control byte escaped, valid UTF-8"; fi

if check_doc sarif '
res = doc["runs"][0]["results"]
uris = sorted({l["physicalLocation"]["artifactLocation"]["uri"] for r in res for l in r["locations"]})
assert uris == ["caf%E9.c", "r%E9p/d%E9j%E0.c"], uris
notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
nuris = [l["physicalLocation"]["artifactLocation"]["uri"] for n in notes for l in n.get("locations", [])]
assert nuris == ["e%5Cx1b%5B1mx.c"], nuris
'; then ok; else bad "SARIF: Latin-1 names percent-encoded, the control byte escaped, valid UTF-8"; fi

if [ -n "$SCHEMA" ] && [ -f "$SCHEMA" ] && python3 -c 'import jsonschema' 2>/dev/null; then
	if python3 "$SRC/scripts/validate-sarif.py" "$SCHEMA" report.sarif; then ok; else bad "SARIF with Latin-1 names validates"; fi
else
	skip_part "SARIF schema" "no schema at '$SCHEMA' or no python3 jsonschema"
fi

# control bytes inside the code (a string literal in a lock expression) reach
# the evidence: escaped as \u001b in JSON and SARIF, never raw
printf '#include <linux/spinlock.h>\nspinlock_t *lock_named(const char *n);\n\nvoid f(int x)\n{\n\tspin_lock(lock_named("\033[1m\037"));\n\tif (x)\n\t\treturn;\n\tspin_unlock(lock_named("\033[1m\037"));\n}\n' >ctl_code.c
for fmt in json sarif; do
	"$BIN" scan --no-prefilter -f $fmt ctl_code.c >"code.$fmt" 2>/dev/null
	if python3 - "code.$fmt" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
if any(b < 0x20 and b != 0x0a for b in raw):
    sys.exit("a raw control byte in the report")
if b"\\u001b[1m\\u001f" not in raw:
    sys.exit("the control bytes are not escaped as \\u001b, \\u001f")
doc = json.loads(raw.decode("utf-8"))
def strings(x):
    if isinstance(x, dict): x = list(x.values())
    if isinstance(x, list): return [s for v in x for s in strings(v)]
    return [x] if isinstance(x, str) else []
assert any('lock_named("\x1b[1m\x1f")' in t for t in strings(doc)), "the evidence names the lock as written"
PY
	then ok; else rc=- out= err=; bad "$fmt: control bytes from the code escaped"; fi
done

# text output: the name as given (the user's own bytes), the control byte escaped
run scan "$latin" "$ctl"; expect_rc 3 "a refused name: exit 3"
if printf '%s\n' "$out" | grep -q "^$latin:6:7: warning: "; then ok; else bad "text: the Latin-1 name as given"; fi
if printf '%s%s' "$out" "$err" | grep -q "$(printf '\033')"; then bad "text: ESC printed raw"; else ok; fi
finish
