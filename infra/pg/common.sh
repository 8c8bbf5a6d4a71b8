# Shared by start.sh and stop.sh (sourced, not run): where PostgreSQL's binaries are and how to
# run them as the right OS user.

die() { echo "infra/pg: $*" >&2; exit 1; }
note() { echo "infra/pg: $*" >&2; }

# The server binaries: $PG_BIN if set, else Debian's per-version directory for PostgreSQL 15,
# else the newest installed version ≥ 15 (the SQL Hearth writes must stay valid on 15).
find_pg_bin() {
  if [[ -n "${PG_BIN:-}" ]]; then
    [[ -x "$PG_BIN/postgres" && -x "$PG_BIN/pg_ctl" ]] || die "PG_BIN=$PG_BIN holds no postgres/pg_ctl"
    echo "$PG_BIN"; return
  fi
  if [[ -x /usr/lib/postgresql/15/bin/postgres ]]; then
    echo /usr/lib/postgresql/15/bin; return
  fi
  local dir best="" best_version=0 version
  for dir in /usr/lib/postgresql/*/bin; do
    [[ -x "$dir/postgres" && -x "$dir/pg_ctl" ]] || continue
    version=$(basename "$(dirname "$dir")")
    [[ "$version" =~ ^[0-9]+$ ]] || continue
    if (( version >= 15 && version > best_version )); then best="$dir"; best_version=$version; fi
  done
  [[ -n "$best" ]] || die "no PostgreSQL server binaries found (looked for /usr/lib/postgresql/15/bin/postgres, or any version >= 15 under /usr/lib/postgresql/*/bin). Install them with: apt-get install -y postgresql-15 (or set PG_BIN to a bin directory)"
  note "PostgreSQL 15 not found, using $best"
  echo "$best"
}

# The server refuses to run as root, so root runs it as the `postgres` OS user (Debian's
# packages create it); anyone else runs it as themselves.
if [[ $(id -u) -eq 0 ]]; then
  PG_OS_USER=${PG_OS_USER:-postgres}
  id "$PG_OS_USER" >/dev/null 2>&1 || die "running as root, but there is no '$PG_OS_USER' OS user to run the server as (set PG_OS_USER, or install postgresql-15 which creates it)"
  as_pg() { runuser -u "$PG_OS_USER" -- "$@"; }
else
  PG_OS_USER=$(id -un)
  as_pg() { "$@"; }
fi

# The port a running server in $1 (its data directory) listens on, from postmaster.pid line 4.
running_port() { as_pg sed -n 4p "$1/postmaster.pid" 2>/dev/null || true; }
