# shellcheck shell=bash
# Shared helpers for scripts/ci-services.sh and scripts/services/*.sh.
#
# Sourced, never executed. Every service script installs its component into
# the download cache (kept between runs, and by CI's cache action) and starts
# it with its state under the state directory. All of them are idempotent: a
# component that already answers is left alone, so a second run is a no-op.

# Download cache: binaries, archives and Maven/apt downloads. CI caches it.
CMS_CI_CACHE="${CMS_CI_CACHE:-/var/cache/cms-ci}"
# Runtime state: data, logs and pid files of the running services.
CMS_CI_STATE="${CMS_CI_STATE:-/var/lib/cms-ci}"
# Unprivileged user that runs Elasticsearch (it refuses to run as root) and NATS.
CMS_CI_USER="${CMS_CI_USER:-cmsci}"
export CMS_CI_CACHE CMS_CI_STATE CMS_CI_USER

# Where Debian's chromium package puts the browser (services/browser.sh
# installs it; ci-services.sh writes it into the env file as CMS_CHROMIUM).
CHROMIUM_BIN=/usr/bin/chromium

# sudo or a user's login may leave out the sbin directories (runuser,
# useradd, pg_ctlcluster's helpers live there).
PATH="${PATH}:/usr/local/sbin:/usr/sbin:/sbin"

# The name a service script logs under; each script sets it.
SERVICE="${SERVICE:-ci-services}"

log() { printf '%s [%s] %s\n' "$(date -u +%H:%M:%S)" "$SERVICE" "$*" >&2; }

die() {
	log "ERROR: $*"
	exit 1
}

require_root() {
	[[ ${EUID} -eq 0 ]] || die "must run as root (use: sudo -E $0)"
}

# now prints the epoch second; timings are whole seconds, enough at this scale.
now() { date +%s; }

# record_timing PHASE START_EPOCH writes "<phase> <seconds>" for the summary
# that ci-services.sh prints, and logs it.
record_timing() {
	local phase=$1 start=$2 secs
	secs=$(($(now) - start))
	mkdir -p "${CMS_CI_STATE}/timings"
	printf '%s\n' "${secs}" >"${CMS_CI_STATE}/timings/${SERVICE}.${phase}"
	log "${phase} took ${secs}s"
}

# wait_for TIMEOUT_SECONDS DESCRIPTION CMD... runs CMD once a second until it
# succeeds; fails after the timeout.
wait_for() {
	local timeout=$1 what=$2
	shift 2
	local deadline=$(($(now) + timeout))
	until "$@" >/dev/null 2>&1; do
		if (($(now) >= deadline)); then
			log "timed out after ${timeout}s waiting for ${what}"
			return 1
		fi
		sleep 1
	done
}

