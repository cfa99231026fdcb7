#!/bin/sh
# cli.sh TEST BINDIR "MPIRUN [FLAGS]" — command-line tests of tagtrain and tagpredict
# on the real Made With ML data (found by tagtrain's own lookup). Small models
# (1024 features, one hidden layer of 32) keep each run around a second.
# Prints "N passed, M failed"; exits non-zero on any failure.
set -u
TEST=$1 BIN=$2 MPIRUN=$3
W=$(mktemp -d /tmp/collkit_trainer_cli.XXXXXX)
trap 'rm -rf "$W"' EXIT
SMALL="--features 1024 --hidden 32 --batch 32 --epochs 4"
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
train() { np=$1; shift; $MPIRUN -np "$np" "$BIN/tagtrain" "$@"; }
# Argument errors happen before any communication: a singleton run (no mpirun) is enough and much faster.
train1() { "$BIN/tagtrain" "$@"; }

# Every test but `args` trains on the real data: without it, skip (CTest's
# SKIP_RETURN_CODE 77) and say where it was looked for.
if [ "$TEST" != args ] && [ -z "${COLLKIT_DATA:-}" ] && [ -n "${COLLKIT_SOURCE_DIR:-}" ] &&
   [ ! -f "$COLLKIT_SOURCE_DIR/datasets/madewithml/dataset.csv" ] &&
   [ ! -f "$COLLKIT_SOURCE_DIR/../shared/datasets/madewithml/dataset.csv" ]; then
  echo "SKIP: no Made With ML data in \$COLLKIT_DATA, datasets/madewithml/ or ../shared/datasets/madewithml/ (see datasets/README.md)"
  exit 77
fi

case $TEST in
loss)
  # Training on the real data lowers the loss: train loss of the last epoch
  # well under the first, and val loss lower at the end than after epoch 1.
  train 2 $SMALL --lr 1e-2 --no-save --log "$W/log.jsonl" > "$W/out" 2>&1
  check '[ $? -eq 0 ]' "tagtrain failed: $(cat "$W/out")"
  grep '"type":"epoch"' "$W/log.jsonl" | sed 's/.*"train_loss":\([0-9.e+-]*\),"val_loss":\([0-9.e+-]*\).*/\1 \2/' > "$W/l"
  check '[ $(wc -l < "$W/l") -eq 4 ]' "want 4 epoch records, got $(wc -l < "$W/l")"
  check 'awk "NR==1{t=\$1;v=\$2} END{exit !(\$1 < 0.8*t && \$2 < v)}" "$W/l"' "loss did not decrease: $(tr '\n' ' ' < "$W/l")"
  check 'grep -q "\"type\":\"step\"" "$W/log.jsonl" && grep -q "\"comm_s\"" "$W/log.jsonl"' "no per-step records in the log"
  check 'grep -q "weighted avg" "$W/out" && grep -q "confusion matrix" "$W/out"' "no holdout table"
  ;;
resume)
  # Interrupted after 2 of 4 epochs and resumed == uninterrupted, bit for bit
  # (dropout on: the per-epoch random streams must be restored too).
  train 2 $SMALL --dropout 0.5 --save "$W/a" > "$W/outa" 2>&1
  check '[ $? -eq 0 ]' "uninterrupted run failed: $(cat "$W/outa")"
  train 2 $SMALL --dropout 0.5 --save "$W/b" --stop-after 2 > "$W/outb" 2>&1
  check '[ $? -eq 0 ]' "first half failed: $(cat "$W/outb")"
  check '! cmp -s "$W/a/last.ckpt" "$W/b/last.ckpt"' "after 2 epochs the checkpoint already equals the 4-epoch one"
  train 2 --resume "$W/b/last.ckpt" --save "$W/b" > "$W/outc" 2>&1
  check '[ $? -eq 0 ] && grep -q "resumed from" "$W/outc"' "resume failed: $(cat "$W/outc")"
  check 'cmp "$W/a/last.ckpt" "$W/b/last.ckpt"' "resumed final checkpoint differs from the uninterrupted one"
  check 'cmp "$W/a/best.ckpt" "$W/b/best.ckpt"' "resumed best checkpoint differs"
  check '[ "$(grep "holdout weighted F1" "$W/outa" | sed "s/.*F1 //")" = "$(grep "holdout weighted F1" "$W/outc" | sed "s/.*F1 //")" ]' \
        "holdout F1 differs between the uninterrupted and the resumed run"
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
  # A user's file under a checkpoint name is never overwritten.
  mkdir -p "$W/mine" && echo "my notes" > "$W/mine/best.ckpt"
  train 2 $SMALL --epochs 1 --save "$W/mine" > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "refusing to overwrite" "$W/o"' "save over a foreign best.ckpt not refused: rc $rc"
  check '[ "$(cat "$W/mine/best.ckpt")" = "my notes" ]' "the user's file was changed"
  ;;
