#!/bin/sh
# cli.sh TEST BINDIR "MPIRUN [FLAGS]" — command-line tests of tagtrain and tagpredict
# on the real Made With ML data (found by tagtrain's own lookup). Small models
# (1024 features, one hidden layer of 32) keep each run around a second.
# Prints "N passed, M failed"; exits non-zero on any failure.
set -u
TEST=$1 BIN=$2 MPIRUN=$3
W=$(mktemp -d /tmp/collkit_trainer_cli.XXXXXX)
trap 'rm -rf "$W"' EXIT
# --val-frac 0.2: a validation split, so that best.ckpt is the best epoch by val
# loss (the default trains on all rows, and best.ckpt is the last epoch).
SMALL="--features 1024 --hidden 32 --batch 32 --epochs 4 --val-frac 0.2"
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
train() { np=$1; shift; $MPIRUN -np "$np" "$BIN/tagtrain" "$@"; }
# Argument errors happen before any communication: a singleton run (no mpirun) is enough and much faster.
train1() { "$BIN/tagtrain" "$@"; }
# A JSON number field of the log's records of one type: jfield FILE TYPE FIELD
jfield() { grep "\"type\":\"$2\"" "$1" | sed "s/.*\"$3\":\\([^,}]*\\).*/\\1/"; }

# Every test but `args` trains on the real data: without it, skip (CTest's
# SKIP_RETURN_CODE 77) and say where it was looked for.
. "$(dirname "$0")/../lib/need_data.sh"
[ "$TEST" = args ] || skip_without_data

case $TEST in
loss)
  # Training on the real data lowers the loss: train loss of the last epoch
  # well under the first, and val loss lower at the end than after epoch 1.
  # The log says what every step all-reduced: the whole gradient buffer.
  train 2 $SMALL --lr 1e-2 --no-save --log "$W/log.jsonl" > "$W/out" 2>&1
  check '[ $? -eq 0 ]' "tagtrain failed: $(cat "$W/out")"
  paste -d' ' "$(jfield "$W/log.jsonl" epoch train_loss > "$W/t"; echo "$W/t")" \
        "$(jfield "$W/log.jsonl" epoch val_loss > "$W/v"; echo "$W/v")" > "$W/l"
  check '[ $(wc -l < "$W/l") -eq 4 ]' "want 4 epoch records, got $(wc -l < "$W/l")"
  check 'awk "NR==1{t=\$1;v=\$2} END{exit !(\$1 < 0.8*t && \$2 < v)}" "$W/l"' "loss did not decrease: $(tr '\n' ' ' < "$W/l")"
  gb=$(jfield "$W/log.jsonl" run gradient_bytes)
  check '[ "$gb" = 131728 ]' "gradient bytes of the 1024-32-4 model: $gb, want 131728 (32932 floats)"
  check '[ "$(jfield "$W/log.jsonl" step allreduce_bytes | sort -u)" = "$gb" ]' \
        "not every step all-reduced the whole buffer: $(jfield "$W/log.jsonl" step allreduce_bytes | sort -u | tr '\n' ' ')"
  check '[ "$(jfield "$W/log.jsonl" summary allreduce_bytes_per_step)" = "$gb" ]' "summary bytes per step"
  # The steady rate leaves out epoch 1 (the warm-up): epochs 2-4's samples over their time.
  steady=$(jfield "$W/log.jsonl" summary steady_samples_per_s)
  jfield "$W/log.jsonl" epoch samples > "$W/sn"; jfield "$W/log.jsonl" epoch time_s > "$W/sT"
  paste -d' ' "$W/sn" "$W/sT" > "$W/st"
  check 'awk -v s="$steady" "NR > 1 { n += \$1; t += \$2 } END { r = n / t; exit !(t > 0 && s > 0 && (s - r) ^ 2 < (1e-3 * r) ^ 2) }" "$W/st" &&
         grep -q "samples/s ([0-9]* after the first epoch)" "$W/out"' \
        "steady_samples_per_s $steady is not epochs 2-4's rate: $(tr '\n' ' ' < "$W/st") $(grep '^trained' "$W/out")"
  check 'grep -q "all-reduce: dense, 0.13 MB per step (the whole gradient buffer)" "$W/out"' "banner does not say the bytes"
  # The density the banner prints is in the log too (compare.sh feeds it to the PyTorch scripts).
  nz=$(jfield "$W/log.jsonl" run nnz_per_row)
  check 'grep -q "($(printf "%.0f" "$nz") non-zero features per train row)" "$W/out" && awk "BEGIN{exit !($nz > 10)}"' \
        "log's nnz_per_row $nz does not match the banner: $(grep non-zero "$W/out")"
  check 'grep -q "weighted avg" "$W/out" && grep -q "confusion matrix" "$W/out"' "no holdout table"
  ;;
