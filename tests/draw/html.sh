#!/usr/bin/env bash
# html.sh COLLDRAW MPIRUN [FLAGS...] — the page colldraw writes, as a reader meets it, in
# headless Chromium (Debian: chromium; skipped without it):
#   - screenshots at two steps (#step=1 and #step=5) that differ, and a page with no
#     network (everything inline);
#   - a harness page loads it in a frame and presses next, prev, End, ArrowLeft, and
#     moves the slider: after each, exactly one frame is shown, the one expected.
set -u
D=$1; shift
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$CHROME" ] || { echo "chromium not found: the page test is skipped (Debian: apt-get install chromium)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$@" -np 4 "$D" --algo ring --count 8 --out "$dir/ring" > "$dir/draw.log" 2>&1 || { cat "$dir/draw.log"; fail "colldraw exit $?"; }
page=$dir/ring/index.html
! grep -Eq '(src|href)="(https?:)?//' "$page" || fail "the page loads something from the network"
chrome() { timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$dir/profile" "$@" 2> "$dir/chrome.err"; }

for k in 1 5; do
  chrome --window-size=1000,700 --screenshot="$dir/s$k.png" "file://$page#step=$k" > /dev/null
  [ -s "$dir/s$k.png" ] || { cat "$dir/chrome.err"; fail "no screenshot at step $k"; }
done
! cmp -s "$dir/s1.png" "$dir/s5.png" || fail "the screenshots at #step=1 and #step=5 are the same picture"
echo "ok: screenshots at two steps differ"

cat > "$dir/harness.html" <<'HTML'
<!DOCTYPE html><html><body><pre id="out">not loaded</pre>
<iframe id="f" src="ring/index.html#step=2" width="900" height="600"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var log = [];
  try {
    var d = this.contentDocument, w = this.contentWindow;
    function at(what) { log.push(what + ' ' + d.body.getAttribute('data-frame') + ' shown ' +
                                 d.querySelectorAll('.frame:not([hidden])').length + ' ' +
                                 d.querySelector('.frame:not([hidden])').id); }
    function key(k) { d.dispatchEvent(new w.KeyboardEvent('keydown', {key: k, bubbles: true})); }
    at('load');
    d.getElementById('next').click(); at('next');
    d.getElementById('prev').click(); d.getElementById('prev').click(); at('prev-prev');
    key('End'); at('end');
    d.getElementById('next').click(); at('next-at-end');
    key('ArrowLeft'); at('left');
    key('Home'); at('home');
    var s = d.getElementById('slider'); s.value = 4; s.dispatchEvent(new w.Event('input', {bubbles: true})); at('slider');
    log.push('label ' + d.getElementById('label').textContent);
  } catch (e) { log.push('error ' + e); }
  document.getElementById('out').textContent = log.join('\n');
});
</script></body></html>
HTML
chrome --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom "file://$dir/harness.html" > "$dir/dom.html"
sed -n '/<pre/,/<\/pre>/p' "$dir/dom.html"
want="load 2 shown 1 frame-2
next 3 shown 1 frame-3
prev-prev 1 shown 1 frame-1
end 6 shown 1 frame-6
next-at-end 6 shown 1 frame-6
left 5 shown 1 frame-5
home 0 shown 1 frame-0
slider 4 shown 1 frame-4
label frame 5 of 7: step 3, all-gather"
got=$(sed -n '/<pre/,/<\/pre>/p' "$dir/dom.html" | sed 's/.*<pre id="out">//; s/<\/pre>.*//')
[ "$got" = "$want" ] || { cat "$dir/chrome.err"; fail "the step control does not step as expected"; }
echo "ok: buttons, keys and slider step through the frames"
echo "PASS"
