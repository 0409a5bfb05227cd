#!/usr/bin/env bash
# The AppArmor profile the .deb ships (packaging/linux/apparmor-sluice) compiles with
# AppArmor 4's own parser: `abi <abi/4.0>`, the `userns,` rule and the rest, strictly
# (every warning is an error), against AppArmor 4.0's kernel features, so a `userns` rule
# that parsed but would be dropped ("userns rules not enforced") fails too.
#
# Why a chroot: the machines that build and test Sluice run Debian 12, whose AppArmor 3
# parser rejects the profile (it knows neither abi 4.0 nor `userns`), while the systems that
# need the profile (Ubuntu 24.04+, Debian 13) have AppArmor 4. So the script debootstraps a
# minimal Debian 13 (trixie, AppArmor 4.x) once into a cache folder and runs that
# `apparmor_parser` inside it. It only compiles: `-Q` (skip kernel load) and `-K` (no
# cache), and no /proc or /sys is mounted, so nothing reaches the running kernel.
#
# Two negative controls keep the check from passing vacuously: the same profile with
# `userns` missing its comma must be rejected as a parse error, and the unchanged profile
# compiled against AppArmor 3.0's kernel features must be rejected for its unenforced
# `userns` rule (which proves that rule is really compiled, and that warnings fail).
#
# Cache: `$SLUICE_CI_CACHE/apparmor4` (SLUICE_CI_CACHE defaults to /var/cache/sluice-ci, as
# in .ci/run and `cargo xtask check-targets`) when that folder exists and is writable, else
# `${CARGO_TARGET_DIR:-target}/apparmor4` from the repo root. The chroot is built in a
# temporary folder and renamed into place only once complete, so an interrupted build is
# never taken for a ready one. Cold: 1 to 1.5 min on a fast mirror and ~135 MB; warm: under
# a second.
#
# Usage: tests/package/apparmor4_parse.sh (`cargo xtask test` runs it, through `sudo -n` when
# not root).
# Needs root (apt-get, debootstrap, chroot). SLUICE_DEBIAN_MIRROR overrides debootstrap's
# default mirror. Exits non-zero, with the reason, on any failure.
set -euo pipefail
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

readonly SUITE=trixie
readonly KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
readonly PARSER=/usr/sbin/apparmor_parser
# Inside the chroot: the feature sets the profile is compiled against.
readonly FEATURES_4=/etc/apparmor.d/abi/4.0
readonly FEATURES_3=/etc/apparmor.d/abi/3.0

log() { echo "apparmor4_parse: $*" >&2; }
die() {
  echo "apparmor4_parse: FAILED: $*" >&2
  exit 1
}

if [ $# -gt 0 ]; then
  echo "usage: $0" >&2
  exit 2
fi

root_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root_dir"
readonly PROFILE="$root_dir/packaging/linux/apparmor-sluice"
[ -f "$PROFILE" ] || die "no profile at $PROFILE"
if [ "$(id -u)" != 0 ]; then
  die "needs root (debootstrap and chroot): run it as root or through sudo"
fi

# Whether root can really write in a folder (a read-only mount says so only on a write).
writable() {
  local probe="$1/.sluice-write-probe-$$"
  : 2>/dev/null >"$probe" && rm -f "$probe"
}

ci_cache="${SLUICE_CI_CACHE:-/var/cache/sluice-ci}"
if [ -d "$ci_cache" ] && writable "$ci_cache"; then
  cache="$ci_cache/apparmor4"
else
  cache="${CARGO_TARGET_DIR:-target}/apparmor4"
fi
chroot_dir="$cache/$SUITE"

# A chroot counts as ready only with the parser and the abi the profile asks for.
ready() { [ -x "$1$PARSER" ] && [ -f "$1$FEATURES_4" ]; }

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
chroot_dir="$cache/$SUITE"

# One run at a time per cache: a second one waits rather than building the chroot twice.
exec 9>"$cache/.lock"
flock -w 1800 9 || die "another run has held $cache/.lock for 30 min"

building="" work=""
cleanup() {
  [ -z "$work" ] || rm -rf --one-file-system "$work"
  [ -z "$building" ] || rm -rf --one-file-system "$building" ||
    log "could not remove $building; the next run retries"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Debian's packages: installs them only when something is missing, updating the package
# lists first only when the install fails without.
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "$@" >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null; } ||
    die "apt-get install $* failed"
}

# debootstrap in a private mount namespace: the /proc and /sys it mounts in the target go
# away with it, even when it is killed, so no mount outlives a run.
debootstrap_into() {
  local target="$1"
  shift
  unshare --mount --propagation private -- \
    debootstrap --variant=minbase --keyring="$KEYRING" "$@" "$SUITE" "$target" \
    ${SLUICE_DEBIAN_MIRROR:+"$SLUICE_DEBIAN_MIRROR"} >>"$cache/debootstrap.log" 2>&1
}