sync)
  train 3 $SMALL --epochs 2 --no-save --check-sync > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && [ $(grep -c "sync ok" "$W/o") -eq 2 ]' "check-sync run failed: rc $rc $(cat "$W/o")"
  train 3 $SMALL --epochs 3 --no-save --check-sync --inject-desync 2 > "$W/o" 2>&1; rc=$?
  check '[ $rc -ne 0 ] && grep -q "after epoch 2: ranks out of sync: rank 1" "$W/o"' "desync not detected: rc $rc $(cat "$W/o")"
  ;;
args)
  for a in "--algo nope" "--hidden 0" "--hidden 12,,3" "--epochs abc" "--epochs 0" "--dropout 1" "--lr -1" "--batch" \
           "--bogus" "--optimizer rmsprop" "--features 0" "stray"; do
    train1 $a > "$W/o" 2>&1; rc=$?
    check '[ $rc -eq 2 ] && grep -q "tagtrain" "$W/o"' "'$a': want exit 2 and a message, got rc $rc: $(cat "$W/o")"
  done
  train1 --algo nope > "$W/o" 2>&1
  check 'grep -q "unknown algorithm .nope." "$W/o" && grep -q "ring" "$W/o"' "unknown --algo does not list the names"
  train1 --algo list > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "ring" "$W/o"' "--algo list failed"
  train1 --help > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q -- "--bucket-mb" "$W/o"' "--help failed"
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
  check 'grep -q "\"tag\": \"" "$W/j" && grep -q "\"probabilities\"" "$W/j"' "--json output: $(cat "$W/j")"
  ;;
bucketed)
  # Buckets of 8 KiB: many all-reduces in flight during backward; all ranks in
  # sync; the same training as the plain run (test_dp checks the numbers).
  train 2 $SMALL --epochs 2 --no-save --bucket-mb 0.008 --check-sync --log "$W/b.jsonl" > "$W/o" 2>&1; rc=$?
  check '[ $rc -eq 0 ] && grep -q "(bucketed)" "$W/o" && [ $(grep -c "sync ok" "$W/o") -eq 2 ]' "bucketed run: rc $rc $(cat "$W/o")"
  train 2 $SMALL --epochs 2 --no-save --log "$W/p.jsonl" > "$W/o2" 2>&1
  l1=$(grep '"type":"epoch"' "$W/b.jsonl" | tail -1 | sed 's/.*"train_loss":\([0-9.e+-]*\).*/\1/')
  l2=$(grep '"type":"epoch"' "$W/p.jsonl" | tail -1 | sed 's/.*"train_loss":\([0-9.e+-]*\).*/\1/')
  check 'awk "BEGIN{d=$l1-$l2; if (d<0) d=-d; exit !(d <= 1e-4*(1+$l2))}"' "bucketed train loss $l1 vs plain $l2"
  ;;
*)
  echo "cli.sh: unknown test '$TEST'"; exit 2 ;;
esac
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
