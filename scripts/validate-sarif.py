#!/usr/bin/env python3
"""Validate preemptify SARIF output.

    validate-sarif.py SCHEMA FILE...

1. Against the official SARIF 2.1.0 JSON schema (draft-04; fetched by
   scripts/fetch-sarif-schema.sh), with the python3 `jsonschema` package.
2. Then checks the schema cannot express, which GitHub code scanning and
   other consumers rely on: ruleIndex points at the rule named by ruleId,
   every relative artifact URI has uriBaseId %SRCROOT%, regions are 1-based,
   kind/level agree, the rule metadata is complete.

Exit 0 when every FILE passes; 1 with one line per problem otherwise.
"""
import json
import sys

try:
    import jsonschema
except ImportError:  # the machine image ships it; say so plainly if not
    sys.exit("validate-sarif: the python3 'jsonschema' package is required")

LEVELS = {"none", "note", "warning", "error"}


def semantic_problems(doc):
    out = []
    if doc.get("version") != "2.1.0":
        out.append("version is not 2.1.0")
    runs = doc.get("runs") or []
    if len(runs) != 1:
        out.append(f"expected one run, got {len(runs)}")
    for run in runs:
        driver = run["tool"]["driver"]
        for key in ("name", "version", "rules"):
            if key not in driver:
                out.append(f"tool.driver lacks {key}")
        # optional; when given, a public address, never a path of the machine that wrote it
        if driver.get("informationUri", "https://").split(":", 1)[0] not in ("http", "https"):
            out.append(f"tool.driver.informationUri is not public: {driver['informationUri']}")
        rules = driver.get("rules", [])
        ids = [r.get("id") for r in rules]
        if len(set(ids)) != len(ids):
            out.append(f"duplicate rule ids {ids}")
        for r in rules:
            for key in ("shortDescription", "fullDescription", "help"):
                if not r.get(key, {}).get("text"):
                    out.append(f"rule {r.get('id')} lacks {key}.text")
            if not r.get("name"):
                out.append(f"rule {r.get('id')} lacks name")
            if r.get("defaultConfiguration", {}).get("level") not in LEVELS:
                out.append(f"rule {r.get('id')} lacks defaultConfiguration.level")
        for i, res in enumerate(run.get("results", [])):
            where = f"results[{i}]"
            idx = res.get("ruleIndex")
            if idx is None or not 0 <= idx < len(ids) or ids[idx] != res.get("ruleId"):
                out.append(f"{where}: ruleIndex {idx} does not name ruleId {res.get('ruleId')}")
            kind, level = res.get("kind", "fail"), res.get("level", "warning")
            if (kind == "pass") != (level == "none"):
                out.append(f"{where}: kind {kind} with level {level}")
            if not res.get("message", {}).get("text"):
                out.append(f"{where}: empty message")
            props = res.get("properties", {})
            for key in ("confidence", "fix", "evidence"):
                if key not in props:
                    out.append(f"{where}: properties lack {key}")
            locs = res.get("locations", [])
            if len(locs) != 1:
                out.append(f"{where}: expected one location")
            for loc in locs:
                pl = loc["physicalLocation"]
                art = pl["artifactLocation"]
                uri = art["uri"]
                if uri.startswith("file:"):
                    if "uriBaseId" in art:
                        out.append(f"{where}: absolute uri {uri} with uriBaseId")
                elif uri.startswith("/") or uri.startswith("./") or art.get("uriBaseId") != "%SRCROOT%":
                    out.append(f"{where}: relative uri {uri} must be clean and based on %SRCROOT%")
                reg = pl.get("region", {})
                if reg.get("startLine", 0) < 1 or reg.get("startColumn", 0) < 1:
                    out.append(f"{where}: region {reg} not 1-based")
        for inv in run.get("invocations", []):
            if "executionSuccessful" not in inv:
                out.append("invocation lacks executionSuccessful")
    return out


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    bad = 0
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        problems = [f"schema: {'/'.join(map(str, e.absolute_path))}: {e.message}"
                    for e in validator.iter_errors(doc)]
        problems += semantic_problems(doc)
        for p in problems[:50]:
            print(f"{path}: {p}")
        if problems:
            bad += 1
        else:
            print(f"{path}: valid SARIF 2.1.0 ({sum(len(r.get('results', [])) for r in doc['runs'])} results)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
