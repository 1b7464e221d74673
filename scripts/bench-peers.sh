#!/usr/bin/env bash
# bench-peers.sh: rehost side by side with its peers on the benchmark corpus,
# against the targets of issue 5 (speed and memory). Not run in CI.
#
#   scripts/bench-peers.sh            # or: make bench
#
# It generates the corpus if missing (go run ./internal/benchdata), installs
# kustomize v5.8.2 with go install if missing, builds bin/rehost and
# bin/yamldecode (the bare yaml.v3 baseline), checks once that kustomize's
# images transformer produces the same images as rehost, then times
# interleaved rounds on this machine and prints medians, ratios and
# PASS/FAIL per target as Markdown. Exit status 1 when a target fails.
#
# Environment: ROUNDS (default 5) rounds on the big streams, STARTUP_RUNS
# (default 30) start-up runs, BENCH_DIR (default testdata/bench), BIN
# (default bin). Wall times come from bash's EPOCHREALTIME; peak RSS from
# /usr/bin/time -f %M (skipped when /usr/bin/time is missing).
# 1 MB = 1,000,000 bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
STARTUP_RUNS=${STARTUP_RUNS:-30}
BENCH=${BENCH_DIR:-testdata/bench}
BIN=${BIN:-bin}
KUSTOMIZE_VERSION=v5.8.2

say() { printf '%s\n' "$*" >&2; }

# --- inputs and tools -------------------------------------------------------
for f in stream-15mb.yaml stream-250mb.yaml kustomization.yaml onepod.yaml onepod-kustomize/kustomization.yaml; do
	if [ ! -f "$BENCH/$f" ]; then
		say "generating the corpus in $BENCH"
		go run ./internal/benchdata -out "$BENCH" >&2
		break
	fi
done

kustomize=""
for k in "$(command -v kustomize || true)" "$(go env GOPATH)/bin/kustomize"; do
	if [ -n "$k" ] && [ -x "$k" ] && [ "$("$k" version 2>/dev/null)" = "$KUSTOMIZE_VERSION" ]; then
		kustomize=$k
		break
	fi
done
if [ -z "$kustomize" ]; then
	say "installing kustomize $KUSTOMIZE_VERSION"
	gobin=$(go env GOBIN)
	gobin=${gobin:-$(go env GOPATH)/bin}
	go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
	kustomize=$gobin/kustomize
fi

say "building $BIN/rehost and $BIN/yamldecode"
mkdir -p "$BIN"
go build -o "$BIN/rehost" ./cmd/rehost
go build -o "$BIN/yamldecode" ./internal/benchdata/yamldecode
rehost=$BIN/rehost
yamldecode=$BIN/yamldecode

timecmd=""
if [ -x /usr/bin/time ]; then
	timecmd=/usr/bin/time
else
	say "warning: /usr/bin/time is missing: peak RSS is not measured"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

s15=$BENCH/stream-15mb.yaml
s250=$BENCH/stream-250mb.yaml

# --- once: same mapping, same result ----------------------------------------
say "checking that kustomize and rehost produce the same images (also a warm-up)"
"$rehost" rewrite "$s15" >"$tmp/rehost.yaml"
"$kustomize" build "$BENCH" >"$tmp/kustomize.yaml"
"$rehost" images "$tmp/rehost.yaml" >"$tmp/rehost.images"
"$rehost" images "$tmp/kustomize.yaml" >"$tmp/kustomize.images"
if ! cmp -s "$tmp/rehost.images" "$tmp/kustomize.images"; then
	say "kustomize and rehost do not produce the same images:"
	diff "$tmp/rehost.images" "$tmp/kustomize.images" >&2 || true
	exit 1
fi
nimages=$(wc -l <"$tmp/rehost.images")
if [ "$nimages" -eq 0 ] || grep -qv '^sea\.hub:5000/' "$tmp/rehost.images"; then
	say "unexpected images in rehost's output:"
	grep -v '^sea\.hub:5000/' "$tmp/rehost.images" >&2 || true
	[ "$nimages" -gt 0 ] || exit 1
