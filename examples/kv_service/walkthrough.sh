#!/usr/bin/env bash
# The walk-through of examples/kv_service/README.md, as one script: a head
# and two nodes on this host, the service started by one run of kv_service
# and used by others, the node that hosts it killed, and the service
# answering again from its restart on the other node. CI runs it.
#
#   walkthrough.sh [PRISM [KV_SERVICE]]   (default: both on the PATH)
set -euo pipefail

prism=${1:-prism}
kv=${2:-kv_service}
export PRISM_SESSION_DIR
PRISM_SESSION_DIR=$(mktemp -d)
finish() {
  "$prism" stop --grace-ms 2000 >/dev/null 2>&1 || true
  rm -rf "$PRISM_SESSION_DIR"
}
trap finish EXIT

say() { printf '\n$ %s\n' "$*"; }
expect() { # expect WHAT GOT WANTED
  if [[ "$2" != "$3" ]]; then
    printf 'walkthrough: %s printed "%s", not "%s"\n' "$1" "$2" "$3" >&2
    exit 1
  fi
}

# 1. A head that runs no work (0 CPUs) and two nodes of 1 CPU each.
say prism start --head --port 0 --num-cpus 0
head=$("$prism" start --head --port 0 --num-cpus 0)
echo "$head"
export PRISM_ADDRESS
PRISM_ADDRESS=$(sed -n 's/^Prism head started at \([^ ]*\) .*/\1/p' <<<"$head")
declare -A node_pids
for _ in 1 2; do
  say prism start --address "$PRISM_ADDRESS" --num-cpus 1
  node=$("$prism" start --address "$PRISM_ADDRESS" --num-cpus 1)
  echo "$node"
  id=$(sed -n 's/^Prism node \([0-9a-f]*\) joined.*(pid \([0-9]*\)).*/\1/p' <<<"$node")
  node_pids[$id]=$(sed -n 's/^Prism node \([0-9a-f]*\) joined.*(pid \([0-9]*\)).*/\2/p' <<<"$node")
done

# 2. Start the service; this run ends, the service stays.
say kv_service serve
"$kv" serve

# 3. Use it from other runs.
say kv_service put greeting hello
"$kv" put greeting hello
say kv_service get greeting
got=$("$kv" get greeting); echo "$got"
expect "get greeting" "$got" hello
say kv_service health
got=$("$kv" health); echo "$got"
expect health "$got" ok

# 4. An asynchronous call: wait for a key another run sets.
say "kv_service wait color 30000 &   # waits without holding a thread"
"$kv" wait color 30000 >"$PRISM_SESSION_DIR/wait.out" &
waiter=$!
say kv_service put color blue
"$kv" put color blue
wait "$waiter"
got=$(cat "$PRISM_SESSION_DIR/wait.out"); echo "$got"
expect "wait color" "$got" blue

# 5. Cancel a slow scan.
say 'kv_service scan "" 50'
got=$("$kv" scan "" 50); echo "$got"
expect scan "$got" "scan cancelled"

# 6. Kill the node process that hosts the service: it restarts on the other
#    node, and its data is still there.
say prism list actors --filter name=kv
"$prism" list actors --filter name=kv
node_id=$("$prism" list actors --filter name=kv --format json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["entries"][0]["node_id"])')
pid=${node_pids[${node_id:0:8}]}
say kill -9 "$pid"
kill -9 "$pid"
say kv_service get greeting
got=$("$kv" get greeting); echo "$got"
expect "get greeting after the kill" "$got" hello
say prism list actors --filter name=kv
"$prism" list actors --filter name=kv
echo
echo "walkthrough: done"
