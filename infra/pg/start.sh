#!/usr/bin/env bash
# Starts a throw-away PostgreSQL for development, tests and benchmarks, and prints its URL.
#
#   infra/pg/start.sh DIR PORT      →  postgres://postgres@127.0.0.1:PORT/postgres   (on stdout)
#
# DIR holds everything (data/, server.log, the unix socket); it is created when missing and
# reused when it already holds a cluster. The server listens on 127.0.0.1 only, trusts local
# connections and runs with fsync off: never use it for data you want to keep.
# Running it again with the same DIR and PORT while the server is up just prints the URL.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/common.sh"

[[ $# -eq 2 ]] || die "usage: infra/pg/start.sh DIR PORT"
port=$2
[[ "$port" =~ ^[0-9]+$ ]] && (( port > 0 && port < 65536 )) || die "PORT must be a TCP port number, got '$port'"
bin=$(find_pg_bin)
mkdir -p "$1"
dir=$(cd "$1" && pwd)
data="$dir/data"
url="postgres://postgres@127.0.0.1:$port/postgres"
# Run from / so that the tools, run as another user, do not trip over an unreadable cwd.
cd /

if [[ $(id -u) -eq 0 ]]; then
  # mktemp -d makes a root-only directory; the server's user must own the directory it writes in.
  [[ -e "$data" ]] || chown "$PG_OS_USER:" "$dir"
  as_pg test -w "$dir" -a -x "$dir" || die "$dir is not writable by the '$PG_OS_USER' user (is a parent directory private to root?)"
fi

if [[ -f "$data/PG_VERSION" ]] && as_pg "$bin/pg_ctl" status -D "$data" >/dev/null 2>&1; then
  current=$(running_port "$data")
  [[ "$current" == "$port" ]] || die "a server from $data is already running on port ${current:-?}; stop it first (infra/pg/stop.sh $dir)"
  note "already running ($data)"
  echo "$url"
  exit 0
fi

# Fail fast and clearly rather than after pg_ctl's timeout.
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  die "port $port on 127.0.0.1 is already in use"
fi

if [[ ! -f "$data/PG_VERSION" ]]; then
  [[ ! -e "$data" ]] || [[ -z "$(ls -A "$data" 2>/dev/null)" ]] || die "$data exists but is not a PostgreSQL data directory"
  note "initialising $data ($("$bin/postgres" --version))"
  # -N: no fsync while initialising; C collation keeps sorting identical to the embedded database.
  as_pg "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-locale -N --no-instructions >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  printf "\n# Hearth test settings (infra/pg/start.sh)\ninclude_if_exists = 'hearth.conf'\n" | as_pg tee -a "$data/postgresql.conf" >/dev/null
fi

# Rewritten on every start so that the same DIR can be started on another port.
socket_dir="$dir"
# A unix socket path is limited to 107 bytes; without one the server still listens on TCP.
(( ${#dir} + 18 <= 107 )) || socket_dir=""
as_pg tee "$data/hearth.conf" >/dev/null <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$socket_dir'
max_connections = 200
# Speed over durability: this server only ever holds test data.
fsync = off
synchronous_commit = off
full_page_writes = off
CONF

note "starting on 127.0.0.1:$port (log: $dir/server.log)"
if ! as_pg "$bin/pg_ctl" start -D "$data" -l "$dir/server.log" -w -t 60 -s >/dev/null; then
  tail -n 20 "$dir/server.log" >&2 || true
  die "the server did not start"
fi
echo "$url"
