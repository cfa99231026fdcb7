#!/usr/bin/env bash
# slides.sh BUILD_DIR [OUT_DIR] — `make slides`: one PDF deck per lab from the
# Markdown in slides/ (pandoc + beamer), with the model figures regenerated
# from slides/params.txt by this build's collbench and slides/model.gp, so every
# number on a slide comes from a command named on it. Installs the Debian
# packages it needs when run as root; otherwise prints the exact command.
set -eu
B=$(cd "${1:?usage: slides.sh BUILD_DIR [OUT_DIR]}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${2:-$B/slides}
# What each is for: pandoc writes the LaTeX; texlive-latex-recommended (beamer), texlive-pictures
# (pgf, which beamer loads), texlive-fonts-recommended and lmodern typeset it; gnuplot-nox draws
# the model figures; librsvg2-bin converts colldraw's SVG to PDF, in the font the SVG names
# (fonts-dejavu-core); poppler-utils (pdfinfo, pdftoppm, pdftotext, pdfimages) is what the slide
# test reads the PDFs with.
pkgs="pandoc texlive-latex-recommended texlive-fonts-recommended texlive-pictures lmodern poppler-utils gnuplot-nox librsvg2-bin fonts-dejavu-core"
font() { ! command -v fc-match >/dev/null || fc-match -f '%{family}' 'DejaVu Sans' 2>/dev/null | grep -q DejaVu; }
have() { command -v pandoc >/dev/null && command -v pdflatex >/dev/null && command -v gnuplot >/dev/null &&
         command -v rsvg-convert >/dev/null && command -v pdftoppm >/dev/null && command -v pdfinfo >/dev/null && font &&
         kpsewhich beamer.cls >/dev/null 2>&1 && kpsewhich pgfmath.sty >/dev/null 2>&1 && kpsewhich lmodern.sty >/dev/null 2>&1; }
if ! have; then
  if [ "$(id -u)" -eq 0 ] && [ "${SLIDES_NO_INSTALL:-0}" != 1 ]; then
    echo "slides: installing $pkgs" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs > /dev/null
  else
    echo "slides: missing tools; run:  sudo apt-get update && sudo apt-get install -y --no-install-recommends $pkgs" >&2
    exit 1
  fi
fi
for t in collbench colldraw ckrun tagtrain tagsynth ckptdiff collkit-cc; do [ -x "$B/bin/$t" ] || { echo "slides: $B/bin/$t not built (make)" >&2; exit 1; }; done
# fig/ is this build's own output: what is made again below is removed or written over first
# (a deck rebuilt alone keeps the other decks' pictures); fig/measured.txt is appended to, its
# last line for a KEY the one a slide gets.
mkdir -p "$OUT/fig"
# The α-β-γ model of the built-in algorithms at the slides' parameters (drawn below).
# --overwrite here and for the trace: they are this script's own outputs, and a deck is rebuilt
# after every edit.
"$B/bin/collbench" --extrapolate --model "$SRC/slides/params.txt" --algo naive,ring,ring_pipelined,rd,rabenseifner,tree,tree2 \
    --pmax 4096 --overwrite --csv "$OUT/fig/extrap.csv" > "$OUT/fig/extrap.txt"
# Deck 03's summary table (fig/costs.md, {{include costs}}): each algorithm's α, β and γ terms read
# off its own cost function (the descriptor's, as collbench's model uses it) by running the model
# with one parameter at 1 and the others at 0, at p = 16 and 1024, n = 64 MiB; beside the lower
# bounds ⌈log2 p⌉α, 2(p−1)/p·nβ, (p−1)/p·nγ. A term at its bound is bold; an algorithm whose
# time is not the sum of its terms (the pipelined ring overlaps β and γ) is marked.
par() { awk -v k="$1" '$1 == k { print $2 }' "$SRC/slides/params.txt"; }   # a slide parameter
costtable() {
  local algos=naive,ring,ring_pipelined,rd,rabenseifner,tree,tree2 k
  for k in alpha beta gamma; do
    awk -v k="$k" '$1 == "chunk_bytes" { print } END { print "memcpy_gbs 0"
      print "alpha_us " (k == "alpha"); print "beta_ns_per_byte " (k == "beta"); print "gamma_ns_per_byte " (k == "gamma") }' \
      "$SRC/slides/params.txt" > "$OUT/fig/unit-$k.txt"
    "$B/bin/collbench" --extrapolate --model "$OUT/fig/unit-$k.txt" --algo $algos --pmax 1024 --overwrite \
        --csv "$OUT/fig/unit-$k.csv" > "$OUT/fig/unit-$k.log" 2>&1 || { cat "$OUT/fig/unit-$k.log" >&2; exit 1; }
  done
  awk -F, -v order="$algos" -v alpha="$(par alpha_us)" -v beta="$(par beta_ns_per_byte)" -v gamma="$(par gamma_ns_per_byte)" \
      -f "$SRC/slides/costs.awk" "$OUT"/fig/unit-{alpha,beta,gamma}.csv "$OUT/fig/extrap.csv" > "$OUT/fig/costs.md"
}
[ -n "${SLIDES_ONLY:-}" ] && ! grep -q '{{include costs}}' "$SRC/slides/$SLIDES_ONLY.md" 2>/dev/null || costtable
pngterm=png; gnuplot -e 'set terminal pngcairo' > /dev/null 2>&1 && pngterm=pngcairo
# gpfont PNG SCRIPT: PNG.font, the smallest type SCRIPT gives gnuplot (its terminal's or a
# title's or key's own, in pt), which the slide test scales by the PNG's placed size
gpfont() { grep -o "font '[^']*,[0-9.]*'" "$SRC/$2" | sed "s/.*,//; s/'//" | sort -n | head -1 > "$1.font"; }
# The pictures take a while: a deck built alone (SLIDES_ONLY, as while editing it) gets only
# the ones it shows. want NAME: the deck shows fig/NAME/... (or every deck is being built).
want() { [ -z "${SLIDES_ONLY:-}" ] || grep -q "](fig/$1/" "$SRC/slides/$SLIDES_ONLY.md" 2>/dev/null; }
# shows PREFIX: the deck shows a plot fig/PREFIX... (or every deck is being built)
shows() { [ -z "${SLIDES_ONLY:-}" ] || grep -q "](fig/$1" "$SRC/slides/$SLIDES_ONLY.md" 2>/dev/null; }
# measures PREFIX: the deck shows a {{measured PREFIX...}} figure (or every deck is being built).
measures() { [ -z "${SLIDES_ONLY:-}" ] || grep -q "{{measured $1" "$SRC/slides/$SLIDES_ONLY.md" 2>/dev/null; }
figs=1
if [ -n "${SLIDES_ONLY:-}" ] && ! grep -q '](fig/' "$SRC/slides/$SLIDES_ONLY.md" 2>/dev/null; then figs=0; fi
if [ $figs = 1 ]; then
  # Pictures of the algorithms, drawn from the running code by colldraw (a slide
  # names the command), as PDF for the decks: fig/NAME/frame-NN.pdf, and the shape of its
  # first sending step, fig/NAME/graph.pdf (a tree as a tree, a ring as a circle).
  draw() {
    local name=$1; shift
    want "$name" || return 0
    rm -rf "${OUT:?}/fig/$name"   # this build's own output: the PDFs beside the frames too
    "$B/bin/colldraw" --overwrite --out "$OUT/fig/$name" "$@" > "$OUT/fig/$name.txt" 2>&1 || { cat "$OUT/fig/$name.txt" >&2; exit 1; }
    for svg in "$OUT/fig/$name"/frame-*.svg "$OUT/fig/$name"/graph.svg; do
      [ ! -f "$svg" ] || rsvg-convert -f pdf -o "${svg%.svg}.pdf" "$svg"
    done
  }
  draw naive4 --algo naive --np 4 --count 8
  draw ring4 --algo ring --np 4 --count 8
  draw rd6 --algo rd --np 6 --count 6
  draw rd4 --algo rd --np 4 --count 4
  draw rab4 --algo rabenseifner --np 4 --count 8
  draw tree7 --algo tree --np 7 --count 7
  draw tree2p4 --algo tree2 --np 4 --count 8
  draw oneshot4 --algo oneshot --np 4 --count 8 --view 0
  draw twoshot3 --algo twoshot --np 3 --count 6
  # Deck 07: the ring's two halves on their own.
  draw rs4 --coll reduce_scatter --algo ring --np 4 --count 8
  draw ag4 --coll allgather --algo ring --np 4 --count 8
  # Decks 04 and 07: training steps traced now by tagtrain (--trace) on 2 ranks, on synthetic data
  # (tagsynth: the same rows everywhere), drawn as Gantt timelines whose subtitle says where
  # and when: one all-reduce after backward; buckets overlapping backward in a model whose
  # hidden layers carry gradients worth sending early; tagtrain's default model, whose input
  # layer holds nearly every parameter, in buckets; and its sparse all-reduce. Each picture is
  # the run's fastest step after the first (which starts the progress thread): on a machine
  # shared with other work, the step least disturbed.
  "$B/bin/tagsynth" --rows 256 --out "$OUT/fig/ddp-data.csv" --overwrite > /dev/null
  "$B/bin/tagsynth" --rows 64 --seed 2 --out "$OUT/fig/ddp-holdout.csv" --overwrite > /dev/null
  trace() {   # trace NAME TAGTRAIN-OPTIONS...: fig/NAME/gantt.pdf
    local name=$1; shift
    want "$name" || return 0
    rm -rf "${OUT:?}/fig/$name" "$OUT/fig/$name.json"
    "$B/bin/ckrun" -np 2 "$B/bin/tagtrain" --data "$OUT/fig/ddp-data.csv" --holdout "$OUT/fig/ddp-holdout.csv" --epochs 1 \
        --no-save --quiet --algo ring --trace "$OUT/fig/$name.json" "$@" > "$OUT/fig/$name.txt" 2>&1 ||
      { cat "$OUT/fig/$name.txt" >&2; exit 1; }
    local step
    step=$(awk '/"ph":"X"/ { split($0, a, "\"ts\":"); split($0, d, "\"dur\":"); split($0, c, "\"call\":")
                             k = c[2] + 0; t0 = a[2] + 0; t1 = t0 + d[2]
                             if (!(k in lo) || t0 < lo[k]) lo[k] = t0; if (!(k in hi) || t1 > hi[k]) hi[k] = t1 }
                END { for (k in lo) if (k > 0 && (best == "" || hi[k] - lo[k] < hi[best] - lo[best])) best = k; print best + 0 }' \
           "$OUT/fig/$name.json")
    "$B/bin/colldraw" --overwrite --gantt "$OUT/fig/$name.json" --call "$step" --out "$OUT/fig/$name" >> "$OUT/fig/$name.txt" 2>&1 ||
      { cat "$OUT/fig/$name.txt" >&2; exit 1; }
    rsvg-convert -f pdf -o "$OUT/fig/$name/gantt.pdf" "$OUT/fig/$name/gantt.svg"
  }
  trace ddp-dense --features 4096 --hidden 512,512,512
  trace ddp-buckets --features 4096 --hidden 512,512,512 --bucket-mb 0.5
  trace ddp-default --bucket-mb 1
  trace ddp-sparse --sparse-grads
  # Deck 07: a ZeRO stage 1 step, the optimizer between the two halves.
  trace zero1 --features 4096 --hidden 512,512,512 --zero 1 --rs-algo ring --ag-algo ring
  # Deck 08: a tensor-parallel step (its all-reduces inside forward and backward), and a
  # pipeline step under each schedule, 2 stages of equal work, 4 micro-batches.
  trace tp2 --features 4096 --hidden 512,512,512 --tp 2 --tp-algo ring
  trace pp-gpipe --features 1024 --hidden 1024,1024,1024 --pp 2 --microbatches 4 --pp-schedule gpipe
  trace pp-1f1b --features 1024 --hidden 1024,1024,1024 --pp 2 --microbatches 4 --pp-schedule 1f1b
  # Deck 07's memory per rank, replicated and --zero 1 (lab 07's step 4 with the library's
  # ring halves), measured now: {{measured KEY}} on a slide is a line of fig/measured.txt.
  zmem() {   # zmem TAG OPTIONS...: TAG_state and TAG_peak, as tagtrain prints them
    local tag=$1; shift
    "$B/bin/ckrun" -np 2 "$B/bin/tagtrain" --data "$OUT/fig/ddp-data.csv" --holdout "$OUT/fig/ddp-holdout.csv" \
        --features 32768 --hidden 64 --epochs 1 --no-save --transport mpi "$@" > "$OUT/fig/mem-$tag.txt" 2>&1 ||
      { cat "$OUT/fig/mem-$tag.txt" >&2; exit 1; }
    sed -n "s/.*optimizer state \([0-9.]* MB\).*/${tag}_state \1/p
            s/^peak resident memory per rank: \([0-9.]* MB\).*/${tag}_peak \1/p" "$OUT/fig/mem-$tag.txt"
  }
  if measures zero; then
    { zmem zero0 --algo ring; zmem zero1 --zero 1 --rs-algo ring --ag-algo ring
      echo "measured_on $(hostname) ($(nproc) cores), $(date -u '+%Y-%m-%d %H:%M UTC')"; } >> "$OUT/fig/measured.txt"
  fi
  # The ring and the pipelined ring measured now, one call each, as Gantt timelines
  # (fig/NAME/gantt.pdf): where the ring idles, and the chunks in flight that fill it.
  # A line "NAME machine, cores, time" of fig/measured.txt says on which machine and when, for
  # the slide ({{measured NAME}}): a timing is a fact about one machine at one moment.
  gantt() {
    local name=$1; shift
    want "$name" || return 0
    COLLKIT_CHUNK=8K "$B/bin/ckrun" -np 3 "$B/bin/collbench" "$@" -b 48K -e 48K -n 1 -w 0 -c 0 --model none \
        --overwrite --trace "$OUT/fig/$name.json" > "$OUT/fig/$name.txt" 2>&1 || { cat "$OUT/fig/$name.txt" >&2; exit 1; }
    echo "$name $(uname -n), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')" >> "$OUT/fig/measured.txt"
    rm -rf "${OUT:?}/fig/$name"
    "$B/bin/colldraw" --overwrite --gantt "$OUT/fig/$name.json" --out "$OUT/fig/$name" > /dev/null
    rsvg-convert -f pdf -o "$OUT/fig/$name/gantt.pdf" "$OUT/fig/$name/gantt.svg"
  }
  gantt ring --algo ring
  gantt pipe --algo ring_pipelined
  # Deck 03's simulated scale (p = 16 to 1024): make sim-bench's own results where a run left
  # them (SIM_RESULTS, default bench-results/sim-latest), else the small run checked in as
  # slides/sim/ (slides/sim/make.sh). The title says which run: simulator, host, date.
  simdir=${SIM_RESULTS:-$SRC/bench-results/sim-latest}
  # usable: both sizes drawn at three rank counts or more (SIM=smoke runs neither at 256 B)
  sizes_at() { awk -F, 'NR > 1 && $7 == "out" && ($3 == 256 || $3 == 1048576) && !seen[$3 "," $2]++ { n[$3]++ }
                        END { print ((n[256] >= 3 && n[1048576] >= 3) ? "yes" : "no") }' "$1"; }
  if [ -s "$simdir/sweep.csv" ] && [ -s "$simdir/platform.txt" ] && [ -s "$simdir/summary.md" ] &&
     [ "$(sizes_at "$simdir/sweep.csv")" = yes ]; then
    simcsv=$simdir/sweep.csv
    # "Simulated with SimGrid version 3.32 on HOST, mode quick; run STAMP." (sim-bench's --info)
    run=$(grep -o 'Simulated with [^;]*; run [0-9-]*' "$simdir/summary.md" | head -1 |
          sed 's/^Simulated with //; s/ version / /; s/, mode [a-z]*;/,/')
    run="${run:-$(basename "$(cd "$simdir" && pwd -P)")} (make sim-bench)"
  else
    simdir=$SRC/slides/sim simcsv=$SRC/slides/sim/scale.csv
    run=$(awk '$1 == "run" { sub(/^run /, ""); print }' "$simdir/platform.txt")
  fi
  key() { awk -v k="$1" '$1 == k { print $2 }' "$simdir/platform.txt"; }
  where="$(key name), $(key bw_gbs) GB/s links, $(key alpha_us) µs"
  for size in 256 1048576; do
    shows scale- || continue
    (cd "$SRC" && gnuplot -e "csv='$simcsv'; out='$OUT/fig/scale-$size.png'; B=$size; pngterm='$pngterm'; algos='ring rd rabenseifner tree2'" \
        -e "where='$where'; when='$run'" slides/scale.gp) 2> "$OUT/fig/scale-$size.log" ||
      { cat "$OUT/fig/scale-$size.log" >&2; exit 1; }
    gpfont "$OUT/fig/scale-$size.png" slides/scale.gp
  done
  # Deck 04's trainer scaling (p = 1 to 64, simulated): the same run's trainer.csv (make sim-bench
  # writes it beside sweep.csv), else the one checked in as slides/sim/trainer.csv.
  tcsv=$simdir/trainer.csv twhen=$run
  if [ "$simdir" = "$SRC/slides/sim" ] || [ ! -s "$tcsv" ] || [ "$(awk -F, 'NR > 1 && $1 == "ring"' "$tcsv" | wc -l)" -lt 3 ]; then
    tcsv=$SRC/slides/sim/trainer.csv
    twhen=$(awk '$1 == "trainer_run" { sub(/^trainer_run /, ""); print }' "$SRC/slides/sim/platform.txt")
  fi
  if shows trainer.png; then
    (cd "$SRC" && gnuplot -e "csv='$tcsv'; out='$OUT/fig/trainer.png'; pngterm='$pngterm'; algos='ring rabenseifner rd'" \
        -e "where='$where'; when='$twhen'" slides/trainer.gp) 2> "$OUT/fig/trainer.log" ||
      { cat "$OUT/fig/trainer.log" >&2; exit 1; }
    gpfont "$OUT/fig/trainer.png" slides/trainer.gp
  fi
  # Deck 02's chunk-size U-curve: the pipelined ring at p = 16 and 64 MiB, one model run per chunk
  # size (params.txt with chunk_bytes changed), against the plain ring: fig/chunks.csv, chunks.png.
  if shows chunks.png; then
    echo "chunk_bytes,ring_pipelined_us,ring_us" > "$OUT/fig/chunks.csv"
    for c in 4096 8192 16384 32768 65536 131072 262144 524288 1048576 2097152 4194304; do
      sed "s/^chunk_bytes .*/chunk_bytes $c/" "$SRC/slides/params.txt" > "$OUT/fig/chunk-params.txt"
      "$B/bin/collbench" --extrapolate --model "$OUT/fig/chunk-params.txt" --algo ring,ring_pipelined --pmax 16 \
          --overwrite --csv "$OUT/fig/chunk-model.csv" > /dev/null
      awk -F, -v c="$c" '$2 == 16 && $3 == 67108864 { t[$1] = $4 } END { print c "," t["ring_pipelined"] "," t["ring"] }' \
          "$OUT/fig/chunk-model.csv" >> "$OUT/fig/chunks.csv"
    done
    (cd "$SRC" && gnuplot -e "csv='$OUT/fig/chunks.csv'; out='$OUT/fig/chunks.png'; pngterm='$pngterm'; P=16; N='64 MiB'" \
        slides/chunks.gp) 2> "$OUT/fig/chunks.log" || { cat "$OUT/fig/chunks.log" >&2; exit 1; }
    gpfont "$OUT/fig/chunks.png" slides/chunks.gp
  fi
  # Deck 00's ping-pong and the α, β fitted to it, measured now between 2 ranks (collbench
  # --pingpong, median of its repetitions per size): fig/pingpong.png; "pingpong HOST, cores,
  # time" in fig/measured.txt for the slide.
  if shows pingpong.png; then
    "$B/bin/ckrun" -np 2 "$B/bin/collbench" --pingpong -b 8 -e 4M -f 4 --csv "$OUT/fig/pingpong.csv" \
        --save-model "$OUT/fig/pingpong-params.txt" --overwrite > "$OUT/fig/pingpong.txt" 2>&1 ||
      { cat "$OUT/fig/pingpong.txt" >&2; exit 1; }
    echo "pingpong $(uname -n), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')" >> "$OUT/fig/measured.txt"
    pp() { awk -v k="$1" '$1 == k { print $2 }' "$OUT/fig/pingpong-params.txt"; }
    (cd "$SRC" && gnuplot -e "dir='$OUT/fig'; fmt='png'; pngterm='$pngterm'; slide=1; alpha_us=$(pp alpha_us); beta_ns=$(pp beta_ns_per_byte)" \
        plots/pingpong.gp) 2> "$OUT/fig/pingpong.log" || { cat "$OUT/fig/pingpong.log" >&2; exit 1; }
    gpfont "$OUT/fig/pingpong.png" plots/pingpong.gp
  fi
  # Deck 02's ideal pipeline: 3 hops, 6 chunks, as a space-time diagram (no measurement)
  if shows pipeline.png; then
    (cd "$SRC" && gnuplot -e "out='$OUT/fig/pipeline.png'; pngterm='$pngterm'; S=3; M=6" slides/pipeline.gp) 2> "$OUT/fig/pipeline.log" ||
      { cat "$OUT/fig/pipeline.log" >&2; exit 1; }
    gpfont "$OUT/fig/pipeline.png" slides/pipeline.gp
  fi
  # Deck 03's model, one readable panel per rank count, titled with the parameters it uses:
  # each algorithm's time over the fastest's at that size (model-rel.csv: algo,p,bytes,ratio,
  # fastest), so that the crossovers and the winner at each size show.
  awk -F, -v OFS=, -v want=" naive ring rd rabenseifner tree tree2 " 'NR > 1 && index(want, " " $1 " ") && $4 > 0 {
         k = $2 "," $3; t[$1 "," k] = $4; if (!(k in best) || $4 < best[k]) { best[k] = $4; who[k] = $1 } }
       END { for (a in t) { split(a, c, ","); k = c[2] "," c[3]; print c[1], k, t[a] / best[k], (who[k] == c[1]) }
           }' "$OUT/fig/extrap.csv" | sort -t, -k1,1 -k2,2n -k3,3n > "$OUT/fig/model-rel.csv"
  for P in 16 64 256; do
    shows model-p || continue
    (cd "$SRC" && gnuplot -e "dir='$OUT/fig'; P=$P; pngterm='$pngterm'; alpha='$(par alpha_us)'; beta='$(par beta_ns_per_byte)'; gamma='$(par gamma_ns_per_byte)'; algos='naive ring rd rabenseifner tree tree2'" \
        slides/model.gp) 2> "$OUT/fig/model-p$P.log" || { cat "$OUT/fig/model-p$P.log" >&2; exit 1; }
    gpfont "$OUT/fig/model-p$P.png" slides/model.gp
  done
