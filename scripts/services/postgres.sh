#!/usr/bin/env bash
# Installs (Debian package) and starts PostgreSQL on 127.0.0.1:5432, with a
# role cms/cms that may create databases (tests make their own) and a
# database cms. Idempotent.
set -euo pipefail
SERVICE=postgres
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_PORT=5432
PG_URL="postgres://cms:cms@127.0.0.1:${PG_PORT}/cms?sslmode=disable"

install_postgres() {
	if command -v pg_ctlcluster >/dev/null && compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
		log "postgresql already installed"
		return
	fi
	log "installing postgresql from Debian packages"
	apt_install postgresql postgresql-client
}

# cluster prints "<version> <name>" of the cluster on PG_PORT, creating the
# default cluster when the package install did not (e.g. create_main_cluster
# switched off).
cluster() {
	local found
	found=$(pg_lsclusters -h | awk -v p="${PG_PORT}" '$3 == p { print $1, $2; exit }')
	if [[ -z ${found} ]]; then
		local ver
		ver=$(basename "$(compgen -G '/usr/lib/postgresql/*' | sort -V | tail -n 1)")
		log "no cluster on port ${PG_PORT}; creating ${ver}/main"
		pg_createcluster --port "${PG_PORT}" "${ver}" main >&2
		found="${ver} main"
	fi
	printf '%s\n' "${found}"
}

pg_ready() { pg_isready -q -h 127.0.0.1 -p "${PG_PORT}"; }

start_postgres() {
	if pg_ready; then
		log "already accepting connections on 127.0.0.1:${PG_PORT}"
		return
	fi
	local ver name
	read -r ver name < <(cluster)
	# No systemd in containers or this sandbox: pg_ctlcluster works with and
	# without it, and runs the server as the postgres user.
	log "starting cluster ${ver}/${name}"
	if ! pg_ctlcluster "${ver}" "${name}" start; then
		show_log "/var/log/postgresql/postgresql-${ver}-${name}.log"
		die "pg_ctlcluster ${ver} ${name} start failed"
	fi
	wait_for 60 "postgres on 127.0.0.1:${PG_PORT}" pg_ready ||
		die "postgres did not accept connections within 60s"
}

psql_admin() {
	# cd / so psql does not complain that postgres cannot read the cwd.
	(cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -tA "$@")
}

ensure_role_and_db() {
	# SUPERUSER: tests create and drop their own databases (and may need
	# extensions); this server only listens on loopback on a CI machine.
	psql_admin -c "DO \$\$ BEGIN
	  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cms') THEN
	    CREATE ROLE cms LOGIN SUPERUSER CREATEDB PASSWORD 'cms';
	  ELSE
	    ALTER ROLE cms LOGIN SUPERUSER CREATEDB PASSWORD 'cms';
	  END IF;
	END \$\$;"
	if [[ $(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = 'cms'") != 1 ]]; then
		psql_admin -c "CREATE DATABASE cms OWNER cms"
		log "created database cms"
	fi
	# Check with the exact URL the tests get: password auth over TCP.
	psql "${PG_URL}" -X -q -tA -c 'SELECT 1' >/dev/null ||
		die "cannot connect with ${PG_URL}"
}

main() {
	require_root
	local t
	t=$(now)
	install_postgres
	record_timing install "${t}"
	t=$(now)
	start_postgres
	ensure_role_and_db
	record_timing start "${t}"
	log "ready: ${PG_URL}"
}

main "$@"
