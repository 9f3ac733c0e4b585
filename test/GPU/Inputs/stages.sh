# Sourced by the GPU check scripts here (after `out` is set): `stage NAME
# COMMAND...` runs COMMAND with its output in $out/NAME.txt and prints one
# PASS line (its last output line) or FAIL line (its last three); `failed`
# is 1 once any stage failed.
failed=0
stage() { # stage NAME COMMAND...
  local name=$1
  shift
  if "$@" >"$out/$name.txt" 2>&1; then
    echo "PASS $name: $(tail -1 "$out/$name.txt")"
  else
    echo "FAIL $name: $(tail -3 "$out/$name.txt" | tr '\n' ' ')"
    failed=1
  fi
}
