#!/bin/sh
# tests/check_seams.sh ARCHIVE: the policy archive needs nothing from outside
# itself but libc and libm, so the simulator and the agent can both link it
# and a policy can never reach into a host.
. tests/lib.sh
archive=${1:-$BUILD/libfleetpolicies.a}
if [ ! -r "$archive" ]; then fail "seams: $archive not built"; finish seams; exit 1; fi
# an LTO object's symbol table leaves out calls to what GCC knows as
# builtins (printf, exit, abort): such an archive would pass unread
if objdump -h "$archive" 2>/dev/null | grep -q '\.gnu\.lto_'; then
  fail "seams: $archive holds LTO objects, whose symbol tables omit builtin calls; check one built with LTO="
  finish seams
  exit 1
fi
libc=$(gcc -print-file-name=libc.so.6); libm=$(gcc -print-file-name=libm.so.6)
[ -r "$libc" ] || libc=$(ldconfig -p | awk '/libc.so.6 /{print $NF; exit}')
[ -r "$libm" ] || libm=$(ldconfig -p | awk '/libm.so.6 /{print $NF; exit}')
nm -D --defined-only "$libc" "$libm" 2>/dev/null | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$TMP/libc"
nm --defined-only "$archive" | awk 'NF==3{print $3}' | sort -u >"$TMP/defined"
nm -u "$archive" | awk '$1 == "U" {print $2}' | sed 's/@.*//' | sort -u >"$TMP/undefined"
outside=$(comm -23 "$TMP/undefined" "$TMP/defined" | comm -23 - "$TMP/libc" | grep -v '^__' )
if [ -z "$outside" ]; then pass; else fail "seams: $archive needs symbols from outside libc/libm: $outside"; fi
# and no stdio: policies do no I/O
io=$(comm -23 "$TMP/undefined" "$TMP/defined" | grep -E '^(printf|fprintf|puts|fputs|fopen|fwrite|write|read|open|time|clock_gettime|getenv|exit|abort)$')
if [ -z "$io" ]; then pass; else fail "seams: policies call I/O or process functions: $io"; fi
finish seams
