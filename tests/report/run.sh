#!/bin/sh
# tests/report/run.sh: the forecast report (report/forecast_report.h), written
# by build/tests/report_fixture from known synthetic numbers: the files are
# there, the JSON and CSV hold the numbers, a hostile team name is escaped in
# HTML, CSV and gnuplot, two runs give byte-identical files, a missing or
# failing gnuplot still gives data and an HTML page with tables, and the page
# opens in headless Chromium with its charts and no console messages.
. tests/lib.sh
FIXTURE=${REPORT_FIXTURE:-$BUILD/tests/report_fixture}
HOSTILE='a_b^c "quoted" <tag>'
CHARTS="capacity utilization waits wait_cdf queue failures plan"

if [ ! -x "$FIXTURE" ]; then
  fail "report: $FIXTURE is not built (make $FIXTURE)"
  finish report
  exit 1
fi

check "report: quoting and number formats" "$FIXTURE" --self-test

have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1

R1=$TMP/r1
check "report: the fixture writes a report" "$FIXTURE" "$R1/nested"
R1=$R1/nested
st=$(cat "$TMP/out")

# files
missing=""
for f in index.html summary.json periods.csv samples.csv teams.csv; do [ -s "$R1/$f" ] || missing="$missing $f"; done
for c in $CHARTS; do
  for ext in gp dat; do [ -s "$R1/$c.$ext" ] || missing="$missing $c.$ext"; done
  if [ $have_gnuplot = 1 ]; then [ -s "$R1/$c.svg" ] || missing="$missing $c.svg"; fi
done
if [ -z "$missing" ]; then pass; else fail "report: missing files:$missing"; fi
ls "$R1" | grep -q '\.tmp\.' && fail "report: temporary files left: $(ls "$R1" | grep '\.tmp\.')" || pass

if [ $have_gnuplot = 1 ]; then
  case $st in
    *"gnuplot_missing=0 charts_written=7 charts_failed=0"*) pass ;;
    *) fail "report: status with gnuplot: $st" ;;
  esac
else
  skip "report: gnuplot is not installed (make deps), charts not checked"
fi

# the numbers, through python3's json and csv readers
check "report: summary.json holds the numbers" python3 - "$R1" "$HOSTILE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/summary.json"))
hostile = sys.argv[2]
def near(a, b): assert abs(a - b) < 1e-9, (a, b)
assert d["meta"]["version"] and d["meta"]["kind"] == "forecast", d["meta"]
assert d["scenario"]["seed"] == 42 and d["scenario"]["start_date"] == "2027-01-01", d["scenario"]
assert d["replications"] == {"requested": 5, "completed": 5, "partial": False}, d["replications"]
assert d["horizon"]["period"] == "quarter" and d["horizon"]["periods"] == 4, d["horizon"]
assert d["horizon"]["last_period_partial"] is False and d["horizon"]["length_s"] == 4 * 91 * 86400, d["horizon"]
assert [p["partial"] for p in d["periods"]] == [False] * 4 and d["periods"][3]["length_s"] == 91 * 86400
assert len(d["periods"]) == 4
for p in range(4):
    m = d["periods"][p]["metrics"]
    near(m["utilization"]["mean"], 0.52 + 0.1 * p)
    near(m["capacity_gpus"]["mean"], 2048 if p < 3 else 2560)
    near(m["wait_p95_s"]["p50"], 3600 * (p + 1) + 120)
    assert set(m) >= {"utilization", "wait_p50_s", "wait_p95_s", "wait_p99_s", "offered_load_gpus",
                      "offered_peak_gpus", "backlog_gpus", "lost_gpu_hours", "failures"}, sorted(m)
    assert "peak_demand_gpus" not in m, "the backlog must not be reported as demand"
    near(m["offered_load_gpus"]["mean"], 1820 + 150 * p)
