#!/usr/bin/env bash
# grade.sh COLLGRADE LABDIR FILE CODES REGEX... — run the autograder on FILE
# (a skeleton, a solution, a cheat) and require its exit code to be one of
# CODES (comma-separated) and its report to match every REGEX.
set -u
G=$1 LAB=$2 FILE=$3 CODES=$4; shift 4
export COLLGRADE_WORK
COLLGRADE_WORK=$(mktemp -d)
trap 'rm -rf "$COLLGRADE_WORK"' EXIT
out=$("$G" "$LAB" --file "$FILE" --json "$COLLGRADE_WORK/r.json" --junit "$COLLGRADE_WORK/r.xml" 2>&1); rc=$?
echo "$out"
pass=0; fail=0
case ",$CODES," in *",$rc,"*) pass=$((pass + 1)) ;; *) echo "FAIL: exit $rc, expected one of $CODES"; fail=$((fail + 1)) ;; esac
for re in "$@"; do
  if grep -Eq -- "$re" <<<"$out"; then pass=$((pass + 1)); else echo "FAIL: the report lacks: $re"; fail=$((fail + 1)); fi
done
if command -v python3 > /dev/null; then
  python3 - "$COLLGRADE_WORK/r.json" "$COLLGRADE_WORK/r.xml" <<'PY' && pass=$((pass + 1)) || { echo "FAIL: JSON or JUnit report malformed"; fail=$((fail + 1)); }
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
assert d["parts"] and abs(sum(p["score"] for p in d["parts"] if p["status"] != "blocked") - d["total"]) < 0.11
t = ET.parse(sys.argv[2]).getroot()
assert t.tag == "testsuite" and int(t.get("tests")) == len(d["parts"])
PY
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