resume)
  # Interrupted after 2 of 4 epochs and resumed == uninterrupted, bit for bit
  # (dropout on: the per-epoch random streams must be restored too), in the
  # dense and the sparse all-reduce.
  for mode in "" --sparse-grads; do
    rm -rf "$W/a" "$W/b"
    train 2 $SMALL --dropout 0.5 --save "$W/a" $mode > "$W/outa" 2>&1
    check '[ $? -eq 0 ]' "uninterrupted run $mode failed: $(cat "$W/outa")"
    train 2 $SMALL --dropout 0.5 --save "$W/b" --stop-after 2 $mode > "$W/outb" 2>&1
    check '[ $? -eq 0 ]' "first half $mode failed: $(cat "$W/outb")"
    check '! cmp -s "$W/a/last.ckpt" "$W/b/last.ckpt"' "after 2 epochs the checkpoint already equals the 4-epoch one"
    if [ -z "$mode" ]; then
      # A missing best.ckpt (deleted, or lost in a crash) is rebuilt from the
      # best recorded in last.ckpt, byte-equal to the one that was written.
      rm -rf "$W/c" && cp -r "$W/b" "$W/c" && rm "$W/c/best.ckpt"
      train 2 --resume "$W/c/last.ckpt" --save "$W/c" --epochs 2 > "$W/outr" 2>&1
      check '[ $? -eq 0 ] && grep -q "repaired .*best.ckpt was missing" "$W/outr"' "missing best.ckpt not repaired: $(cat "$W/outr")"
      check 'cmp "$W/b/best.ckpt" "$W/c/best.ckpt"' "the repaired best.ckpt differs from the one written at epoch 2"
    fi
    train 2 --resume "$W/b/last.ckpt" --save "$W/b" $mode > "$W/outc" 2>&1
    check '[ $? -eq 0 ] && grep -q "resumed from" "$W/outc"' "resume $mode failed: $(cat "$W/outc")"
    check 'cmp "$W/a/last.ckpt" "$W/b/last.ckpt"' "resumed final checkpoint differs from the uninterrupted one $mode"
    check 'cmp "$W/a/best.ckpt" "$W/b/best.ckpt"' "resumed best checkpoint differs $mode"
    check '[ "$(grep "holdout weighted F1" "$W/outa" | sed "s/.*F1 //")" = "$(grep "holdout weighted F1" "$W/outc" | sed "s/.*F1 //")" ]' \
          "holdout F1 differs between the uninterrupted and the resumed run $mode"
  done
  # A resumed run keeps the checkpoint's configuration: an option that says
  # otherwise is refused before anything is touched, the same value is fine.
  cp "$W/b/last.ckpt" "$W/keep.ckpt"
  train 2 --resume "$W/b/last.ckpt" --save "$W/b" --epochs 5 --lr 0.5 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "\-\-lr 0.5 differs from the configuration" "$W/o" && cmp -s "$W/b/last.ckpt" "$W/keep.ckpt"' \
        "--resume with another --lr: rc $rc $(cat "$W/o")"
  train 2 --resume "$W/b/last.ckpt" --save "$W/b" --epochs 5 --nb-scale 0 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "\-\-nb-scale 0 differs from the configuration" "$W/o" && cmp -s "$W/b/last.ckpt" "$W/keep.ckpt"' \
        "--resume with another --nb-scale: rc $rc $(cat "$W/o")"
  train 2 --resume "$W/b/last.ckpt" --no-save --epochs 5 --stop-after 1 --features 1024 --hidden 32 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ]' "--resume with the checkpoint's own --features and --hidden: rc $rc $(cat "$W/o")"
  # best.ckpt holds a model, not a training state.
  train 2 --resume "$W/b/best.ckpt" --no-save > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "resume from last.ckpt" "$W/o"' "resume from best.ckpt not refused: rc $rc $(cat "$W/o")"
  ;;
corrupt)
  train 2 $SMALL --epochs 1 --save "$W/r" > "$W/out" 2>&1
  check '[ $? -eq 0 ] && [ -f "$W/r/last.ckpt" ]' "training failed: $(cat "$W/out")"
  size=$(wc -c < "$W/r/last.ckpt")
  cp "$W/r/last.ckpt" "$W/flip.ckpt"
  printf '\377' | dd of="$W/flip.ckpt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
  "$BIN/tagpredict" --checkpoint "$W/flip.ckpt" --title x > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "checksum mismatch" "$W/o"' "flipped byte not refused by tagpredict: rc $rc $(cat "$W/o")"
  train 2 --resume "$W/flip.ckpt" --no-save > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "checksum mismatch" "$W/o"' "flipped byte not refused by --resume: rc $rc $(cat "$W/o")"
  head -c $((size - 100)) "$W/r/last.ckpt" > "$W/trunc.ckpt"
  train 2 --resume "$W/trunc.ckpt" --no-save > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "truncated" "$W/o"' "truncated file not refused: rc $rc $(cat "$W/o")"
  echo "id,title" > "$W/foreign.ckpt"
  "$BIN/tagpredict" --checkpoint "$W/foreign.ckpt" --title x > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "not a tagtrain checkpoint" "$W/o"' "foreign file not refused: $(cat "$W/o")"
  # A FIFO as --resume or --checkpoint: refused at once, not waited on.
  mkfifo "$W/fifo.ckpt"
  timeout 20 "$BIN/tagtrain" --resume "$W/fifo.ckpt" --no-save > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "not a regular file" "$W/o"' "FIFO as --resume: rc $rc (124: it hung) $(cat "$W/o")"
  timeout 20 "$BIN/tagpredict" --checkpoint "$W/fifo.ckpt" --title x > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "not a regular file" "$W/o"' "FIFO as --checkpoint: rc $rc $(cat "$W/o")"
  # A user's file under a checkpoint name is never overwritten.
  mkdir -p "$W/mine" && echo "my notes" > "$W/mine/best.ckpt"
  train 2 $SMALL --epochs 1 --save "$W/mine" > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "refusing to overwrite" "$W/o"' "save over a foreign best.ckpt not refused: rc $rc"
  check '[ "$(cat "$W/mine/best.ckpt")" = "my notes" ]' "the user's file was changed"
  check '! grep -q "^epoch" "$W/o"' "refused only after training: $(cat "$W/o")"
  ;;
sync)
  train 3 $SMALL --epochs 2 --no-save --check-sync > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && [ $(grep -c "sync ok" "$W/o") -eq 2 ]' "check-sync run failed: rc $rc $(cat "$W/o")"
  train 3 $SMALL --epochs 3 --no-save --check-sync --inject-desync 2 > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "after epoch 2: ranks out of sync: rank 1" "$W/o"' "desync not detected: rc $rc $(cat "$W/o")"
  ;;