near(d["periods"][0]["slo_share"], 1.0)
near(d["periods"][1]["slo_share"], 0.2)
assert [t["name"] for t in d["teams"]] == ["alpha", hostile, "gamma's, `touch PWNED` @x team"], d["teams"]
near(d["periods"][0]["team_gpu_hours"][1]["mean"], 2002)
assert d["periods"][0]["team_gpu_hours"][1]["team"] == hostile
assert d["teams"][0]["waits"]["jobs"] == 200
assert d["plan"]["met"] is True and d["plan"]["orders"][0]["count"] == 32, d["plan"]
assert d["plan"]["orders"][0]["date"] == "2027-02-01", d["plan"]["orders"]
assert [e["source"] for e in d["capacity"]["events"]] == ["placed", "plan"], d["capacity"]
assert d["capacity"]["initial_gpus"] == 2048
assert any("offered load outgrows capacity from Q3" in l and "2,120 GPUs of work" in l and "(4% short)" in l
           and "the backlog reaches 102 GPUs queued in Q3, which is the queue, not demand" in l
           and "Already in Q1 the load is 89% of capacity" in l
           for l in d["recommendation"]), d["recommendation"]
assert not any("partial:" in l or "is partial" in l for l in d["recommendation"]), d["recommendation"]
# the SLO is missed from Q2, the load passes capacity from Q3: the earlier
# alarm is told first, or the cluster would read as fine until Q3
rec = d["recommendation"]
i_slo = [i for i, l in enumerate(rec) if l.startswith("SLO ") and "is missed in Q2" in l]
i_cap = [i for i, l in enumerate(rec) if "outgrows capacity from Q3" in l]
assert i_slo and i_cap and i_slo[0] < i_cap[0], rec
assert d["action_needed"] is True
PY

check "report: CSV row counts, units in names and RFC 4180 quoting" python3 - "$R1" "$HOSTILE" <<'PY'
import csv, sys
base, hostile = sys.argv[1], sys.argv[2]
def rows(name):
    with open(base + "/" + name, newline="") as f:
        return list(csv.reader(f))
p, s, t = rows("periods.csv"), rows("samples.csv"), rows("teams.csv")
assert len(p) == 1 + 4 * 14, len(p)          # 4 periods x 14 metrics
assert len(s) == 1 + 53, len(s)              # 52 weeks + 1
assert len(t) == 1 + 3 * 4, len(t)           # 3 teams x 4 periods
assert p[0][:4] == ["period", "period_label", "period_start_s", "period_start_date"], p[0]
assert "capacity_gpus_mean" in s[0] and "queue_jobs_p95" in s[0] and s[0][0] == "time_s", s[0]
assert "offered_gpus_mean" in s[0] and "backlog_gpus_mean" in s[0] and "demand_gpus_mean" not in s[0], s[0]
assert "gpu_hours_mean" in t[0], t[0]
assert [r[0] for r in t[1:]].count(hostile) == 4
assert [r[0] for r in t[1:]].count("gamma's, `touch PWNED` @x team") == 4
row = [r for r in p if r[0] == "2" and r[4] == "utilization"][0]
assert row[5] == "0.62", row
raw = open(base + "/teams.csv").read()
assert '"a_b^c ""quoted"" <tag>"' in raw and '"gamma\'s, `touch PWNED` @x team"' in raw
PY

# escaping of user text
if grep -qF 'a_b^c &quot;quoted&quot; &lt;tag&gt;' "$R1/index.html" && ! grep -qF '<tag>' "$R1/index.html" &&
   grep -qF '&quot;&lt;quarterly&gt;&quot;' "$R1/index.html"; then pass
else fail "report: index.html does not escape the team or scenario name"; fi
if grep -qF "title 'a_b^c \"quoted\" <tag>'" "$R1/wait_cdf.gp" && grep -qF "title 'gamma''s, \`touch PWNED\` @x team'" "$R1/wait_cdf.gp" &&
   grep -q 'noenhanced' "$R1/wait_cdf.gp"; then pass
else fail "report: wait_cdf.gp does not quote team names as noenhanced single-quoted strings"; fi
if [ -e "$R1/PWNED" ] || { [ $have_gnuplot = 1 ] && ! grep -qF '`touch PWNED` @x team' "$R1/wait_cdf.svg"; }; then
  fail "report: gnuplot interpreted backquotes or macros in a team name"
