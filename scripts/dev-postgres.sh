#!/usr/bin/env bash
# A PostgreSQL 15 server for trying `herald serve` on PostgreSQL by hand (the tests start their own).
#   scripts/dev-postgres.sh start [DIR]   initdb if needed, start on 127.0.0.1:55432, print HERALD_DATABASE
#   scripts/dev-postgres.sh stop [DIR]
# Under root the server runs as the `postgres` user, as PostgreSQL requires. Trust auth on loopback only.
set -euo pipefail
bin=/usr/lib/postgresql/15/bin
dir=${2:-/tmp/herald-dev-postgres}
port=${HERALD_DEV_PG_PORT:-55432}
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ -x "$bin/initdb" ] || { echo "install postgresql-15 first" >&2; exit 1; }
case "${1:-}" in
start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
    [ -f "$dir/data/PG_VERSION" ] || as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-locale -E UTF8 >/dev/null
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir'" start >/dev/null
    psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'herald'" \
        | grep -q 1 || psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE herald"
    echo "HERALD_DATABASE=postgres://postgres@127.0.0.1:$port/herald"
    ;;
stop) as_pg "$bin/pg_ctl" -D "$dir/data" -m fast stop ;;
*) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