args)
  for a in "--algo nope" "--hidden 0" "--hidden 12,,3" "--epochs abc" "--epochs 0" "--dropout 1" "--lr -1" "--batch" \
           "--bogus" "--optimizer rmsprop" "--features 0" "stray" "--val-frac 1" "--folds 5" "--fold 2" \
           "--folds 5 --fold 6" "--folds 1 --fold 1" "--class-weight 1,2,3" "--class-weight 1,0,1,1" \
           "--class-weight 1,nan,1,1" "--sparse-grads --bucket-mb 1" "--lr nan" "--batch 0" "--accum 0" \
           "--dropout 0.99999999" "--label-smoothing 0.99999999" "--momentum 0.99999999" \
           "--folds 5 --fold 1 --metrics m.json" "--nb-scale 2" "--nb-scale on"; do
    train1 $a > "$W/o" 2>&1; rc=$?
    check '[ $rc -eq 2 ] && grep -q "tagtrain" "$W/o"' "'$a': want exit 2 and a message, got rc $rc: $(cat "$W/o")"
  done
  train1 --algo nope > "$W/o" 2>&1
  check 'grep -q "unknown algorithm .nope." "$W/o" && grep -q "ring" "$W/o"' "unknown --algo does not list the names"
  # --device: cpu or cuda; what the device step does not take yet is refused
  # up front, and so is an algorithm that cannot all-reduce device buffers
  # (the message names those that can).
  for a in "--device gpu" "--device cuda --zero 1" "--device cuda --sparse-grads" "--device cuda --bucket-mb 1" \
           "--device cuda --transport shm" "--device cuda --algo mpi"; do
    train1 $a > "$W/o" 2>&1; rc=$?
    check '[ $rc -eq 2 ] && grep -q "tagtrain: .*--device" "$W/o"' "'$a': want exit 2 and a message, got rc $rc: $(cat "$W/o")"
  done
  train1 --device cuda --algo mpi > "$W/o" 2>&1
  check 'grep -q "mpi. runs on host buffers, not cuda" "$W/o" && grep -q "ring" "$W/o"' \
        "--device cuda --algo mpi does not name the device algorithms: $(cat "$W/o")"
  # Without a GPU (or CUDA in the build): a clear error, exit 1, before any data is read.
  if ! "$BIN/test_gpu" --probe > /dev/null 2>&1; then
    train 2 --device cuda --no-save > "$W/o" 2>&1; rc=$?
    check '[ $rc -eq 1 ] && [ "$(grep -c "tagtrain: rank 0: --device cuda: .*\(CUDA\|cuda\)" "$W/o")" = 1 ] &&
           ! grep -q "featuris\|holdout" "$W/o"' "--device cuda without a GPU: rc $rc: $(cat "$W/o")"
  fi
  train1 --algo list > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "ring" "$W/o"' "--algo list failed"
  train1 --help > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q -- "--bucket-mb" "$W/o" && grep -q -- "--sparse-grads" "$W/o" && grep -q -- "--device cpu|cuda" "$W/o"' "--help failed"
  train 2 --data "$W/none.csv" --no-save > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "none.csv" "$W/o"' "missing --data file: rc $rc $(cat "$W/o")"
  printf 'id,created_on,title,description,tag\n1,x,"unterminated,desc,other\n' > "$W/bad.csv"
  train 2 --data "$W/bad.csv" --no-save > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "bad.csv:[0-9]" "$W/o"' "malformed --data file: rc $rc $(cat "$W/o")"
  "$BIN/tagpredict" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ]' "tagpredict without --title: rc $rc"
  ;;
predict)
  train 2 $SMALL --save "$W/r" > "$W/o" 2>&1
  check '[ $? -eq 0 ]' "training failed: $(cat "$W/o")"
  "$BIN/tagpredict" --checkpoint "$W/r/best.ckpt" --title "Transformers for text classification" \
      --description "Fine-tuning BERT language models on NLP tasks" > "$W/p" 2>&1
  check '[ $? -eq 0 ] && grep -q "^tag: " "$W/p"' "tagpredict failed: $(cat "$W/p")"
  check '[ $(grep -c "^  " "$W/p") -eq 4 ] && awk "/^  /{s+=\$2} END{exit !(s > 0.999 && s < 1.001)}" "$W/p"' \
        "want 4 probabilities summing to 1: $(cat "$W/p")"
  "$BIN/tagpredict" --checkpoint "$W/r/best.ckpt" --title "Transformers for text classification" --json > "$W/j" 2>&1
  check 'grep -q "^{\"tag\":\"" "$W/j" && grep -q "\"probabilities\":{" "$W/j" && ! grep -qi "nan" "$W/j"' \
        "--json output: $(cat "$W/j")"
  # The rules of a data row: a title with a word in it, UTF-8 text.
  "$BIN/tagpredict" --checkpoint "$W/r/best.ckpt" --title "  " > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "title is empty" "$W/o"' "blank --title: rc $rc $(cat "$W/o")"
  "$BIN/tagpredict" --checkpoint "$W/r/best.ckpt" --title "ok" --description "$(printf 'bad \377 byte')" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "\-\-description: invalid UTF-8" "$W/o"' "invalid UTF-8: rc $rc $(cat "$W/o")"
  "$BIN/tagpredict" --checkpoint "$W/r/last.ckpt" --title "YOLO object detection" --json > "$W/j" 2>&1
  check '[ $? -eq 0 ] && grep -q "\"tag\":" "$W/j"' "tagpredict on last.ckpt: $(cat "$W/j")"
  # Without a validation split (the default), best.ckpt is the last epoch's model.
  train 2 $SMALL --val-frac 0 --save "$W/nv" > "$W/o" 2>&1
  check '[ $? -eq 0 ] && grep -q "764 train / 0 val" "$W/o" && grep -q "the model of the last epoch, 4" "$W/o" && ! grep -q "warning" "$W/o"' \
        "--val-frac 0: $(cat "$W/o")"
  "$BIN/tagpredict" --checkpoint "$W/nv/best.ckpt" --title "YOLO object detection" --json > "$W/j1" 2>&1
  "$BIN/tagpredict" --checkpoint "$W/nv/last.ckpt" --title "YOLO object detection" --json > "$W/j2" 2>&1
  check 'cmp -s "$W/j1" "$W/j2"' "--val-frac 0: best.ckpt and last.ckpt predict differently"
  ;;
