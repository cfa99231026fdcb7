#!/usr/bin/env bash
# sandbox.sh COLLGRADE SRC — a grading's runs and build see the system's
# runtime, the kit's tools and their own files only: a file that looks, before
# main, for the source tree's .git, a lab's reference solution, the build's
# test programs (one is built from that solution), another checkout and another
# student's submission finds none of them, while the system's files are there
# (the probe works); graded without the sandbox (COLLGRADE_SANDBOX=none, the
# fallback where bwrap cannot run), the same probe finds them, and the grader
# says it ran without one. A file that embeds .git/HEAD (.incbin) does not
# build. A run's processes at once are capped (COLLGRADE_NPROC): a fork bomb
# is stopped, and the report names the limit. Skips (77) where bubblewrap
# cannot run.
set -u
G=$1 SRC=$2
. "$(dirname "$0")/sandbox_lib.sh"
BIN=$(cd "$(dirname "$G")" && pwd)
mkdir -p "$T/lab" "$T/other/.git" "$T/classmate" "$T/keep"
printf '%s\n' "file = my_ring.c" "algo = my_ring" "part correctness 60 check np=1 args=--count+7+--dtype+i32+--op+sum" \
  "part integrity 20 integrity" > "$T/lab/lab.conf"
echo "int secret;" > "$T/other/.git/HEAD"
cp "$SRC/labs/01-ring/solution/my_ring.c" "$T/classmate/my_ring.c"
"$SRC/tests/labs/cheats/assemble.sh" "$SRC" view "$T/view.c"
hidden="$SRC/.git:$SRC/labs/01-ring/solution/my_ring.c:$T/other/.git/HEAD:$T/classmate/my_ring.c:$T/lab/lab.conf"
[ ! -d "$BIN/../tests" ] || hidden="$hidden:$BIN/../tests"
[ ! -e "$BIN/colldraw_labs" ] || hidden="$hidden:$BIN/colldraw_labs"
export GRADE_TEST_PEEK="/usr/bin/env:$hidden"
peeks() { cat "$T/keep/logs/log.check.correctness.1" 2>/dev/null | grep '^PEEK ' | sort -u; }
out=$(COLLGRADE_WORK=$T/keep "$G" "$T/lab" --file "$T/view.c" --time-limit 60 2>&1)
echo "$out"; peeks
check 'peeks | grep -q "^PEEK visible /usr/bin/env$"' "the probe saw no system file: it proves nothing"
check '[ -z "$(peeks | grep "^PEEK visible" | grep -v " /usr/bin/env$")" ]' "the sandbox shows: $(peeks | grep '^PEEK visible' | grep -v /usr/bin/env)"
check '! grep -q "WITHOUT a sandbox" <<<"$out"' "the grading says it ran without a sandbox"
# The fallback: no sandbox, said so; the same probe sees what the sandbox hides.
rm -rf "$T/keep/logs"
out=$(COLLGRADE_SANDBOX=none COLLGRADE_WORK=$T/keep "$G" "$T/lab" --file "$T/view.c" --time-limit 60 2>&1)
check 'grep -q "WITHOUT a sandbox (bwrap is missing or cannot make namespaces here)" <<<"$out"' "no sandbox, and the grader does not say so: $out"
check 'peeks | grep -q "^PEEK visible $T/classmate/my_ring.c$"' "without the sandbox the probe still saw nothing: the test cannot fail"
# Embedding a file of another checkout: the build does not find it.
printf '%s\n' '#include "collkit_algo.h"' '__asm__(".section .rodata\n.incbin \"'"$T"'/other/.git/HEAD\"\n.previous");' > "$T/embed.c"
sed -n '/^#include/!p' "$SRC/labs/01-ring/solution/my_ring.c" >> "$T/embed.c"
out=$("$G" "$T/lab" --file "$T/embed.c" --time-limit 60 2>&1)
check 'grep -qE "correctness +0.0 / 60 +the file does not build" <<<"$out"' "a file embedding another checkout's .git built: $out"
# A fork bomb before main: stopped at the cap, the limit named.
"$SRC/tests/labs/cheats/assemble.sh" "$SRC" forkbomb "$T/bomb.c"
out=$(COLLGRADE_NPROC=32 "$G" "$T/lab" --file "$T/bomb.c" --time-limit 60 2>&1)
echo "$out"
check 'grep -q "LIMITS .*processes: a run started more than 32 at once (COLLGRADE_NPROC)" <<<"$out"' "the fork bomb's limit is not named"
check 'grep -q "the run started more than 32 processes at once" <<<"$out"' "the fork bomb's verdict is not its limit"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