fi
# Deck 04's equivalence table: the commands of lab 04's step 2 (1 rank against 2 and 3 with
# the same global batch, dropout 0, 40 steps), with the library ring, on a model small enough
# to train in a second (4096 features, hidden 64) and tagsynth's 612 rows (a multiple of 1, 2
# and 3: no rank count pads the epoch). ckptdiff's figure for each pair is a line of
# fig/measured.txt: eq_KIND_pP, and for Adam at p = 3 where it lies (eq_adam_p3_at).
if measures eq_; then
  "$B/bin/tagsynth" --rows 612 --out "$OUT/fig/eq-data.csv" --overwrite > /dev/null
  [ -s "$OUT/fig/ddp-holdout.csv" ] || "$B/bin/tagsynth" --rows 64 --seed 2 --out "$OUT/fig/ddp-holdout.csv" --overwrite > /dev/null
  eqrun() {   # eqrun NAME P OPTIONS...: a checkpoint in fig/eq/NAME, deck 04's model
    local name=$1 np=$2; shift 2
    eqtrain "$name" "$np" --data "$OUT/fig/eq-data.csv" --holdout "$OUT/fig/ddp-holdout.csv" \
        --features 4096 --hidden 64 --epochs 2 --batch 32 --transport mpi "$@"
  }
  eqtrain() {   # eqtrain NAME P OPTIONS...: tagtrain with the library ring, dropout 0
    local name=$1 np=$2; shift 2
    rm -rf "${OUT:?}/fig/eq/$name"
    "$B/bin/ckrun" -np "$np" "$B/bin/tagtrain" --algo ring --dropout 0 --quiet \
        --save "$OUT/fig/eq/$name" "$@" > "$OUT/fig/eq/$name.txt" 2>&1 || { cat "$OUT/fig/eq/$name.txt" >&2; exit 1; }
  }
  eqdiff() {   # eqdiff KEY A B: "KEY max|a-b|/(1+|a|)" and "KEY_at TENSOR" from ckptdiff
    local rc=0
    "$B/bin/ckptdiff" "$OUT/fig/eq/$2/last.ckpt" "$OUT/fig/eq/$3/last.ckpt" > "$OUT/fig/eq/$1.txt" 2>&1 || rc=$?
    [ $rc -le 1 ] || { cat "$OUT/fig/eq/$1.txt" >&2; exit 1; }   # 1: beyond its tolerance, as Adam's may be
    sed -n "s/.* = \([0-9.e+-]*\) at \([A-Za-z_0-9]*\) .*/$1 \1\n$1_at \2/p" "$OUT/fig/eq/$1.txt" | grep . ||
      { echo "slides: ckptdiff printed no figure:" >&2; cat "$OUT/fig/eq/$1.txt" >&2; exit 1; }
  }
  mkdir -p "$OUT/fig/eq"
  for p in 1 2 3; do eqrun sgd-p$p $p --optimizer sgd --lr 0.1; eqrun adam-p$p $p; done
  eqrun adam-p3b 3 --bucket-mb 0.25
  # The configuration lab 04's grader uses (labs/04-ddp/lab.conf, part equivalence: a 1024-32-4
  # model, 720 rows of tagsynth --seed 1, folds 5/5, 2 epochs of Adam, p = 2 and 3, blocking and
  # --bucket-mb 0.02, --check-sync; bar 1e-5): eq_grade_pP, eq_grade_pPb
  "$B/bin/tagsynth" --rows 720 --seed 1 --out "$OUT/fig/eq-grade.csv" --overwrite > /dev/null
  graderun() { eqtrain "$@" --data "$OUT/fig/eq-grade.csv" --folds 5 --fold 5 --features 1024 --hidden 32 --epochs 2; }
  graderun grade-p1 1
  for p in 2 3; do graderun grade-p$p $p --check-sync; graderun grade-p${p}b $p --check-sync --bucket-mb 0.02; done
  { for k in sgd adam; do eqdiff eq_${k}_p2 $k-p1 $k-p2; eqdiff eq_${k}_p3 $k-p1 $k-p3; done
    eqdiff eq_adam_p3b adam-p1 adam-p3b
    for p in 2 3; do eqdiff eq_grade_p$p grade-p1 grade-p$p; eqdiff eq_grade_p${p}b grade-p1 grade-p${p}b; done
    echo "eq_on $(uname -n) ($(nproc) cores), $(date -u '+%Y-%m-%d %H:%M UTC')"; } >> "$OUT/fig/measured.txt"
