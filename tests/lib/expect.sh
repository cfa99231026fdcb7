# expect.sh — sourced by the command-line tests: one way to say "this command
# exits with CODE and its output (stdout and stderr) matches REGEX".
#
#   . "$(dirname "$0")/../lib/expect.sh"
#   expect_run CODE REGEX COMMAND [ARGS...]
#   ...
#   expect_summary            # prints the count, exits 1 if any failed
#
# Scripts that always run one program wrap it:  expect() { expect_run "$2" ... }
expect_fails=0
expect_run() {
  local code=$1 re=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ] || ! grep -Eq -- "$re" <<<"$out"; then
    echo "FAIL: $(basename "$1") ${*:2}: exit $rc (want $code, /$re/), output:"; echo "$out" | sed 's/^/    /'
    expect_fails=$((expect_fails + 1))
  else
    echo "ok: $(basename "$1") ${*:2} -> $code"
  fi
}
expect_summary() {
  if [ "$expect_fails" = 0 ]; then echo "all checks passed"; else echo "$expect_fails check(s) failed"; fi
  exit $((expect_fails != 0))
}
