# need_data.sh — sourced by the tests that train on the Made With ML data
# (POSIX sh):
#   . "$(dirname "$0")/../lib/need_data.sh"
#   skip_without_data        # exit 77 (CTest's SKIP_RETURN_CODE) without it
# The data is where tagtrain looks for it: $COLLKIT_DATA, then
# datasets/madewithml/ and ../shared/datasets/madewithml/ of the source tree
# ($COLLKIT_SOURCE_DIR; unset: assumed present, tagtrain will say if not).
skip_without_data() {
  [ -n "${COLLKIT_DATA:-}" ] || [ -z "${COLLKIT_SOURCE_DIR:-}" ] ||
    [ -f "$COLLKIT_SOURCE_DIR/datasets/madewithml/dataset.csv" ] ||
    [ -f "$COLLKIT_SOURCE_DIR/../shared/datasets/madewithml/dataset.csv" ] && return 0
  echo "SKIP: no Made With ML data in \$COLLKIT_DATA, datasets/madewithml/ or ../shared/datasets/madewithml/ (see datasets/README.md)"
  exit 77
}
