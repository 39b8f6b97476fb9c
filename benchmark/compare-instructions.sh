#!/bin/sh
# Client instructions per request of two commits, side by side:
#
#   benchmark/compare-instructions.sh <rev> <rev>
#   benchmark/compare-instructions.sh main HEAD
#   BENCH_IC_INFLIGHT=50 benchmark/compare-instructions.sh main HEAD
#   BENCH_AGENTS=steady-agent,steady-agent-watched BENCH_PROTOCOLS=http,https benchmark/compare-instructions.sh v1.0.0 HEAD
#
# Each revision is checked out in a temporary worktree (removed at the end),
# with this checkout's benchmark/ copied over its own and this checkout's
# node_modules linked in: both revisions are measured by the same harness,
# so the difference is the agent's. BENCH_AGENTS defaults to steady-agent,
# BENCH_PROTOCOLS to http and BENCH_IC_INFLIGHT to 1,50 (both modes: one
# request in flight, and 50 in batches); the other BENCH_IC_* pass through.
# Nothing is saved (no --save). Needs valgrind; some 2-3 minutes per
# revision, agent, protocol and mode on an idle 2-core machine, more under
# load (the counts barely move: at one in flight a difference under about
# 0.7% is noise, an A/A run gave -0.32%; at 50 in flight, under about 0.3%).
set -eu

if [ $# -ne 2 ]; then
  echo "usage: $0 <rev> <rev>" >&2
  exit 2
fi

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-instructions.XXXXXX")
cleanup() {
  for dir in "$tmp"/rev-*; do
    [ -d "$dir" ] && git -C "$root" worktree remove --force "$dir" >/dev/null 2>&1
  done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

export BENCH_AGENTS="${BENCH_AGENTS:-steady-agent}"
export BENCH_PROTOCOLS="${BENCH_PROTOCOLS:-http}"
export BENCH_IC_INFLIGHT="${BENCH_IC_INFLIGHT:-1,50}"

i=0
for rev in "$1" "$2"; do
  i=$((i + 1))
  dir="$tmp/rev-$i"
  commit=$(git -C "$root" rev-parse --verify "$rev^{commit}")
  git -C "$root" worktree add --detach --quiet "$dir" "$commit"
  rm -rf "$dir/benchmark"
  cp -R "$root/benchmark" "$dir/benchmark"
  ln -s "$root/node_modules" "$dir/node_modules"
  echo "== $rev ($(git -C "$root" log -1 --format='%h %s' "$commit"))"
  (cd "$dir" && node benchmark/instructions.js) | tee "$tmp/out-$i"
done

echo
echo "== per request: $1 -> $2"
# Lines "<agent>: <n> instructions/req (<protocol>, <k> in flight; ...)", in the same order for both.
grep ' instructions/req (' "$tmp/out-1" > "$tmp/lines-1" || true
grep ' instructions/req (' "$tmp/out-2" > "$tmp/lines-2" || true
printf '%-48s %12s %12s %9s\n' 'agent (protocol, in flight)' "$1" "$2" change
paste -d '\n' "$tmp/lines-1" "$tmp/lines-2" | awk '
  { agent = $1; sub(/:$/, "", agent); what = $0; sub(/^[^(]*\(/, "", what); sub(/;.*$/, "", what); n = $2; gsub(/,/, "", n) }
  NR % 2 == 1 { before = n; next }
  { printf "%-48s %12d %12d %+8.2f%%\n", agent " (" what ")", before, n, (n - before) / before * 100 }'