bucketed)
  # Buckets of 8 KiB: many all-reduces in flight during backward; all ranks in
  # sync; the same training as the plain run (test_dp checks the numbers).
  # Two hidden layers and buckets smaller than the last two, so that some are launched while
  # backward still runs; --trace records every step's timeline, colldraw --gantt draws one.
  train 2 $SMALL --hidden 32,16 --epochs 2 --no-save --bucket-mb 0.002 --check-sync --log "$W/b.jsonl" --trace "$W/t.json" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "all-reduce: bucketed" "$W/o" && [ $(grep -c "sync ok" "$W/o") -eq 2 ]' "bucketed run: rc $rc $(cat "$W/o")"
  train 2 $SMALL --hidden 32,16 --epochs 2 --no-save --log "$W/p.jsonl" > "$W/o2" 2>&1
  l1=$(jfield "$W/b.jsonl" epoch train_loss | tail -1)
  l2=$(jfield "$W/p.jsonl" epoch train_loss | tail -1)
  check 'awk "BEGIN{d=$l1-$l2; if (d<0) d=-d; exit !(d <= 1e-4*(1+$l2))}"' "bucketed train loss $l1 vs plain $l2"
  # The trace, per rank and step: layers 2, 1, 0 in that order, then the wait for the buckets;
  # every bucket launched once and all-reduced once, never before its launch; bucket 0 (the
  # last layers' gradients) launched before layer 0 is done: the overlap.
  steps=$(jfield "$W/b.jsonl" step global_step | wc -l)
  nb=$(head -1 "$W/t.json" | grep -o '[0-9]* buckets of' | cut -d' ' -f1)
  check 'head -1 "$W/t.json" | grep -q "\"program\":\"tagtrain\"" && [ "${nb:-0}" -gt 1 ]' "trace header: $(head -1 "$W/t.json")"
  # one line per event: pid cat index step ts dur
  sed -n 's/.*"cat":"\([a-z]*\)".*"pid":\([0-9]*\),"tid":[0-9]*,"ts":\([0-9.]*\)\(,"dur":\([0-9.]*\)\)\{0,1\},"args":{"bytes":[0-9]*,"step":\([0-9]*\),"call":\([0-9]*\)}}.*/\2 \1 \6 \7 \3 \5/p' \
    "$W/t.json" > "$W/ev"
  why=$(awk -v steps="$steps" -v nb="$nb" '
    $2 == "launch" { at[$1, $3, $4] = $5; nl[$1]++ }
    $2 == "bucket" { nbk[$1]++; if (!(($1, $3, $4) in at) || $5 < at[$1, $3, $4]) print "rank " $1 " bucket " $3 " of step " $4 " ran before its launch" }
    $2 == "layer" || $2 == "wait" { seq[$1, $4] = seq[$1, $4] " " $2 $3 }
    $2 == "layer" && $3 == 0 { end0[$1, $4] = $5 + $6 }
    END {
      for (r = 0; r < 2; r++) {
        if (nl[r] != steps * nb || nbk[r] != steps * nb) print "rank " r ": " nl[r] " launches, " nbk[r] " buckets, want " steps * nb
        for (k = 0; k < steps; k++) {
          if (seq[r, k] != " layer2 layer1 layer0 wait0") print "rank " r " step " k ":" seq[r, k]
          if (!(at[r, 0, k] < end0[r, k])) print "rank " r " step " k ": bucket 0 launched after layer 0"
        }
      }
    }' "$W/ev" | head -5)
  check '[ -z "$why" ]' "the trace: $why"
  "$BIN/colldraw" --gantt "$W/t.json" --call 3 --out "$W/g" > "$W/og" 2>&1
  check '[ $(grep -o "class=\"tick\"" "$W/g/gantt.svg" | wc -l) -eq $((2 * nb)) ] && [ $(grep -o "class=\"ev\"" "$W/g/gantt.svg" | wc -l) -eq $((2 * (nb + 4))) ]' \
    "colldraw --gantt of step 3: want 2 x $nb launches and 2 x ($nb buckets, 3 layers, the wait) bars: $(cat "$W/og")"
  ;;
dp)
  # The step as tagtrain runs it: 1 rank, and 2 ranks with the dense, sparse
  # and bucketed all-reduce, dropout 0, give the same losses every epoch (up
  # to float summation order); the logs say what each all-reduced. Fold 5 of
  # 5 leaves 612 training rows: even, so p = 2 needs no padding and both see
  # the same samples. The default (--algo auto) is twoshot on the shm
  # transport on one node; ring on the mpi transport and ring on shm too.
  common="$SMALL --epochs 3 --dropout 0 --no-save --folds 5 --fold 5"
  train 1 $common --log "$W/p1.jsonl" > "$W/o1" 2>&1 &&
  train 2 $common --log "$W/dense.jsonl" > "$W/o2" 2>&1 &&
  train 2 $common --sparse-grads --log "$W/sparse.jsonl" > "$W/o3" 2>&1 &&
  train 2 $common --bucket-mb 0.02 --log "$W/bucketed.jsonl" > "$W/o4" 2>&1 &&
  train 2 $common --algo ring --log "$W/ring.jsonl" > "$W/o5" 2>&1 &&
  train 2 $common --algo ring --transport shm --log "$W/ringshm.jsonl" > "$W/o6" 2>&1
  check '[ $? -eq 0 ]' "a run failed: $(cat "$W"/o[1-6] | grep -i tagtrain)"
  jstr() { grep "\"type\":\"$2\"" "$1" | sed "s/.*\"$3\":\"\([^\"]*\)\".*/\1/"; }
  check '[ "$(jstr "$W/dense.jsonl" run algo)@$(jstr "$W/dense.jsonl" run transport)" = twoshot@shm ]' \
        "the default at p = 2 on one node: want twoshot@shm, got $(jstr "$W/dense.jsonl" run algo)@$(jstr "$W/dense.jsonl" run transport)"
  check '[ "$(jstr "$W/ring.jsonl" run algo)@$(jstr "$W/ring.jsonl" run transport)" = ring@mpi ] &&
         [ "$(jstr "$W/ringshm.jsonl" run transport)" = shm ] && [ "$(jstr "$W/p1.jsonl" run transport)" = mpi ]' \
        "a named algorithm runs on --transport, mpi by default: $(grep -h '"type":"run"' "$W/ring.jsonl" "$W/ringshm.jsonl")"
  jfield "$W/p1.jsonl" epoch val_loss > "$W/ref"
  for m in dense sparse bucketed ring ringshm; do
    jfield "$W/$m.jsonl" epoch val_loss > "$W/got"
    check '[ $(wc -l < "$W/ref") -eq 3 ] && paste "$W/ref" "$W/got" | awk "{d=\$1-\$2; if (d<0) d=-d; if (d > 1e-5*(1+\$1)) bad=1} END{exit bad}"' \
          "$m p=2 val losses differ from 1 rank: $(paste "$W/ref" "$W/got" | tr '\n' ' ')"
  done
  gb=$(jfield "$W/dense.jsonl" run gradient_bytes)
  check '[ "$(jfield "$W/p1.jsonl" step allreduce_bytes | sort -u)" = 0 ]' "p = 1 all-reduced something"
  check '[ "$(jfield "$W/bucketed.jsonl" step allreduce_bytes | sort -u)" = "$gb" ]' "bucketed steps did not carry the whole buffer"
  check 'jfield "$W/sparse.jsonl" step allreduce_bytes | awk -v g=$gb "{if (\$1 <= 0 || \$1 > g) bad=1; s+=\$1; n++} END{exit bad || !(s/n < g)}"' \
        "sparse steps: want 0 < bytes <= $gb and less on average"
  check 'grep -q "all-reduce: sparse" "$W/o3" && grep -q "all-reduce: none (1 rank)" "$W/o1"' "banners"
  ;;