else pass; fi
if grep -q '<script\|src="http\|href="http' "$R1/index.html"; then fail "report: index.html is not self-contained"; else pass; fi
grep -q 'id="recommendation"' "$R1/index.html" && grep -q 'Order 32 x H100-SXM by 2027-02-01' "$R1/index.html" &&
  pass || fail "report: index.html has no recommendation naming the plan's order"

# charts a planner can read: capacity against the offered load (not the
# backlog), waits on a log scale with the SLO drawn, fonts of 14 pt
grep -q "title 'offered load p50'" "$R1/capacity.gp" && ! grep -qi "demand" "$R1/capacity.gp" && pass ||
  fail "report: capacity.gp does not draw capacity against the offered load"
grep -q '^set logscale y' "$R1/waits.gp" && grep -qF "with lines dt 2 lw 2.5 lc rgb \"#000000\" title 'SLO p95_wait <= 2.0 h'" "$R1/waits.gp" &&
  pass || fail "report: waits.gp has no log scale or no SLO line"
grep -q '^set terminal svg .*font "DejaVu Sans,14"' "$R1/waits.gp" && pass || fail "report: charts are not set in 14 pt"
if [ $have_gnuplot = 1 ]; then
  grep -qF 'SLO p95_wait &lt;= 2.0 h' "$R1/waits.svg" && pass || fail "report: waits.svg does not show the SLO line's label"
fi
# without an SLO, no SLO line
check "report: no plan, no SLO" "$FIXTURE" --no-plan --no-slo "$TMP/r-noslo"
grep -q 'SLO' "$TMP/r-noslo/waits.gp" && fail "report: SLO line drawn without an SLO" || pass
# a partial last period is flagged: table, chart labels, recommendation
check "report: short last period" "$FIXTURE" --short-last "$TMP/r-short"
grep -qF 'Q4 <span class="partial">(partial)</span>' "$TMP/r-short/index.html" &&
  grep -qF 'Q4 is partial: the horizon ends 30.0 d into it' "$TMP/r-short/index.html" &&
  grep -q '^4 Q4\* ' "$TMP/r-short/utilization.dat" && grep -q 'last period partial' "$TMP/r-short/waits.gp" && pass ||
  fail "report: a partial last period is not flagged"
grep -q 'partial' "$R1/utilization.gp" && fail "report: a whole last period flagged partial" || pass
python3 - "$TMP/r-short/summary.json" <<'PY' && pass || fail "report: summary.json does not flag the partial last period"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["horizon"]["last_period_partial"] is True
assert d["periods"][3]["partial"] is True and d["periods"][3]["length_s"] == 30 * 86400, d["periods"][3]
assert d["periods"][2]["partial"] is False
PY

# determinism: another folder, and the same folder again
check "report: second run" "$FIXTURE" "$TMP/r2"
cp -R "$R1" "$TMP/r1-copy"
check "report: third run over the first" "$FIXTURE" "$R1"
differ=""
for f in $(ls "$R1"); do
  cmp -s "$R1/$f" "$TMP/r2/$f" || differ="$differ $f"
  cmp -s "$R1/$f" "$TMP/r1-copy/$f" || differ="$differ $f(rerun)"
done
if [ -z "$differ" ]; then pass; else fail "report: runs differ in:$differ"; fi

# the scripts redraw the charts users see
if [ $have_gnuplot = 1 ]; then
  ok=1
  for c in $CHARTS; do
    (cd "$TMP/r2" && mv "$c.svg" "$c.orig.svg" && gnuplot -d "$c.gp" && cmp -s "$c.svg" "$c.orig.svg") >"$TMP/out" 2>&1 || {
      ok=0; fail "report: gnuplot -d $c.gp does not redraw $c.svg"; sed 's/^/  | /' "$TMP/out" | head -5; }
  done
  [ $ok = 1 ] && pass
fi

