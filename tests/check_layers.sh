#!/bin/sh
# tests/check_layers.sh: include arrows point down only (ARCHITECTURE.md).
# Each folder may include its own headers and those of the folders listed
# for it; policies/ includes nothing but itself (and libc/libm).
. tests/lib.sh
allowed() {
  case $1 in
    sim) echo "sim" ;;
    policies) echo "policies" ;;
    models) echo "sim policies models" ;;
    traces) echo "sim models traces" ;;
    scenarios) echo "sim policies models traces scenarios" ;;
    report) echo "sim policies models traces scenarios report" ;;
    agent) echo "sim policies models traces scenarios report agent" ;;
    cli) echo "sim policies models traces scenarios report agent cli" ;;
  esac
}
for dir in sim policies models traces scenarios report agent cli; do
  [ -d "$dir" ] || continue
  ok=1
  for f in $(find "$dir" -name '*.[ch]' | sort); do
    for inc in $(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([a-z_]+)\/.*/\1/p' "$f" | sort -u); do
      case " $(allowed "$dir") " in
        *" $inc "*) ;;
        *) fail "layers: $f includes $inc/ (a $dir file may include: $(allowed "$dir"))"; ok=0 ;;
      esac
    done
    if [ "$dir" = policies ]; then
      bad=$(grep -nE '#[[:space:]]*include[[:space:]]*<(gsl|yaml|jansson|zlib|unistd|time|pthread|dlfcn|sys/)' "$f")
      if [ -n "$bad" ]; then fail "layers: $f includes I/O or library headers: $bad"; ok=0; fi
    fi
  done
  [ $ok = 1 ] && pass
done
finish layers
