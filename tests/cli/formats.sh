#!/usr/bin/env bash
# JSON and SARIF output: well-formed, stable, and SARIF valid against the
# official SARIF 2.1.0 schema (scripts/validate-sarif.py). Runs on the
# fixture tree so the documents are not trivially empty, but checks only
# structure, never which findings there are.
. "$(dirname "$0")/lib.sh"
if [ -z "$SCHEMA" ] || [ ! -f "$SCHEMA" ]; then
	echo "formats.sh: SARIF schema not found ($SCHEMA); run scripts/fetch-sarif-schema.sh" >&2
	exit 1
fi
mkdir -p src && cp -r "$SRC/fixtures/drivers" src/ && clean_c 'src/with space.c'

for fmt in json sarif; do
	for v in "" -v; do
		"$BIN" scan --format "$fmt" $v src missing.c >"out$v.$fmt" 2>/dev/null
		rc=$?; out=; err=
		expect_rc 3 "$fmt$v: exit 3 with a missing file"
		if python3 -m json.tool "out$v.$fmt" >/dev/null; then ok; else bad "$fmt$v output parses as JSON"; fi
	done
done

# JSON: the documented top level and finding fields (docs/json-schema.md)
check_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); verbose = sys.argv[2] == "1"
assert doc["version"] == 1 and doc["tool"]["name"] == "preemptify", doc.get("tool")
assert list(doc) == ["version", "tool", "findings", "diagnostics", "stats"], list(doc)
keys = ["file", "line", "column", "function", "rule", "rule_name", "severity", "confidence",
        "fixable", "fix", "message", "evidence", "fix_note"] + (["protected"] if verbose else []) + ["edits"]
for f in doc["findings"]:
    assert list(f) == keys, list(f)
    assert f["fixable"] == (f["fix"] != "none"), f
    for k in ("evidence", "fix_note"):  # absent is null, never ""
        assert f[k] is None or (isinstance(f[k], str) and f[k]), (k, f)
    assert f["fixable"] == bool(f["edits"]) or not f["fixable"], f
    for e in f["edits"]:
        assert list(e) == ["op", "line", "column", "end_line", "end_column", "node", "text"], e
        assert e["op"] in ("replace", "insert-before", "insert-after"), e
flagged = [f for f in doc["findings"] if not f.get("protected")]
assert doc["stats"]["findings"] == len(flagged)
assert doc["stats"]["fixable"] == sum(f["fixable"] for f in flagged) > 0, doc["stats"]
assert sum(doc["stats"]["per_rule"].values()) == len(flagged)
assert any(d["kind"] == "io" and d["file"] == "missing.c" and d["line"] is None for d in doc["diagnostics"])
if verbose:
    assert doc["stats"]["protected"] == len(doc["findings"]) - len(flagged)
PY
}
if check_json out.json 0; then ok; else bad "JSON fields"; fi
if check_json out-v.json 1; then ok; else bad "JSON fields (verbose)"; fi

# SARIF: official schema + the checks the schema cannot express
if python3 "$SRC/scripts/validate-sarif.py" "$SCHEMA" out.sarif out-v.sarif; then ok; else bad "SARIF validates"; fi
if grep -q '"kind": "pass"' out-v.sarif && ! grep -q '"kind": "pass"' out.sarif; then ok; else
	bad "protected sites are kind pass only with --verbose"; fi

# SARIF: every region has its end; %SRCROOT% is defined (here: the current directory, no git);
# every rule has a helpUri into docs/rules.md
check_sarif() {
	python3 - "$1" "$PWD" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); run = doc["runs"][0]
assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file://" + sys.argv[2] + "/", run.get("originalUriBaseIds")
assert "versionControlProvenance" not in run
assert all(r["helpUri"].endswith("/rules.md#" + r["id"]) for r in run["tool"]["driver"]["rules"])
def regions(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("region", "deletedRegion"):
                yield v
            yield from regions(v)
    elif isinstance(o, list):
        for v in o:
            yield from regions(v)
rs = list(regions(run))
assert rs and all("endLine" in r for r in rs), [r for r in rs if "endLine" not in r][:3]
res = run["results"]
assert any(r.get("fixes") for r in res) and any(r.get("codeFlows") for r in res)
for r in res:
    assert bool(r.get("fixes")) == (r["properties"]["fix"] != "none" and r.get("kind") == "fail"), r["ruleId"]
PY
}
if check_sarif out.sarif; then ok; else bad "SARIF regions, base, helpUri, fixes, codeFlows"; fi

# SARIF fixes are the planned change: applied to the files (where the replacements of a file's
# results do not overlap), they give what `apply` writes, whitespace aside
if have spatch "SARIF fixes against apply"; then
rm -rf fixed && cp -r src fixed && (cd fixed && "$BIN" apply -j 1 . >/dev/null 2>&1)
python3 - out.sarif src fixed <<'PY'
import json, os, re, sys
doc = json.load(open(sys.argv[1])); run = doc["runs"][0]
per_file = {}
for r in run["results"]:
    for fx in r.get("fixes", []):
        for ch in fx["artifactChanges"]:
            per_file.setdefault(ch["artifactLocation"]["uri"], []).extend(ch["replacements"])
same = differ = 0
for uri, reps in per_file.items():
    # findings that share one region (reads it covers) offer the same change: one of each
    uniq = {}
    for x in reps:
        uniq.setdefault((x["deletedRegion"]["byteOffset"], x["deletedRegion"]["byteLength"],
                         x["insertedContent"]["text"]), x)
    reps = list(uniq.values())
    reps.sort(key=lambda x: (x["deletedRegion"]["byteOffset"], x["deletedRegion"]["byteLength"]))
    if any(a["deletedRegion"]["byteOffset"] + a["deletedRegion"]["byteLength"] > b["deletedRegion"]["byteOffset"]
           for a, b in zip(reps, reps[1:])):
        continue  # two findings fix the same code: no single textual answer
    path = uri.replace("%20", " ")
    text = open(path, "rb").read().decode("latin-1")
    for x in reversed(reps):
        o, n = x["deletedRegion"]["byteOffset"], x["deletedRegion"]["byteLength"]
        text = text[:o] + x["insertedContent"]["text"] + text[o + n:]
    fixed = open(os.path.join(sys.argv[3], os.path.relpath(path, sys.argv[2])), "rb").read().decode("latin-1")
    if re.sub(r"\s+", "", text) == re.sub(r"\s+", "", fixed):
        same += 1
    else:
        differ += 1
        print("differs from apply:", uri)
print(f"SARIF fixes: {same} files as apply writes them, {differ} not", file=sys.stderr)
sys.exit(0 if same and not differ else 1)
PY
if [ $? -eq 0 ]; then ok; else bad "SARIF fixes applied equal 'apply'"; fi
fi

# Same tree, different thread counts: byte-identical output
for j in 1 2 8; do "$BIN" scan -j $j --format json -v src >"j$j.json" 2>/dev/null; done
if cmp -s j1.json j2.json && cmp -s j1.json j8.json; then ok; else bad "JSON identical for -j 1, 2, 8"; fi
"$BIN" scan -j 1 src >t1.txt 2>/dev/null; "$BIN" scan -j 8 src >t8.txt 2>/dev/null
if cmp -s t1.txt t8.txt; then ok; else bad "text identical for -j 1 and -j 8"; fi
finish
