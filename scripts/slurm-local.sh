#!/usr/bin/env bash
# slurm-local.sh: a private one-node SLURM cluster on this machine, for tests and for trying
# `ortqual slurm` without a real cluster. Needs Debian's slurm-wlm and munge (scripts/deps.sh).
#
#   scripts/slurm-local.sh start DIR   start munged, slurmctld and slurmd with everything under DIR
#                                      (configuration, munge key and socket, state, spool, logs,
#                                      pid files), on free ports, one node with this machine's
#                                      cores, run as the current user; prints `export SLURM_CONF=...`
#   scripts/slurm-local.sh stop DIR    cancel its jobs, kill their processes and the three daemons
#                                      by the pids recorded in DIR (never by name)
#   scripts/slurm-local.sh logs DIR    the daemons' logs, for diagnostics
#
# Nothing outside DIR is read or written except the daemons' TCP ports on 127.0.0.1 (the system's
# /etc/slurm and /etc/munge are not used), so several clusters can run side by side.
# Environment: SLURM_LOCAL_TIMEOUT (seconds to wait for each daemon, default 60).
set -euo pipefail

say() { printf 'slurm-local: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
TIMEOUT=${SLURM_LOCAL_TIMEOUT:-60}

# Two TCP ports free on 127.0.0.1 now (the daemons bind them a moment later; start retries).
free_ports() {
    python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

# wait_for SECONDS WHAT CMD...: poll CMD every 0.2 s until it succeeds.
wait_for() {
    local limit=$1 what=$2
    shift 2
    local end=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || { say "timed out after ${limit}s waiting for $what"; return 1; }
        sleep 0.2
    done
}

pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# munged serves its socket only when every directory above it is searchable by all.
check_ancestors() {
    local p=$1
    while [ "$p" != / ]; do
        p=$(dirname "$p")
        [ "$(( 0$(stat -c %a "$p") & 1 ))" -eq 1 ] ||
            die "munged needs every directory above its socket searchable by all: $p is $(stat -c %a "$p") (chmod o+x $p, or another DIR)"
    done
}

start_munge() {
    local d=$1
    # munged wants the key private to its owner, and a socket directory everyone may enter
    mkdir -p "$d/munge/key" "$d/munge/run"
    chmod 700 "$d/munge/key"
    chmod 755 "$d/munge" "$d/munge/run"
    check_ancestors "$d/munge/run/munge.socket"
    [ -f "$d/munge/key/munge.key" ] || {
        head -c 1024 /dev/urandom >"$d/munge/key/munge.key"
        chmod 400 "$d/munge/key/munge.key"
    }
    munged --socket="$d/munge/run/munge.socket" --key-file="$d/munge/key/munge.key" \
        --pid-file="$d/munge/run/munged.pid" --seed-file="$d/munge/key/munged.seed" \
        --log-file="$d/log/munged.log" || die "munged did not start (log: $d/log/munged.log)"
    wait_for "$TIMEOUT" "munged" sh -c "munge -S '$d/munge/run/munge.socket' -n | unmunge -S '$d/munge/run/munge.socket'"
}

write_conf() {
    local d=$1 ctld_port=$2 slurmd_port=$3 user cpus mem
    user=$(id -un)
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo) # half of it, in MiB
    : >"$d/plugstack.conf"
    cat >"$d/slurm.conf" <<EOF
# written by scripts/slurm-local.sh: a private one-node cluster under $d
ClusterName=oqlocal
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/run/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$d/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
MinJobAge=600
MailProg=/bin/true
NodeName=oqnode NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=oqnode Default=YES MaxTime=INFINITE State=UP
EOF
}

node_idle() { sinfo -h -n oqnode -o %T | grep -qx idle; }

# One attempt on fresh ports; 1 when a daemon did not come up (the caller retries).
start_slurm() {
    local d=$1 ports
    read -r -a ports < <(free_ports)
    write_conf "$d" "${ports[0]}" "${ports[1]}"
    export SLURM_CONF=$d/slurm.conf
    slurmctld || return 1
    wait_for "$TIMEOUT" "slurmctld on port ${ports[0]}" sh -c 'scontrol ping | grep -q "is UP"' || return 1
    slurmd -N oqnode || return 1
    wait_for "$TIMEOUT" "slurmd (node oqnode idle)" node_idle || return 1
}

# stop_daemons PIDFILE...: SIGTERM to each recorded daemon at once (each takes about 2 s to
# go), SIGKILL to any still there after 5 s.
stop_daemons() {
    local pids=() f p
    for f in "$@"; do pid_alive "$f" && pids+=("$(cat "$f")"); done
    [ ${#pids[@]} -gt 0 ] || return 0
    kill "${pids[@]}" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "${pids[@]}" 2>/dev/null || break
        sleep 0.1
    done
    for p in "${pids[@]}"; do
        kill -0 "$p" 2>/dev/null || continue
        say "pid $p ignored SIGTERM; killing it"
        kill -9 "$p" 2>/dev/null || true
    done
}

cmd_start() {
    local d=$1
    for bin in munged munge unmunge slurmctld slurmd scontrol sinfo python3; do
        command -v "$bin" >/dev/null || die "$bin not found: run scripts/deps.sh (slurm-wlm, munge)"
    done
    mkdir -p "$d/state" "$d/spool" "$d/log"
    d=$(cd "$d" && pwd)
    chmod 755 "$d"
    start_munge "$d"
    local attempt
    for attempt in 1 2 3; do
        start_slurm "$d" && { echo "export SLURM_CONF=$d/slurm.conf"; return 0; }
        say "attempt $attempt: the cluster did not come up; stopping it and trying other ports"
        stop_daemons "$d/slurmd.pid" "$d/slurmctld.pid"
        rm -rf "$d/state"/* "$d/spool"/*
    done
    cmd_logs "$d" >&2
    die "could not start slurmctld and slurmd under $d"
}

cmd_stop() {
    local d=$1 pids
    export SLURM_CONF=$d/slurm.conf
    if pid_alive "$d/slurmctld.pid" && pid_alive "$d/slurmd.pid"; then
        # the jobs' own processes first (slurmd knows them), then the jobs
        pids=$(scontrol listpids 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}') || true
        scancel --user="$(id -un)" 2>/dev/null || true
        for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
    fi
    stop_daemons "$d/slurmd.pid" "$d/slurmctld.pid" "$d/munge/run/munged.pid"
}

cmd_logs() {
    local d=$1 f
    for f in "$d"/log/*.log; do
        [ -f "$f" ] || continue
        echo "==== $f (last 40 lines)"
        tail -n 40 "$f"
    done
}

[ $# -eq 2 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
case $1 in
start) cmd_start "$2" ;;
stop) cmd_stop "$2" ;;
logs) cmd_logs "$2" ;;
*) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