guards)
  # A diverging run (NaN parameters from epoch 3, by the test hook) stops with
  # exit 4 and a message; nothing of that epoch is saved.
  TAGTRAIN_TEST_NAN=3 train 2 $SMALL --save "$W/n" --save-every 1 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 4 ] && grep -q "epoch 3: the train loss is nan: training diverged" "$W/o" && grep -q "from epoch 2" "$W/o"' \
        "NaN loss: rc $rc $(cat "$W/o")"
  "$BIN/tagpredict" --checkpoint "$W/n/last.ckpt" --title "image segmentation" --json > "$W/j" 2>&1
  check '[ $? -eq 0 ] && ! grep -qi nan "$W/j"' "the checkpoint kept after a NaN: $(cat "$W/j")"
  "$BIN/tagpredict" --checkpoint "$W/n/last.ckpt" --title "image segmentation" --json > /dev/full 2> "$W/o"; rc=$?
  check '[ $rc -eq 1 ] && grep -q "tagpredict" "$W/o"' "tagpredict to a full disk: rc $rc $(cat "$W/o")"
  train 2 --resume "$W/n/last.ckpt" --save "$W/n" --stop-after 1 > "$W/o" 2>&1
  check '[ $? -eq 0 ] && grep -q "after epoch 2" "$W/o"' "resume after the NaN stop: $(cat "$W/o")"
  # An infinite loss stops the run the same way, and so does a real divergence
  # (no hook: a learning rate far too high without label smoothing).
  TAGTRAIN_TEST_NAN=2:inf train 2 $SMALL --no-save > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 4 ] && grep -q "epoch 2: the train loss is inf: training diverged" "$W/o"' "Inf loss: rc $rc $(cat "$W/o")"
  # Parameters made NaN by an epoch's last step, without validation rows:
  # the train loss, measured before that step, is finite; the parameters are
  # checked too, and epoch 2's checkpoints stay readable.
  TAGTRAIN_TEST_NAN=3:end train1 $SMALL --val-frac 0 --save "$W/ne" --save-every 1 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 4 ] && grep -q "epoch 3: parameter [0-9]* is nan: training diverged" "$W/o" &&
         "$BIN/tagpredict" --checkpoint "$W/ne/best.ckpt" --title x > /dev/null 2>&1 &&
         "$BIN/tagpredict" --checkpoint "$W/ne/last.ckpt" --title x > /dev/null 2>&1' \
        "NaN parameters after an epoch's last step: rc $rc $(grep tagtrain: "$W/o")"
  train1 $SMALL --no-save --lr 100 --warmup 0 --label-smoothing 0 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 4 ] && grep -q "training diverged" "$W/o"' "lr 100: rc $rc $(tail -3 "$W/o")"
  # Outputs: a failed write is an error; a FIFO nobody reads is refused, not
  # waited on; a user's file is never overwritten, tagtrain's own is.
  train 2 $SMALL --epochs 1 --no-save --log /dev/full > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "\-\-log /dev/full: write failed" "$W/o"' "--log to a full disk: rc $rc $(cat "$W/o")"
  train 2 $SMALL --epochs 1 --no-save --metrics /dev/full > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "\-\-metrics /dev/full: write failed" "$W/o"' "--metrics to a full disk: rc $rc $(cat "$W/o")"
  # (one rank without mpirun: under mpirun, rank 0's stdout is mpirun's pipe, not the file)
  train1 $SMALL --epochs 1 --no-save > /dev/full 2> "$W/o"; rc=$?
  check '[ $rc -eq 1 ] && grep -q "stdout (the report): write failed" "$W/o"' "report to a full disk: rc $rc $(cat "$W/o")"
  mkfifo "$W/fifo"
  timeout 30 $MPIRUN -np 2 "$BIN/tagtrain" $SMALL --epochs 1 --no-save --log "$W/fifo" > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "nobody reads" "$W/o"' "--log FIFO: rc $rc (124: it hung) $(cat "$W/o")"
  echo "my notes" > "$W/notes.txt"
  train 2 $SMALL --epochs 1 --no-save --log "$W/notes.txt" > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "notes.txt exists (9 bytes): not written over (give another file, or --overwrite)" "$W/o" &&
         [ "$(cat "$W/notes.txt")" = "my notes" ]' "--log over a user's file: rc $rc $(cat "$W/o")"
  train 2 $SMALL --epochs 1 --no-save --metrics "$W/notes.txt" > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && [ "$(cat "$W/notes.txt")" = "my notes" ]' "--metrics over a user's file: rc $rc $(cat "$W/o")"
  # A rerun's --log and --metrics follow every tool's rule: refused unless
  # --overwrite, even over tagtrain's own files (only a resumed run or a
  # restart rewrites those).
  train 2 $SMALL --epochs 1 --no-save --log "$W/log.jsonl" --metrics "$W/m.json" > "$W/o" 2>&1
  cp "$W/log.jsonl" "$W/log.first"
  train 2 $SMALL --epochs 1 --no-save --log "$W/log.jsonl" --metrics "$W/m.json" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "\-\-log .*log.jsonl exists .*not written over" "$W/o" && cmp -s "$W/log.jsonl" "$W/log.first"' \
        "rerun over its own log without --overwrite: rc $rc $(cat "$W/o")"
  # A restart continues the log (the earlier attempt's records stay, each
  # attempt starts with its run record); --overwrite starts it again.
  CKRUN_RESTART=1 train 2 $SMALL --epochs 1 --no-save --log "$W/log.jsonl" --metrics "$W/m.json" > "$W/o" 2>&1
  check '[ $? -eq 0 ] && [ "$(grep -c "\"type\":\"run\"" "$W/log.jsonl")" = 2 ] && head -c "$(wc -c < "$W/log.first")" "$W/log.jsonl" | cmp -s - "$W/log.first"' \
        "a restart over its own log: $(grep -c '"type":"run"' "$W/log.jsonl") run records $(grep tagtrain: "$W/o")"
  train 2 $SMALL --epochs 1 --no-save --log "$W/log.jsonl" --metrics "$W/m.json" --overwrite > "$W/o" 2>&1
  check '[ $? -eq 0 ] && grep -q "\"weighted\":{" "$W/m.json" && [ "$(grep -c "\"type\":\"run\"" "$W/log.jsonl")" = 1 ]' \
        "--overwrite over its own log and metrics: $(cat "$W/o")"
  # A run that fails before its end leaves the metrics file as it was: it is
  # emptied only when written.
  cp "$W/m.json" "$W/m.first"
  TAGTRAIN_TEST_NAN=1 train1 $SMALL --epochs 1 --no-save --metrics "$W/m.json" --overwrite > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 4 ] && cmp -s "$W/m.json" "$W/m.first"' "a failed run emptied its --metrics file: rc $rc, $(wc -c < "$W/m.json") bytes"
  # Every output is checked before anything saved is touched: a bad --metrics
  # or --log stops a run before it trains, and before a resumed run repairs
  # best.ckpt; --log and --metrics naming one file is refused.
  train 2 $SMALL --epochs 2 --save "$W/s" > "$W/o" 2>&1
  cp -r "$W/s" "$W/s.orig"
  # A run of another configuration does not replace a run's checkpoints
  # (refused before training) unless --overwrite says so.
  train1 $SMALL --epochs 1 --save "$W/s" --seed 9 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "last.ckpt is the checkpoint of another run (its --seed differs" "$W/o" &&
         ! grep -q "^epoch" "$W/o" && cmp -s "$W/s/best.ckpt" "$W/s.orig/best.ckpt" && cmp -s "$W/s/last.ckpt" "$W/s.orig/last.ckpt"' \
        "a run of another --seed over a run's checkpoints: rc $rc $(grep tagtrain: "$W/o")"
  train 2 $SMALL --epochs 1 --save "$W/s" --seed 9 --overwrite --metrics "$W/none/m.json" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "\-\-metrics .*none/m.json: cannot open" "$W/o" && ! grep -q "^epoch" "$W/o" &&
         cmp -s "$W/s/best.ckpt" "$W/s.orig/best.ckpt" && cmp -s "$W/s/last.ckpt" "$W/s.orig/last.ckpt"' \
        "unwritable --metrics: rc $rc $(cat "$W/o")"
  rm "$W/s/best.ckpt"
  train 2 --resume "$W/s/last.ckpt" --save "$W/s" --epochs 3 --log "$W/notes.txt" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && [ ! -e "$W/s/best.ckpt" ]' "a resume refused for its --log repaired best.ckpt first: rc $rc $(cat "$W/o")"
  train 2 $SMALL --epochs 1 --no-save --log "$W/same.json" --metrics "$W/same.json" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "the same file as \-\-log" "$W/o" && ! grep -q "^epoch" "$W/o"' \
        "--log and --metrics on one file: rc $rc $(cat "$W/o")"
  # A save that fails half way (the file size limit, as a full disk would)
  # leaves the directory as it was: the earlier run's best.ckpt and last.ckpt,
  # no temporary file. One rank, under mpirun so that only tagtrain has the limit.
  rm -rf "$W/s" && cp -r "$W/s.orig" "$W/s"
  $MPIRUN -np 1 sh -c "trap '' XFSZ; ulimit -f 300; exec '$BIN/tagtrain' $SMALL --epochs 1 --seed 9 --overwrite --save '$W/s'" > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "checkpoint: cannot write .*last.ckpt.tmp" "$W/o" &&
         cmp -s "$W/s/best.ckpt" "$W/s.orig/best.ckpt" && cmp -s "$W/s/last.ckpt" "$W/s.orig/last.ckpt" &&
         [ "$(ls "$W/s")" = "$(printf "best.ckpt\nlast.ckpt")" ]' \
        "a save that failed half way: rc $rc, files $(ls "$W/s" | tr '\n' ' ') $(cat "$W/o")"
  train 2 $SMALL --epochs 1 --save "" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "an empty directory name" "$W/o" && ! grep -q "^epoch" "$W/o"' "--save '': rc $rc $(cat "$W/o")"
  # An unwritable --save is found before training, not at the first save.
  train 2 $SMALL --save /proc > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "cannot write checkpoints into /proc" "$W/o" && ! grep -q "^epoch" "$W/o"' \
        "unwritable --save: rc $rc $(cat "$W/o")"
  # An output is never one of the run's own files, not even with --overwrite:
  # the checkpoint it resumes, one it saves (refused before the training, not
  # at the first save), its data, another output; nor any checkpoint.
  for D in "${COLLKIT_DATA:-}" "$COLLKIT_SOURCE_DIR/datasets/madewithml" "$COLLKIT_SOURCE_DIR/../shared/datasets/madewithml"; do
    [ -n "$D" ] && [ -f "$D/dataset.csv" ] && break
  done
  cp "$D/dataset.csv" "$W/d.csv" && cp -r "$W/s" "$W/s.keep"
  # (exit 2: arguments that clash; 1: a file that holds a checkpoint)
  for a in "2 --resume $W/s/last.ckpt --save $W/s --epochs 3 --log $W/s/last.ckpt" \
           "2 $SMALL --epochs 1 --save $W/new --log $W/new/best.ckpt" \
           "2 $SMALL --epochs 1 --no-save --data $W/d.csv --holdout $D/holdout.csv --metrics $W/d.csv" \
           "2 $SMALL --epochs 1 --no-save --log $W/t.json --trace $W/./t.json" \
           "1 $SMALL --epochs 1 --no-save --metrics $W/s/best.ckpt"; do
    want=${a%% *} a=${a#* }
    train1 $a --overwrite > "$W/o" 2>&1; rc=$?
    check '[ $rc -eq $want ] && grep -q "the same file as\|holds a tagtrain checkpoint: never written over" "$W/o" &&
           ! grep -q "^epoch" "$W/o" && cmp -s "$W/s/last.ckpt" "$W/s.keep/last.ckpt" &&
           cmp -s "$W/s/best.ckpt" "$W/s.keep/best.ckpt" && cmp -s "$W/d.csv" "$D/dataset.csv" && [ ! -s "$W/t.json" ]' \
          "an output on the run's own file ($a): rc $rc $(grep tagtrain: "$W/o")"
  done
  ;;
data)
  # The audit: repeated rows and holdout rows in the training file are
  # warned about, or refused with --strict-data.
  for D in "${COLLKIT_DATA:-}" "$COLLKIT_SOURCE_DIR/datasets/madewithml" "$COLLKIT_SOURCE_DIR/../shared/datasets/madewithml"; do
    [ -n "$D" ] && [ -f "$D/dataset.csv" ] && break
  done
  { cat "$D/dataset.csv"; tail -n +2 "$D/holdout.csv"; } > "$W/leak.csv"
  train 2 $SMALL --epochs 1 --no-save --data "$W/leak.csv" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "warning: leak.csv: 191 rows are also in holdout.csv" "$W/o"' \
        "holdout rows in the training file: rc $rc $(grep tagtrain "$W/o")"
  train 2 $SMALL --epochs 1 --no-save --data "$W/leak.csv" --strict-data > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "refusing the data (--strict-data)" "$W/o" && ! grep -q "^epoch" "$W/o"' \
        "--strict-data: rc $rc $(grep tagtrain "$W/o")"
  # A holdout row in the training file is one with the holdout's text: ids
  # alone (tagsynth numbers its rows from 1, as holdout.csv does) are not.
  "$BIN/tagsynth" --rows 300 --seed 3 --out "$W/syn.csv" > /dev/null 2>&1
  train 2 $SMALL --epochs 1 --no-save --data "$W/syn.csv" --strict-data > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && ! grep -q "also in holdout" "$W/o"' "synthetic rows taken for holdout rows: rc $rc $(grep tagtrain "$W/o")"
  # The same project twice, once with another tag.
  { head -1 "$D/dataset.csv"; printf '1,x,Same title,same text,mlops\n2,x,Other,words,other\n1,x,Same title,same text,other\n'
    printf '3,x,Another,text here,other\n4,x,More,text,mlops\n'; } > "$W/dup.csv"
  train1 $SMALL --epochs 1 --no-save --data "$W/dup.csv" --val-frac 0.1 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "1 row repeats an earlier row.s id" "$W/o" && grep -q "1 repeated row carries another tag" "$W/o" && grep -q "rows 1 and 3" "$W/o"' \
        "repeated id with another tag: rc $rc $(grep tagtrain "$W/o")"
  check 'grep -q "no validation rows" "$W/o"' "a split with no val rows not warned about: $(grep tagtrain "$W/o")"
  # Cross-validation never reads the holdout (a missing one is fine) and says which fold.
  train 2 $SMALL --epochs 2 --no-save --folds 5 --fold 2 --holdout "$W/absent.csv" --log "$W/cv.jsonl" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "cross-validation fold 2/5" "$W/o" && grep -q "holdout not read" "$W/o"' \
        "cross-validation: rc $rc $(cat "$W/o")"
  check 'grep -q "\"best_val_f1\":0\.[0-9]" "$W/cv.jsonl" && ! grep -q holdout_f1 "$W/cv.jsonl"' "cv summary: $(tail -1 "$W/cv.jsonl")"
  check '[ "$(jfield "$W/cv.jsonl" run val_rows)" -ge 152 ] && [ "$(jfield "$W/cv.jsonl" run val_rows)" -le 153 ]' "fold size"
  ;;
