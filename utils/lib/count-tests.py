#!/usr/bin/env python3
"""Counts a test report: lit's JSON (-o FILE.json) or a JUnit/xUnit XML
(ctest --output-junit, pytest --junitxml).

Prints "PASSED FAILED SKIPPED" on one line, then the failed tests' names, one
per line.

lit JSON: PASS and XFAIL pass; FAIL, XPASS, UNRESOLVED and TIMEOUT fail
(Debian's lit does not count XPASS as a failure, and its xUnit report shows it
as a pass, hence the JSON); UNSUPPORTED, SKIPPED and EXCLUDED are skipped.
JUnit XML: a testcase with a <failure> or <error> child (or ctest's status
"fail") failed; one with a <skipped> child (or ctest's status notrun or
disabled) is skipped; every other testcase passed.  Skipped tests are not
counted as passed or failed.
"""
import json
import sys
import xml.etree.ElementTree as ET

LIT_PASSED = {"PASS", "XFAIL", "FLAKYPASS"}
LIT_FAILED = {"FAIL", "XPASS", "UNRESOLVED", "TIMEOUT"}


def count_lit_json(path):
    passed, failed, skipped, names = 0, 0, 0, []
    with open(path) as f:
        report = json.load(f)
    for test in report.get("tests", []):
        code = test.get("code", "")
        if code in LIT_PASSED:
            passed += 1
        elif code in LIT_FAILED:
            failed += 1
            names.append("%s (%s)" % (test.get("name", "?"), code))
        else:
            skipped += 1
    return passed, failed, skipped, names


def count_junit(path):
    passed, failed, skipped, names = 0, 0, 0, []
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        name = case.get("name", "?")
        cls = case.get("classname", "")
        full = "%s.%s" % (cls, name) if cls and cls != name else name
        if "failure" in tags or "error" in tags or case.get("status") == "fail":
            failed += 1
            names.append(full)
        elif "skipped" in tags or case.get("status") in ("notrun", "disabled"):
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped, names


def main(path):
    counter = count_lit_json if path.endswith(".json") else count_junit
    passed, failed, skipped, names = counter(path)
    print(passed, failed, skipped)
    for name in names:
        print(name)


if __name__ == "__main__":
    main(sys.argv[1])