build_chroot() {
  local started=$SECONDS old
  # What interrupted builds left (no other run is building: we hold the lock).
  for old in "$cache/$SUITE".tmp.* "$cache/$SUITE".broken.*; do
    [ -e "$old" ] || continue
    rm -rf --one-file-system "$old" || die "cannot remove the leftover $old (mounted?)"
  done
  if [ -e "$chroot_dir" ]; then
    log "$chroot_dir is incomplete (no $PARSER or $FEATURES_4): building it again"
    mv -T "$chroot_dir" "$cache/$SUITE.broken.$$"
    rm -rf --one-file-system "$cache/$SUITE.broken.$$"
  fi
  if ! command -v debootstrap >/dev/null || [ ! -f "$KEYRING" ]; then
    log "installing debootstrap"
    apt_install debootstrap debian-archive-keyring
  fi
  building=$(mktemp -d "$cache/$SUITE.tmp.XXXXXX")
  : >"$cache/debootstrap.log"
  log "building a Debian $SUITE chroot with AppArmor in $building (log: $cache/debootstrap.log)"
  if ! debootstrap_into "$building" --include=apparmor; then
    # Should the package set not resolve with --include, the base system, then apparmor
    # installed inside with the chroot's own apt-get.
    log "debootstrap --include=apparmor failed; base system first, then apt-get inside"
    rm -rf --one-file-system "$building"
    building=$(mktemp -d "$cache/$SUITE.tmp.XXXXXX")
    debootstrap_into "$building" ||
      { tail -n 20 "$cache/debootstrap.log" >&2; die "debootstrap of $SUITE failed"; }
    # shellcheck disable=SC2016 # $1 is the inner sh's argument
    unshare --mount --propagation private -- sh -c '
      mount -t proc proc "$1/proc" &&
      chroot "$1" apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive chroot "$1" \
        apt-get install -y -q --no-install-recommends apparmor' sh "$building" \
      >>"$cache/debootstrap.log" 2>&1 ||
      { tail -n 20 "$cache/debootstrap.log" >&2; die "apt-get install apparmor in the chroot failed"; }
  fi
  ready "$building" || die "the $SUITE chroot has no $PARSER or $FEATURES_4"
  # Only the parser is used: drop the downloaded packages, package lists and apt's caches
  # (~90 MB; `apt-get update` in the chroot brings them back).
  find "$building/var/cache/apt" "$building/var/cache/apt/archives" \
    "$building/var/lib/apt/lists" -maxdepth 1 -type f ! -name lock -delete
  sync -f "$building"
  mv -T "$building" "$chroot_dir"
  building=""
  log "chroot ready in $((SECONDS - started)) s: $chroot_dir ($(du -sh "$chroot_dir" | cut -f1))"
}

ready "$chroot_dir" || build_chroot

version=$(chroot "$chroot_dir" "$PARSER" --version | head -n 1) ||
  die "the chroot's $PARSER does not run"
log "$version (Debian $SUITE chroot: $chroot_dir)"
case "$version" in
  *" version 4."*) ;;
  *) die "expected an AppArmor 4.x parser, got: $version" ;;
esac

# The profile and its broken twin, in the chroot's /tmp (the parser sees the chroot's
# /etc/apparmor.d for abi/ and tunables/).
work=$(mktemp -d "$chroot_dir/tmp/sluice-apparmor.XXXXXX")
inside="/tmp/${work##*/}"
cp "$PROFILE" "$work/sluice"
sed 's/^\([[:space:]]*\)userns,[[:space:]]*$/\1userns/' "$PROFILE" >"$work/broken"
cmp -s "$work/sluice" "$work/broken" &&
  die "the profile has no 'userns,' line for the negative control to break"

# Compiles a profile without loading it, every warning an error; prints what the parser said.
compile() {
  local features="$1" file="$2"
  chroot "$chroot_dir" "$PARSER" -Q -K --kernel-features "$features" --warn=all --Werror \
    "$file" 2>&1
}

# 1. The shipped profile compiles, and names the one profile it should.
out=$(compile "$FEATURES_4" "$inside/sluice") ||
  die "AppArmor 4 rejects $PROFILE:"$'\n'"$out"
[ -z "$out" ] || die "AppArmor 4 compiled $PROFILE but said:"$'\n'"$out"
names=$(chroot "$chroot_dir" "$PARSER" -K --kernel-features "$FEATURES_4" -N "$inside/sluice" 2>&1) ||
  die "apparmor_parser -N failed:"$'\n'"$names"
[ "$names" = sluice ] || die "expected the one profile 'sluice', the parser lists: $names"
log "ok: $PROFILE compiles with abi 4.0 kernel features, no warning (profile: $names)"

# A negative control: compiling `$2` against `$1` must fail, and for the reason `$3` names;
# otherwise the check above proves nothing. `$4` says what is tried.
must_fail() {
  local out
  if out=$(compile "$1" "$2"); then
    die "negative control: $4 was accepted, so the check above proves nothing"
  fi
  grep -q "$3" <<<"$out" || die "negative control: $4 failed, but not with '$3':"$'\n'"$out"
  log "ok: negative control, $4 is rejected: $(grep -m1 "$3" <<<"$out")"
}

# 2. A syntax error must fail, as a parse error.
must_fail "$FEATURES_4" "$inside/broken" "AppArmor parser error" "'userns' without its comma"
# 3. Against AppArmor 3.0's features (no user namespace mediation) the userns rule must fail
# as unenforced: check 1 really compiled it, with warnings as errors.
must_fail "$FEATURES_3" "$inside/sluice" "userns rules not enforced" \
  "the profile against abi 3.0 features"

log "passed: the shipped AppArmor profile parses with $version"