fi
# Deck 06's recipe, call by call: the lab's crash harness counting one save of lab 06's
# reference solution: save_calls N, save_write1 and save_write2 (the first write, which the
# harness cuts short, and the one that finishes it). collkit-cc builds it into the build folder,
# again only when the solution or collkit-cc is newer (the slide test builds deck 06 many times).
if measures save_; then
  mkdir -p "$OUT/fig/save" "$B/slides-lab06"
  ref=$B/slides-lab06/lab
  if ! [ "$ref" -nt "$SRC/labs/06-faults/solution/my_save.c" ] || ! [ "$ref" -nt "$B/bin/collkit-cc" ]; then
    "$B/bin/collkit-cc" "$SRC/labs/06-faults/solution/my_save.c" -o "$ref" > "$OUT/fig/save/cc.txt" 2>&1 ||
      { cat "$OUT/fig/save/cc.txt" >&2; exit 1; }
  fi
  rm -rf "${OUT:?}/fig/save/dir" && mkdir "$OUT/fig/save/dir"
  "$ref" save --dir "$OUT/fig/save/dir" --trace --count > "$OUT/fig/save/count.txt" 2>&1 ||
    { cat "$OUT/fig/save/count.txt" >&2; exit 1; }
  # "  [2] write(3 state.bin.tmp.PID, 4123 B) = 2062" after "my_save(...)": the file name dropped
  saved=$(awk '/^my_save\(/ { on = 1; next } on && /^  \[[0-9]+\] write\(/ {
                 n++; sub(/^  \[[0-9]+\] /, ""); sub(/ [^,]*,/, ","); print "save_write" n " " $0 }
               /^save: COUNT [0-9]+ / { print "save_calls " $3 }' "$OUT/fig/save/count.txt")
  [ "$(echo "$saved" | grep -c '^save_')" -ge 3 ] || { echo "slides: the save harness counted no recipe:" >&2; cat "$OUT/fig/save/count.txt" >&2; exit 1; }
  echo "$saved" >> "$OUT/fig/measured.txt"
  # the same calls on a timeline (fig/save/timeline.png): per kill point K, call K and what is on
  # disk when the save dies before it (a temporary file left; state.bin old or new), read off the
  # trace: openat with O_CREAT makes the temporary file, rename makes it state.bin
  awk '/^my_save\(/ { on = 1; next }
       on && /^  \[[0-9]+\] / { k = $1; gsub(/[][]/, "", k); name = $2; sub(/\(.*/, "", name)
                               print k "," name "," tmp + 0 "," new + 0
                               if (name == "openat" && $0 ~ /O_CREAT/) tmp = 1; if (name == "rename") { tmp = 0; new = 1 } }
       on && /^  returned / { print k + 1 ",done," tmp + 0 "," new + 0; on = 0 }' "$OUT/fig/save/count.txt" > "$OUT/fig/save/calls.csv"
  (cd "$SRC" && gnuplot -e "csv='$OUT/fig/save/calls.csv'; out='$OUT/fig/save/timeline.png'; pngterm='$pngterm'" slides/faults.gp) \
      2> "$OUT/fig/save/timeline.log" || { cat "$OUT/fig/save/timeline.log" >&2; exit 1; }
  gpfont "$OUT/fig/save/timeline.png" slides/faults.gp
fi
# A model number on a slide is written {{model ALGO P BYTES UNIT}} (UNIT ms or µs for the time,
# GB/s for the busbw collbench derives from it, decimal as nccl-tests') and a model
# parameter {{param KEY}}; both are filled in here, from the CSV collbench just wrote and from
# params.txt: no number can drift from the command or the file the slide names.
# A crossover is written {{crossover ALGOS P}} (ALGOS as --algo takes them, shm:ALGOS on the shm
# transport): the size from which the second is fastest at P ranks, as collbench prints it.
# A figure measured by this build is written {{measured KEY}}: the rest of the line "KEY ..." of
# fig/measured.txt, written above by the commands that measured it (a trace's line says on
# which machine and when; measured_on does for the memory figures).
for key in $(cat "$SRC"/slides/[0-9][0-9]-*.md | grep -o '{{crossover [^ }]*' | sed 's/{{crossover //' | sort -u); do
  case $key in shm:*) set -- --transport shm --algo "${key#shm:}" --pmax 8 ;; *) set -- --algo "$key" --pmax 4096 ;; esac
  "$B/bin/collbench" --extrapolate --model "$SRC/slides/params.txt" "$@" > "$OUT/fig/cross-$key.txt"