# port_open HOST PORT: true when something accepts TCP connections there.
port_open() {
	(exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# pid_alive PIDFILE: true when the file names a live process.
pid_alive() {
	local pid
	[[ -s $1 ]] || return 1
	pid=$(<"$1")
	[[ ${pid} =~ ^[0-9]+$ ]] && kill -0 "${pid}" 2>/dev/null
}

# apt_install PKG... installs Debian packages. Parallel service scripts may
# call it at once, so it serialises on a lock (dpkg's own lock would make the
# second apt-get fail), and keeps the .deb files in the cache so a CI cache
# restore makes the next install offline-fast.
apt_install() {
	local archives="${CMS_CI_CACHE}/apt/archives"
	mkdir -p "${archives}/partial" "${CMS_CI_STATE}"
	(
		flock 9
		# Lists may be missing (fresh image) or stale; a failed install after
		# an update is a real failure.
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			-o Dir::Cache::Archives="${archives}" \
			-o DPkg::Lock::Timeout=300 "$@"
	) 9>"${CMS_CI_STATE}/apt.lock"
}

# ensure_ci_user creates the unprivileged system user that runs the services.
ensure_ci_user() {
	if ! id -u "${CMS_CI_USER}" >/dev/null 2>&1; then
		useradd --system --user-group --home-dir "${CMS_CI_STATE}" \
			--no-create-home --shell /usr/sbin/nologin "${CMS_CI_USER}"
		log "created user ${CMS_CI_USER}"
	fi
}

# as_ci_user CMD... runs CMD as the CI user, keeping the environment.
as_ci_user() {
	runuser -u "${CMS_CI_USER}" -- "$@"
}

# show_log FILE prints the last lines of a service log, for failure messages.
show_log() {
	[[ -f $1 ]] || return 0
	log "last lines of $1:"
	tail -n 40 "$1" >&2 || true
}

# find_go prints the Go command to build with.
find_go() {
	# sudo's secure_path may drop the Go that setup-go or /usr/local/go put
	# on PATH; look in the usual places before giving up.
	local g
	for g in "$(command -v go || true)" /usr/local/go/bin/go /usr/lib/go/bin/go; do
		[[ -n ${g} && -x ${g} ]] && {
			printf '%s\n' "${g}"
			return
		}
	done
	die "go not found: install Go (see go.mod) or run with sudo -E env PATH=\"\$PATH\""
}

# go_private_caches sets the caller's gotmp and goenv (declared local there,
# bash's dynamic scope): under sudo for another user, the build gets caches of
# its own, removed by go_drop_private_caches, so no root-owned files land in
# that user's Go caches.
go_private_caches() {
	gotmp="" goenv=()
	if [[ -n ${SUDO_USER:-} && ${SUDO_USER} != root ]]; then
		gotmp="${CMS_CI_CACHE}/go-$$"
		goenv=(GOCACHE="${gotmp}/build" GOMODCACHE="${gotmp}/mod")
	fi
}
go_drop_private_caches() {
	if [[ -n ${gotmp} ]]; then
		env "${goenv[@]}" "${go}" clean -cache -modcache
		rm -rf "${gotmp}"
	fi
}

# go_install PKG@VERSION builds a Go program from its module into
# $CMS_CI_CACHE/bin (nats-server, promtool). Under sudo, HOME (and so the
# Go caches) may still be the invoking user's, and root-owned files there
# would break that user's later `go test`: build with private caches and
# drop them afterwards (the binary is what the cache keeps). As plain root,
# use root's own caches, which the repository's build may already have
# warmed.
go_install() {
	local pkg=$1 go gotmp="" goenv=()
	go=$(find_go)
	go_private_caches
	log "go install ${pkg} with $(${go} version | awk '{print $3}')"
	# Outside the repo and without GOFLAGS/GOWORK: pkg@version installs ignore
	# the current module, and a -mod flag would make them fail.
	(cd / && env -u GOFLAGS -u GOWORK CGO_ENABLED=0 GOBIN="${CMS_CI_CACHE}/bin" \
		"${goenv[@]}" "${go}" install "${pkg}") ||
		die "go install ${pkg} failed"
	go_drop_private_caches
}

# go_build_module MODULE@VERSION PKG OUT builds package PKG (relative to the
# module's root, e.g. ./cmd/jaeger) of a module that `go install pkg@version`
# refuses because its go.mod has replace directives (Jaeger): it downloads the
# module, builds in a writable copy of it (the module cache is read-only and
# -mod=mod may add go.sum lines) and writes the binary to OUT. Caches as in
# go_install: private ones under sudo, dropped afterwards.
go_build_module() {
	local modver=$1 pkg=$2 out=$3 go gotmp="" goenv=() dir src
	go=$(find_go)
	go_private_caches
	log "go build ${modver} ${pkg} with $(${go} version | awk '{print $3}')"
	# -json prints the extracted module's directory; outside any module and
	# workspace, as for go_install.
	dir=$(cd / && env -u GOFLAGS GOWORK=off "${goenv[@]}" "${go}" mod download -json "${modver}" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') || true
	[[ -n ${dir} && -d ${dir} ]] || die "go mod download ${modver} failed"
	# One directory per module, emptied first: a build killed halfway left
	# its copy there.
	src="${CMS_CI_CACHE}/gobuild/$(basename "${modver%@*}")"
	rm -rf "${src}"
	mkdir -p "${src}"
	cp -R "${dir}/." "${src}"
	chmod -R u+w "${src}"
	mkdir -p "$(dirname "${out}")"
	# The module's own go.mod decides (GOWORK=off); GOTOOLCHAIN=local keeps
	# the Go we have instead of fetching the newer toolchain go.mod may name.
	(cd "${src}" && env GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0 \
		"${goenv[@]}" "${go}" build -trimpath -o "${out}.tmp" "${pkg}") || {
		rm -rf "${src}"
		die "go build ${modver} ${pkg} failed"
	}
	mv "${out}.tmp" "${out}"
	rm -rf "${src}"
	go_drop_private_caches
}
