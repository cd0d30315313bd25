#!/usr/bin/env python3
"""Structural validation of preemptify's JSON and SARIF 2.1.0 output."""
import json, sys

def fail(msg):
    print(msg); sys.exit(1)

fmt, path = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
if fmt == "json":
    if doc.get("version") != 1: fail("version must be 1")
    need = ["file", "line", "column", "function", "rule", "severity", "confidence",
            "fixable", "fix", "message", "evidence", "edits"]
    if not doc["findings"]: fail("no findings on the fixture tree")
    for f in doc["findings"]:
        for k in need:
            if k not in f: fail(f"finding lacks {k}: {f}")
        if f["fixable"] != (f["fix"] != "none"): fail(f"fixable/fix disagree: {f}")
        if f["severity"] not in ("error", "warning", "note"): fail(f"bad severity {f}")
    if not isinstance(doc["diagnostics"], list): fail("diagnostics must be a list")
else:
    if doc.get("version") != "2.1.0": fail("SARIF version must be 2.1.0")
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    if ids != [f"P00{i}" for i in range(1, 9)]: fail(f"rules {ids}")
    for r in rules:
        for k in ("shortDescription", "fullDescription", "help"):
            if not r[k]["text"]: fail(f"rule {r['id']} lacks {k}")
    if not run["results"]: fail("no results")
    for res in run["results"]:
        if ids[res["ruleIndex"]] != res["ruleId"]: fail(f"ruleIndex mismatch {res}")
        if res["level"] not in ("error", "warning", "note", "none"): fail(f"level {res}")
        loc = res["locations"][0]["physicalLocation"]
        if loc["region"]["startLine"] < 1 or loc["region"]["startColumn"] < 1: fail(f"region {res}")
        if loc["artifactLocation"]["uri"].startswith("/") and "uriBaseId" in loc["artifactLocation"]:
            pass
print("ok")