ranks)
  # The ranks of one run must be given the same command line, read the same
  # data and resume the same checkpoint; otherwise every rank stops with a
  # message, exit 2 (or 1 for the data), never a hang or a crash inside MPI.
  # MPMD launches (A : B) give the ranks different arguments.
  mpmd() { timeout 60 $MPIRUN -np 1 "$@"; }
  mpmd "$BIN/tagtrain" $SMALL --no-save --hidden 64 : -np 1 "$BIN/tagtrain" $SMALL --no-save --hidden 128 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "different command lines" "$W/o" && grep -q "rank 1: .*--hidden 128" "$W/o"' \
        "--hidden differs between ranks: rc $rc (124: it hung) $(head -5 "$W/o")"
  mpmd "$BIN/tagtrain" $SMALL --no-save --seed 1 : -np 1 "$BIN/tagtrain" $SMALL --no-save --seed 2 > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "different command lines" "$W/o"' "--seed differs between ranks: rc $rc $(head -5 "$W/o")"
  # A bad argument on rank 1 only: rank 1 says it.
  mpmd "$BIN/tagtrain" $SMALL --no-save : -np 1 "$BIN/tagtrain" $SMALL --no-save --epochs abc > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "rank 1: --epochs .abc." "$W/o"' "a bad argument on rank 1 only: rc $rc (124: it hung) $(head -5 "$W/o")"
  # The same path, other contents (as on two nodes with their own copies).
  for D in "${COLLKIT_DATA:-}" "$COLLKIT_SOURCE_DIR/datasets/madewithml" "$COLLKIT_SOURCE_DIR/../shared/datasets/madewithml"; do
    [ -n "$D" ] && [ -f "$D/dataset.csv" ] && break
  done
  mkdir -p "$W/d1" "$W/d2"
  cp "$D/dataset.csv" "$D/holdout.csv" "$W/d1/" && cp "$D/holdout.csv" "$W/d2/" && head -700 "$D/dataset.csv" > "$W/d2/dataset.csv"
  mpmd env COLLKIT_DATA="$W/d1" "$BIN/tagtrain" $SMALL --no-save : -np 1 env COLLKIT_DATA="$W/d2" "$BIN/tagtrain" $SMALL --no-save > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 1 ] && grep -q "rank 1 read other data than rank 0" "$W/o"' "data differs between ranks: rc $rc (124: it hung) $(head -5 "$W/o")"
  # --resume: the same path, another file.
  train 2 $SMALL --epochs 1 --save "$W/c1" > /dev/null 2>&1 && train 2 $SMALL --epochs 1 --seed 5 --save "$W/c2" > /dev/null 2>&1
  mkdir -p "$W/e1" "$W/e2" && cp "$W/c1/last.ckpt" "$W/e1/" && cp "$W/c2/last.ckpt" "$W/e2/"
  (cd "$W/e1" && mpmd "$BIN/tagtrain" --resume last.ckpt --no-save --epochs 2 : -np 1 sh -c "cd '$W/e2' && exec '$BIN/tagtrain' --resume last.ckpt --no-save --epochs 2") > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 2 ] && grep -q "rank 1 read another file than rank 0" "$W/o"' "--resume of different files: rc $rc (124: it hung) $(head -5 "$W/o")"
  ;;
