#!/usr/bin/env bash
# Stops the PostgreSQL that infra/pg/start.sh started in DIR (fast shutdown: open sessions are
# ended). Does nothing when it is not running. With --rm, DIR is removed afterwards.
#
#   infra/pg/stop.sh DIR [--rm]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || die "usage: infra/pg/stop.sh DIR [--rm]"
[[ $# -eq 1 || "$2" == "--rm" ]] || die "unknown option '$2' (usage: infra/pg/stop.sh DIR [--rm])"
[[ -d "$1" ]] || { note "$1 does not exist; nothing to stop"; exit 0; }
dir=$(cd "$1" && pwd)
data="$dir/data"
cd /

if [[ -f "$data/PG_VERSION" ]]; then
  bin=$(find_pg_bin)
  if as_pg "$bin/pg_ctl" status -D "$data" >/dev/null 2>&1; then
    as_pg "$bin/pg_ctl" stop -D "$data" -m fast -w -t 60 -s
    note "stopped ($data)"
  else
    note "not running ($data)"
  fi
else
  note "no cluster in $dir; nothing to stop"
fi
[[ "${2:-}" != "--rm" ]] || rm -rf "$dir"
