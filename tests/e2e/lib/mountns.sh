# Sourced first (after `set`) by the end-to-end scripts that mount tmpfs file systems (read-only,
# full disks): the script runs again in a private mount namespace, so that its mounts are its own
# and vanish with it. No namespace is a failure, not a skip.
if [ -z "${OQ_MOUNT_NS:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then ns=(unshare --mount --propagation private)
    else ns=(unshare --user --map-root-user --mount --propagation private); fi
    "${ns[@]}" true 2>/dev/null || { echo "FAIL: cannot make a private mount namespace (${ns[*]})" >&2; exit 1; }
    exec "${ns[@]}" env OQ_MOUNT_NS=1 bash "$0"
fi