cv)
  # trainer/cv.sh, the model-selection script: every (fold, seed) run, the
  # mean line, the per-run scores file; a configuration tagtrain refuses
  # makes it fail and say so. -b takes the build folder (absolute here).
  CV=$(cd "$(dirname "$0")/../../trainer" && pwd)/cv.sh
  TINY="--features 1024 --hidden 8 --epochs 2"
  "$CV" -k 2 -s "1 2" -j 2 -b "$(dirname "$BIN")" -o "$W/scores" -- $TINY > "$W/out" 2>&1
  check '[ $? -eq 0 ]' "cv.sh failed: $(cat "$W/out")"
  check 'grep -Eq "^cv 2 folds x seeds \{1 2\}, --features 1024 --hidden 8 --epochs 2: val weighted F1 0\.[0-9]{4} \(sd 0\.[0-9]{4}" "$W/out"' \
        "no summary line: $(cat "$W/out")"
  check '[ "$(awk "NF == 6 && \$3 >= 0 && \$3 <= 1" "$W/scores" | wc -l)" -eq 4 ]' "want 4 runs of 6 fields in the scores: $(cat "$W/scores")"
  check '[ "$(cut -d" " -f1,2 "$W/scores" | sort | tr "\n" " ")" = "1 1 1 2 2 1 2 2 " ]' "scores not one per (fold, seed)"
  "$CV" -k 2 -s 1 -b "$(dirname "$BIN")" -- $TINY --hidden 0 > "$W/bad" 2>&1
  check '[ $? -eq 1 ] && grep -q "cv.sh: 2 of 2 runs failed" "$W/bad" && grep -q "hidden" "$W/bad"' \
        "a refused configuration: $(cat "$W/bad")"
  ;;
zero)
  # --zero 2's trace is titled as what ran (it once said --zero 1); and an
  # exit before training (an --rs-algo no rank can run, found at setup) meets
  # the other ranks bounded, as every exit does: a rank stopped on its way out
  # is named within the bound, not waited for in MPI_Finalize.
  train 2 $SMALL --epochs 1 --no-save --zero 2 --trace "$W/z2.json" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && head -1 "$W/z2.json" | grep -q "tagtrain --zero 2 --rs-algo ring --ag-algo ring, p = 2"' \
        "--zero 2's trace title: rc $rc $(head -c 300 "$W/z2.json")"
  COLLKIT_TIMEOUT=3 COLLKIT_FAULT=phase/finish:1:STOP timeout -k 10 60 $MPIRUN -np 2 "$BIN/tagtrain" $SMALL --no-save \
    --zero 1 --rs-algo rd > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && grep -q "rank 1 did not answer" "$W/o"' \
        "a rank stopped on the way out of a setup refusal: rc $rc (124: it hung) $(cat "$W/o")"
  ;;
*)
  echo "cli.sh: unknown test '$TEST'"; exit 2 ;;
esac
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