# without gnuplot: data, scripts and tables all the same, status says so,
# and images of an earlier run (which would not match) are gone
mkdir -p "$TMP/nobin"
cp -R "$TMP/r1-copy" "$TMP/r3"
PATH="$TMP/nobin" "$FIXTURE" "$TMP/r3" >"$TMP/st3" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q 'gnuplot_missing=1 charts_written=0' "$TMP/st3"; then pass
else fail "report: without gnuplot: exit $rc, status $(cat "$TMP/st3")"; fi
missing=""
for f in index.html summary.json periods.csv samples.csv teams.csv; do [ -s "$TMP/r3/$f" ] || missing="$missing $f"; done
for c in $CHARTS; do [ -s "$TMP/r3/$c.gp" ] && [ -s "$TMP/r3/$c.dat" ] || missing="$missing $c.gp/.dat"; done
if [ -z "$missing" ]; then pass; else fail "report: without gnuplot, missing:$missing"; fi
if ls "$TMP/r3" | grep -q '\.svg$'; then fail "report: without gnuplot, old images left: $(ls "$TMP/r3" | grep svg)"; else pass; fi
grep -q 'id="charts-missing"' "$TMP/r3/index.html" && grep -q '<table' "$TMP/r3/index.html" &&
  ! grep -q '<svg' "$TMP/r3/index.html" && pass || fail "report: without gnuplot, the page lacks the note or the tables"
cmp -s "$TMP/r3/summary.json" "$R1/summary.json" && cmp -s "$TMP/r3/wait_cdf.gp" "$R1/wait_cdf.gp" && pass ||
  fail "report: data or scripts depend on whether gnuplot is there"

# a gnuplot that fails: counted, its message kept, the rest written
mkdir -p "$TMP/badbin"
cat >"$TMP/badbin/gnuplot" <<'SH'
#!/bin/sh
[ "$1" = --version ] && { echo "gnuplot 0.0 fake"; exit 0; }
echo "\"x.gp\" line 3: fake failure" >&2
exit 1
SH
chmod +x "$TMP/badbin/gnuplot"
PATH="$TMP/badbin:$PATH" "$FIXTURE" "$TMP/r4" >"$TMP/st4" 2>&1
if grep -q 'gnuplot_missing=0 charts_written=0 charts_failed=7 error=.*fake failure' "$TMP/st4" &&
   grep -q 'id="charts-failed"' "$TMP/r4/index.html" && [ -s "$TMP/r4/summary.json" ]; then pass
else fail "report: failing gnuplot: $(cat "$TMP/st4")"; fi

# variants: partial results, no plan, a plan that cannot meet the SLO, no start date
check "report: partial" "$FIXTURE" --partial "$TMP/r5"
grep -q 'id="partial"' "$TMP/r5/index.html" && grep -q '"partial": true' "$TMP/r5/summary.json" && pass ||
  fail "report: partial results are not marked"
check "report: no plan" "$FIXTURE" --no-plan "$TMP/r6"
grep -q '"plan": null' "$TMP/r6/summary.json" && pass || fail "report: no plan should give plan null"
# an alarm and no plan: the next step is the plan command, the path quoted
# for the shell in summary.json and escaped in HTML; a report with a plan has none
check "report: the next step without a plan, none with one" python3 - "$TMP/r6/summary.json" "$R1/summary.json" <<'PY'
import json, sys
d, planned = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want = ("fleetsim plan 'examples/fixture \"<quarterly>\".yaml' finds the cheapest orders that meet the "
        "scenario's SLO.")
assert d["action_needed"] is True and d.get("next") == want, d.get("next")
assert "next" not in planned, planned.get("next")
PY
grep -qF '<p class="next" id="next">Next: fleetsim plan &#39;examples/fixture &quot;&lt;quarterly&gt;&quot;.yaml&#39; finds' "$TMP/r6/index.html" &&
  ! grep -q 'id="next"' "$R1/index.html" && pass || fail "report: index.html's next step"
check "report: unmet plan" "$FIXTURE" --unmet "$TMP/r7"
grep -qF 'No plan meets &#39;p95_wait &lt;= 2h&#39;: the lead time' "$TMP/r7/index.html" && pass ||
  fail "report: an unmet plan is not said in the recommendation"
check "report: no start date" "$FIXTURE" --no-dates "$TMP/r8"
grep -q '"start_date": null' "$TMP/r8/summary.json" && pass || fail "report: without dates, start_date should be null"
if [ $have_gnuplot = 1 ]; then
  [ "$(grep -c '^<svg' "$TMP/r8/index.html")" = 7 ] && pass || fail "report: without dates the charts are not drawn"
fi