fi
"$rehost" rewrite "$BENCH/onepod.yaml" >"$tmp/onepod-rehost.yaml"
"$kustomize" build "$BENCH/onepod-kustomize" >"$tmp/onepod-kustomize.yaml"
"$yamldecode" "$s15" >/dev/null
rm -f "$tmp"/*.yaml

# --- measurements -----------------------------------------------------------
# Wall clock in µs without forking (a $(...) would fork inside the timing).

# run NAME CMD...: runs CMD with stdout to /dev/null, appends its wall time
# (µs) to $tmp/NAME.us and its peak RSS (KiB) to $tmp/NAME.rss.
run() {
	local name=$1 t0 t1
	shift
	if [ -n "$timecmd" ]; then
		t0=${EPOCHREALTIME//[.,]/}
		"$timecmd" -f %M -o "$tmp/rss" "$@" >/dev/null 2>"$tmp/err" || { say "failed: $*"; cat "$tmp/err" >&2; exit 1; }
		t1=${EPOCHREALTIME//[.,]/}
		tail -n 1 "$tmp/rss" >>"$tmp/$name.rss"
	else
		t0=${EPOCHREALTIME//[.,]/}
		"$@" >/dev/null 2>"$tmp/err" || { say "failed: $*"; cat "$tmp/err" >&2; exit 1; }
		t1=${EPOCHREALTIME//[.,]/}
	fi
	echo $((t1 - t0)) >>"$tmp/$name.us"
}

# fast NAME CMD...: like run, without /usr/bin/time (start-up timings).
fast() {
	local name=$1 t0 t1
	shift
	t0=${EPOCHREALTIME//[.,]/}
	"$@" >/dev/null 2>"$tmp/err" || { say "failed: $*"; cat "$tmp/err" >&2; exit 1; }
	t1=${EPOCHREALTIME//[.,]/}
	echo $((t1 - t0)) >>"$tmp/$name.us"
}

median() {
	[ -s "$1" ] || { echo 0; return; }
	sort -n "$1" | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}

for ((r = 1; r <= ROUNDS; r++)); do
	say "round $r/$ROUNDS"
	run rewrite15 "$rehost" rewrite "$s15"
	run images15 "$rehost" images "$s15"
	run yamldecode15 "$yamldecode" "$s15"
	run kustomize15 "$kustomize" build "$BENCH"
	run rewrite250 "$rehost" rewrite "$s250"
	run images250 "$rehost" images "$s250"
done

say "start-up: $STARTUP_RUNS runs each"
for ((r = 1; r <= STARTUP_RUNS; r++)); do
	fast rehost1 "$rehost" rewrite "$BENCH/onepod.yaml"
	fast kustomize1 "$kustomize" build "$BENCH/onepod-kustomize"
	fast version "$rehost" version
done

# --- report -----------------------------------------------------------------
size15=$(stat -c %s "$s15")
size250=$(stat -c %s "$s250")
ms() { awk -v us="$(median "$tmp/$1.us")" 'BEGIN {printf "%.1f", us / 1000}'; }
mbps() { awk -v us="$(median "$tmp/$1.us")" -v b="$2" 'BEGIN {printf "%.0f", b / us}'; }
rssmb() { awk -v kb="$(median "$tmp/$1.rss")" 'BEGIN {printf "%.1f", kb * 1024 / 1e6}'; }
ratio() { awk -v a="$(median "$tmp/$1.us")" -v b="$(median "$tmp/$2.us")" 'BEGIN {printf "%.2f", a / b}'; }

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "### Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($cpu), $(go env GOVERSION), kustomize $KUSTOMIZE_VERSION, rehost $(git describe --always --dirty 2>/dev/null || echo devel)"
echo
echo "Medians of $ROUNDS interleaved rounds (start-up: $STARTUP_RUNS runs); streams of $(awk -v b="$size15" 'BEGIN {printf "%.1f", b/1e6}') MB and $(awk -v b="$size250" 'BEGIN {printf "%.1f", b/1e6}') MB, $nimages images."
echo
echo "| command | wall time | throughput | peak RSS |"
echo "|---|---:|---:|---:|"
row() { echo "| $1 | $(ms "$2") ms | ${3:+$(mbps "$2" "$3") MB/s} | $( [ -s "$tmp/$2.rss" ] && echo "$(rssmb "$2") MB") |"; }
row "\`rehost rewrite\` 15 MB" rewrite15 "$size15"
row "\`rehost images\` 15 MB" images15 "$size15"
row "yaml.v3 decode to \`yaml.Node\` 15 MB" yamldecode15 "$size15"
row "\`kustomize build\` with \`images:\` 15 MB" kustomize15 "$size15"
row "\`rehost rewrite\` 250 MB" rewrite250 "$size250"
row "\`rehost images\` 250 MB" images250 "$size250"
row "\`rehost rewrite\` one Pod" rehost1 ""
row "\`kustomize build\` one Pod" kustomize1 ""
row "\`rehost version\`" version ""
echo

fails=0
verdict() { # verdict NAME MEASURED OP LIMIT
	local ok
	ok=$(awk -v m="$2" -v l="$4" -v op="$3" 'BEGIN {print ((op == ">=" && m >= l) || (op == "<=" && m <= l)) ? "PASS" : "FAIL"}')
	[ "$ok" = PASS ] || fails=$((fails + 1))
	echo "| $1 | $2 | $3 $4 | $ok |"
}
echo "| target | measured | required | result |"
echo "|---|---:|---:|:---:|"
verdict "kustomize \`images:\` time / \`rehost rewrite\` time (15 MB)" "$(ratio kustomize15 rewrite15)" ">=" 100
verdict "yaml.v3 decode time / \`rehost rewrite\` time (15 MB)" "$(ratio yamldecode15 rewrite15)" ">=" 5
if [ -n "$timecmd" ]; then
	verdict "peak RSS of \`rehost rewrite\` on 250 MB (MB)" "$(rssmb rewrite250)" "<=" 100
	verdict "peak RSS 250 MB − peak RSS 15 MB (MB)" "$(awk -v a="$(rssmb rewrite250)" -v b="$(rssmb rewrite15)" 'BEGIN {printf "%.1f", a - b}')" "<=" 16
fi
verdict "\`rehost rewrite\` one Pod / \`kustomize build\` one Pod (start-up)" "$(ratio rehost1 kustomize1)" "<=" 0.6
verdict "\`rehost images\` time / \`rehost rewrite\` time (15 MB)" "$(ratio images15 rewrite15)" "<=" 1
[ "$fails" -eq 0 ]