done
fill() {
  awk -v csv="$OUT/fig/extrap.csv" -v params="$SRC/slides/params.txt" -v fig="$OUT/fig" '
    BEGIN { while ((getline l < csv) > 0) { split(l, c, ","); t[c[1] "," c[2] "," c[3]] = c[4]; bw[c[1] "," c[2] "," c[3]] = c[5] }
            while ((getline l < params) > 0) if (l !~ /^#/ && split(l, c, " ") == 2) par[c[1]] = c[2]
            while ((getline l < (fig "/measured.txt")) > 0) { k = l; sub(/ .*/, "", k); sub(/^[^ ]* /, "", l); meas[k] = l } }
    # {{include NAME}} alone on a line: the Markdown make slides wrote as fig/NAME.md (a table)
    /^\{\{include [a-z_0-9]*\}\}$/ { f = fig "/" substr($0, 11, length($0) - 12) ".md"; got = 0
      while ((getline l < f) > 0) { print l; got = 1 }
      if (!got) { printf "slides: %s line %d: nothing in %s\n", FILENAME, FNR, f > "/dev/stderr"; bad = 1 }
      next }
    { s = $0; out = ""
      while (match(s, /\{\{measured [a-z_0-9]*\}\}/)) {
        k = substr(s, RSTART + 11, RLENGTH - 13)
        if (!(k in meas)) { printf "slides: %s line %d: nothing measured as %s (fig/measured.txt)\n", FILENAME, FNR, k > "/dev/stderr"; bad = 1 }
        out = out substr(s, 1, RSTART - 1) meas[k]; s = substr(s, RSTART + RLENGTH)
      }
      s = out s; out = ""
      while (match(s, /\{\{param [a-z_]*\}\}/)) {
        k = substr(s, RSTART + 8, RLENGTH - 10)
        if (!(k in par)) { printf "slides: %s line %d: no parameter %s in %s\n", FILENAME, FNR, k, params > "/dev/stderr"; bad = 1 }
        out = out substr(s, 1, RSTART - 1) par[k]; s = substr(s, RSTART + RLENGTH)
      }
      s = out s; out = ""
      while (match(s, /\{\{crossover [^}]*\}\}/)) {
        at = RSTART; len = RLENGTH; v = ""   # the match below moves RSTART
        n = split(substr(s, at + 12, len - 14), a, " ")
        file = fig "/cross-" a[1] ".txt"
        while (n == 2 && (getline l < file) > 0)
          if (l ~ ("^ *p = *" a[2] ":") && match(l, /from [0-9.]+ [KMG]?B/)) v = substr(l, RSTART + 5, RLENGTH - 5)
        close(file)
        if (v == "") { printf "slides: %s line %d: %s: collbench names no crossover there\n", FILENAME, FNR,
                              substr(s, at, len) > "/dev/stderr"; bad = 1; v = "??" }
        # collbench counts sizes in powers of 1024 ("KB" = 1024 B): the slides write KiB, MiB
        else if (match(v, / [KMG]B$/)) v = substr(v, 1, RSTART + 1) "i" substr(v, RSTART + 2)
        out = out substr(s, 1, at - 1) v; s = substr(s, at + len)
      }
      s = out s; out = ""
      # {{growth ALGO P1 P2 BYTES}}: the words for how the model time changes from P1 to P2
      # ranks, made from the two times, so that the sentence cannot say "flat" of a doubling
      while (match(s, /\{\{growth [^}]*\}\}/)) {
        n = split(substr(s, RSTART + 9, RLENGTH - 11), a, " ")
        k1 = a[1] "," a[2] "," a[4]; k2 = a[1] "," a[3] "," a[4]
        if (n != 4 || !(k1 in t) || !(k2 in t) || t[k1] <= 0) {
          printf "slides: %s line %d: %s: no such model values (ALGO P1 P2 BYTES, rows of %s)\n", FILENAME, FNR,
                 substr(s, RSTART, RLENGTH), csv > "/dev/stderr"; bad = 1; v = "??"
        } else {
          r = t[k2] / t[k1]
          if (r < 1.1 && r > 0.9) v = sprintf("stays within 10 %% from p = %s to p = %s", a[2], a[3])
          else v = sprintf("%s %.1f-fold from p = %s to p = %s", r > 1 ? "grows" : "shrinks", r > 1 ? r : 1 / r, a[2], a[3])
        }
        out = out substr(s, 1, RSTART - 1) v; s = substr(s, RSTART + RLENGTH)
      }
      s = out s; out = ""
      while (match(s, /\{\{model [^}]*\}\}/)) {
        n = split(substr(s, RSTART + 8, RLENGTH - 10), a, " ")
        k = a[1] "," a[2] "," a[3]
        if (n != 4 || !(k in t) || (a[4] != "ms" && a[4] != "µs" && a[4] != "GB/s")) {
          printf "slides: %s line %d: %s: no such model value (ALGO P BYTES ms|µs|GB/s, rows of %s)\n", FILENAME, FNR,
                 substr(s, RSTART, RLENGTH), csv > "/dev/stderr"; bad = 1; v = "??"
        } else v = sprintf("%.1f %s", a[4] == "GB/s" ? bw[k] : a[4] == "ms" ? t[k] / 1000 : t[k], a[4])
        out = out substr(s, 1, RSTART - 1) v; s = substr(s, RSTART + RLENGTH)
      }
      print out s }
    END { exit bad }' "$1"
}
# A command on a slide breaks only between arguments: in inline code (outside code blocks), the
# space between an option and its value (-np 4, --algo ring) becomes a no-break space, so that
# LaTeX cannot end a line on "--algo" and start the next on "ring" (the slide test checks it).
nobreak() {   # (a code span may run over two lines of the source: the file is read whole)
  perl -0777 -pe 's{(^```.*?^```[^\n]*$)|(`[^`]*`)}{ defined $1 ? $1 : do { my $t = $2;
                      $t =~ s/(?<![^\s`])(-{1,2}[A-Za-z][-A-Za-z0-9_]*)[ \n](?=[^\s`-])/$1\xc2\xa0/g; $t } }gmse' "$@"
}
# Every picture's placed size, for the slide test's smallest-text rule: pdflatex logs
# "ckfig: page N FILE Wpt x Hpt" for each \includegraphics as it lands on its page (the
# height or width the source asks for, shrunk to the page as pandoc's defaults do).
cat > "$OUT/figsize.tex" <<'EOF'
\makeatletter
\let\ck@includegraphics\includegraphics
\newsavebox\ck@figbox
\renewcommand{\includegraphics}[2][]{\sbox\ck@figbox{\ck@includegraphics[#1]{#2}}%
  \typeout{ckfig: page \insertframenumber\space #2 \the\wd\ck@figbox\space x \the\ht\ck@figbox}\usebox\ck@figbox}
\makeatother
EOF
status=0
# Each deck: pandoc writes the LaTeX, pdflatex
# typesets it twice; NAME.pandoc.log keeps pandoc's warnings, NAME.latex.log its overfull boxes and missing files
# for the slide test). SLIDES_ONLY=NAME builds that deck alone.
for md in "$SRC"/slides/[0-9][0-9]-*.md; do
  name=$(basename "$md" .md)
  [ -z "${SLIDES_ONLY:-}" ] || [ "$SLIDES_ONLY" = "$name" ] || continue
  ok=1
  fill "$md" > "$OUT/$name.filled.md" 2> "$OUT/$name.pandoc.log" && nobreak "$OUT/$name.filled.md" > "$OUT/$name.md" &&
    pandoc -t beamer -s --slide-level=2 -V theme=default -V aspectratio=169 -H "$SRC/slides/preamble.tex" \
      -H "$OUT/figsize.tex" "$OUT/$name.md" -o "$OUT/$name.tex" 2>> "$OUT/$name.pandoc.log" || ok=0
  if [ $ok = 1 ]; then
    for run in 1 2; do
      (cd "$OUT" && TEXINPUTS=".:$SRC/slides//:" max_print_line=1000 pdflatex -interaction=nonstopmode -halt-on-error "$name.tex" \
         > /dev/null 2>&1) || { ok=0; break; }
    done
    mv -f "$OUT/$name.log" "$OUT/$name.latex.log" 2>/dev/null
  fi
  rm -f "$OUT/$name".{aux,nav,out,snm,toc,vrb}
  if [ $ok = 1 ]; then
    echo "slides: $OUT/$name.pdf"
  else
    echo "slides: $name failed:" >&2; cat "$OUT/$name.pandoc.log" >&2; grep -A3 '^!' "$OUT/$name.latex.log" >&2 2>/dev/null; status=1
  fi
done
exit $status