# headless Chromium: the page loads without console messages (it has no
# scripts, so any message is an error: a CSP refusal, a parse problem) and
# every chart is an <svg> in the DOM
CHROMIUM=""
for b in chromium chromium-browser google-chrome; do command -v $b >/dev/null 2>&1 && { CHROMIUM=$b; break; }; done
if [ -z "$CHROMIUM" ]; then
  skip "report: chromium is not installed (make deps installs Debian's chromium): page not opened in a browser"
elif [ $have_gnuplot = 0 ]; then
  skip "report: no gnuplot, so no charts to look for in Chromium"
else
  browse() { # browse FILE DOMOUT ERROUT
    rm -rf "$TMP/chrome-profile"
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$TMP/chrome-profile" --enable-logging=stderr --v=0 \
      --dump-dom "file://$1" >"$2" 2>"$3"
  }
  # the detector works: a page with a script error is caught
  printf '<!DOCTYPE html><html><body><script>undefinedFn();</script></body></html>\n' >"$TMP/bad.html"
  browse "$TMP/bad.html" "$TMP/bad.dom" "$TMP/bad.err"
  if grep -q 'Uncaught\|:CONSOLE' "$TMP/bad.err"; then pass
  else fail "report: Chromium's console log is not where the test reads it"; sed 's/^/  | /' "$TMP/bad.err" | head -5; fi
  abs=$(cd "$R1" && pwd)/index.html
  if browse "$abs" "$TMP/dom.html" "$TMP/chrome.err"; then pass
  else fail "report: chromium exited $? on index.html"; sed 's/^/  | /' "$TMP/chrome.err" | tail -5; fi
  if grep -q 'Uncaught\|:CONSOLE' "$TMP/chrome.err"; then
    fail "report: console messages in Chromium:"; grep 'Uncaught\|:CONSOLE' "$TMP/chrome.err" | head -5 | sed 's/^/  | /'
  else pass; fi
  n_svg=0
  for c in $CHARTS; do
    tr -d '\n' <"$TMP/dom.html" | grep -q "<figure id=\"chart-$c\"[^>]*><svg" && n_svg=$((n_svg + 1))
  done
  if [ $n_svg = 7 ]; then pass; else fail "report: $n_svg of 7 charts are an <svg> in Chromium's DOM"; fi
  grep -qF 'a_b^c "quoted" &lt;tag&gt;' "$TMP/dom.html" && ! grep -qF '<tag>' "$TMP/dom.html" && pass ||
    fail "report: the hostile team name became markup in Chromium's DOM"
  # the SLO line is in the rendered waits chart, and the capacity chart
  # compares with the offered load
  tr -d '\n' <"$TMP/dom.html" | grep -q '<figure id="chart-waits".*SLO p95_wait &lt;= 2.0 h' && pass ||
    fail "report: the SLO line is not in Chromium's DOM of the waits chart"
  tr -d '\n' <"$TMP/dom.html" | grep -q '<figure id="chart-capacity".*offered load p50' && pass ||
    fail "report: the capacity chart in Chromium's DOM does not show the offered load"
  # the order table of the plan, as rendered: the plan's order once
  n_rows=$(tr -d '\n' <"$TMP/dom.html" | grep -o '<table id="timeline">.*</table>' | sed 's#</table>.*##' |
           grep -o '<td[^>]*>plan order</td>' | wc -l)
  if [ "$n_rows" = 1 ]; then pass; else fail "report: $n_rows plan-order rows in Chromium's DOM of the order table, want 1"; fi
  # a screenshot: a real PNG of the page as rendered (REPORT_SCREENSHOT=FILE keeps it, to look at)
  shot=${REPORT_SCREENSHOT:-$TMP/report.png}
  rm -rf "$TMP/chrome-profile"
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$TMP/chrome-profile" --window-size=1280,4000 --screenshot="$shot" "file://$abs" \
    >"$TMP/shot.out" 2>&1
  if [ -s "$shot" ] && [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
     [ "$(wc -c <"$shot")" -gt 50000 ]; then pass
  else fail "report: no screenshot of the page from Chromium"; tail -3 "$TMP/shot.out" | sed 's/^/  | /'; fi
fi

finish report
