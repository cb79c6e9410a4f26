# Sourced by .ci/run: install Debian packages, waiting for another apt or dpkg process instead of
# failing at once. Fresh cloud machines run unattended-upgrades or cloud-init's apt at boot.
#
# apt-get waits for the dpkg lock itself (DPkg::Lock::Timeout); 'apt-get update' ignores that
# option for the package lists' lock, so it is retried while that lock is held. The wait is
# RRA_APT_LOCK_WAIT seconds (default 600); SUDO is "" or "sudo".

RRA_APT_LOCK_WAIT=${RRA_APT_LOCK_WAIT:-600}
APT=(apt-get -o "DPkg::Lock::Timeout=$RRA_APT_LOCK_WAIT")

apt_update() {
  local waited=0 out
  until out=$(${SUDO:-} "${APT[@]}" update -qq "$@" 2>&1); do
    if [[ $out == *"Could not get lock"* || $out == *"Unable to lock"* ]] && [ "$waited" -lt "$RRA_APT_LOCK_WAIT" ]; then
      [ "$waited" -eq 0 ] && echo "apt: another apt process holds the package lists; waiting up to ${RRA_APT_LOCK_WAIT}s" >&2
      sleep 2
      waited=$((waited + 2))
    else
      printf '%s\n' "$out" >&2
      return 1
    fi
  done
  [ -z "$out" ] || printf '%s\n' "$out" >&2
}

apt_install() {
  DEBIAN_FRONTEND=noninteractive ${SUDO:-} "${APT[@]}" install -y -qq "$@"
}
