#!/bin/sh
# tests/slurm/cluster.sh: a throw-away Slurm cluster on one host, for tests.
#
#   sh tests/slurm/cluster.sh start DIR   munge + slurmctld + 4 slurmd (n1..n4,
#                                         8 fake GPUs each) entirely inside DIR
#   sh tests/slurm/cluster.sh stop DIR    stops exactly what start started
#
# start installs the Debian packages it needs when they are missing (as root,
# through apt-get); where it cannot, it prints "slurm: SKIP <reason>" and exits
# 77, so a test can skip. Every daemon runs in the foreground under this script
# (-D / -F), so the pid recorded in DIR/pids is the daemon itself, not a parent
# that forked it. Ports are probed on 127.0.0.1, so two clusters in two
# folders run side by side. After start, `. DIR/env` gives a client
# everything it needs (SLURM_CONF; the munge socket is named in slurm.conf).
#
# Partitions: `gpu` (default) is scheduled by Slurm itself (job arrays, the
# planner's --slurm); `ext` holds every job at submission (job_submit.lua sets
# priority 0) for an outside scheduler such as `fleetsim-agent --backend slurm`.
# The facts behind each line: ../shared/reference/integration-notes.md 2.4-2.5.
set -u
NODES=4
GPUS_PER_NODE=8
SLURM_PKGS="slurmctld slurmd slurm-client munge"

die() { echo "cluster.sh: $*" >&2; exit 1; }
skip77() { echo "slurm: SKIP $*"; exit 77; }

usage() { echo "usage: sh tests/slurm/cluster.sh start|stop DIR" >&2; exit 2; }
[ $# = 2 ] || usage
cmd=$1
mkdir -p "$2" 2>/dev/null || die "cannot create $2"
DIR=$(cd "$2" && pwd) || die "cannot enter $2"

have_pkgs() {
  for p in $SLURM_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || return 1
  done
  command -v slurmctld >/dev/null && command -v munged >/dev/null
}

install_pkgs() {
  have_pkgs && return 0
  command -v apt-get >/dev/null 2>&1 || skip77 "no apt-get, and Slurm ($SLURM_PKGS) is not installed"
  [ "$(id -u)" = 0 ] || skip77 "not root, and Slurm ($SLURM_PKGS) is not installed"
  echo "cluster.sh: installing $SLURM_PKGS" >&2
  # Package scripts may try to start the daemons; a container's policy-rc.d
  # stops them, and we start ours by hand below anyway.
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $SLURM_PKGS >"$DIR/apt.log" 2>&1; then
    apt-get update -qq >>"$DIR/apt.log" 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $SLURM_PKGS >>"$DIR/apt.log" 2>&1 ||
      skip77 "apt-get install $SLURM_PKGS failed (see $DIR/apt.log)"
  fi
  have_pkgs || skip77 "Slurm still missing after apt-get"
}

# free_base N: prints a port P such that P..P+N-1 are all free on 127.0.0.1.
# Bound and closed here, so a race with another cluster remains possible in
# principle; the random start makes it unlikely, and slurmctld fails loudly.
free_base() {
  python3 - "$1" <<'EOF'
import random, socket, sys
n = int(sys.argv[1])
rng = random.SystemRandom()
for _ in range(200):
    base = rng.randrange(20000, 60000 - n)
    socks = []
    try:
        for p in range(base, base + n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", p))
            socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    print(base)
    sys.exit(0)
sys.exit(1)
EOF
}

# alive PID: the process exists and is not a zombie
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

write_conf() {
  ctld=$1 d1=$(($1 + 1)) dn=$(($1 + NODES))
  cat >"$DIR/slurm.conf" <<EOF
# Written by tests/slurm/cluster.sh for a test cluster in $DIR
ClusterName=fleetsimtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld
SlurmdPort=$d1
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket.2
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
JobSubmitPlugins=lua
PriorityType=priority/basic
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=600
MaxJobCount=20000
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MessageTimeout=10
NodeName=n[1-$NODES] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$d1-$dn] CPUs=16 Boards=1 SocketsPerBoard=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=64000 Gres=gpu:$GPUS_PER_NODE State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=ext Nodes=ALL Default=NO MaxTime=INFINITE State=UP
EOF
  # Fake GPUs: /dev/null links, so Slurm sets CUDA_VISIBLE_DEVICES for a job.
  echo "NodeName=n[1-$NODES] Name=gpu File=$DIR/dev/nvidia[0-$((GPUS_PER_NODE - 1))]" >"$DIR/gres.conf"
  i=0
  while [ $i -lt $GPUS_PER_NODE ]; do ln -sf /dev/null "$DIR/dev/nvidia$i"; i=$((i + 1)); done
  cat >"$DIR/job_submit.lua" <<'EOF'
-- Every job of partition "ext" arrives held (priority 0): an outside
-- scheduler (fleetsim-agent --backend slurm) pins its nodes and releases it.
function slurm_job_submit(job_desc, part_list, submit_uid)
   if job_desc.partition == "ext" then job_desc.priority = 0 end
   return slurm.SUCCESS
end
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end
EOF
}

start() {
  if [ -s "$DIR/pids" ]; then
    while read -r name pid; do
      alive "$pid" && die "$DIR already runs a cluster ($name pid $pid); stop it first"
    done <"$DIR/pids"
  fi
  install_pkgs
  [ "$(id -u)" = 0 ] || skip77 "not root: the test cluster's daemons run as root (SlurmUser=root)"
  command -v python3 >/dev/null || skip77 "python3 is needed to find free ports"
  mkdir -p "$DIR/munge" "$DIR/state" "$DIR/log" "$DIR/run" "$DIR/dev" || die "cannot create folders in $DIR"
  i=1; while [ $i -le $NODES ]; do mkdir -p "$DIR/spool/n$i"; i=$((i + 1)); done
  chmod 700 "$DIR/munge"
  : >"$DIR/pids"
  base=$(free_base $((NODES + 1))) || die "no free ports on 127.0.0.1"
  [ -f "$DIR/slurm.conf" ] && [ -d "$DIR/state" ] && [ -n "$(ls "$DIR/state" 2>/dev/null)" ] &&
    base=$(sed -n 's/^SlurmctldPort=//p' "$DIR/slurm.conf")   # a restart keeps its ports
  write_conf "$base"
  export SLURM_CONF="$DIR/slurm.conf"

  if [ ! -s "$DIR/munge/munge.key" ]; then
    mungekey -c -b 1024 -k "$DIR/munge/munge.key" >/dev/null 2>&1 ||
      dd if=/dev/urandom of="$DIR/munge/munge.key" bs=128 count=1 2>/dev/null
    chmod 600 "$DIR/munge/munge.key"
  fi
  sock=$DIR/munge/munge.socket.2
  munged -F --force -S "$sock" --key-file="$DIR/munge/munge.key" --log-file="$DIR/log/munged.log" \
    --pid-file="$DIR/munge/munged.pid" --seed-file="$DIR/munge/munged.seed" \
    </dev/null >"$DIR/log/munged.out" 2>&1 &
  echo "munged $!" >>"$DIR/pids"
  n=0
  until munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; do
    n=$((n + 1)); [ $n -gt 100 ] && { stop quiet; die "munged did not start (see $DIR/log/munged.log)"; }
    sleep 0.1
  done

  slurmctld -D -f "$SLURM_CONF" </dev/null >"$DIR/log/slurmctld.out" 2>&1 &
  echo "slurmctld $!" >>"$DIR/pids"
  n=0
  until scontrol ping 2>/dev/null | grep -q 'is UP'; do
    n=$((n + 1)); [ $n -gt 150 ] && { stop quiet; die "slurmctld did not come up (see $DIR/log/slurmctld.log)"; }
    sleep 0.1
  done
  i=1
  while [ $i -le $NODES ]; do
    slurmd -D -f "$SLURM_CONF" -N "n$i" </dev/null >"$DIR/log/slurmd-n$i.out" 2>&1 &
    echo "slurmd-n$i $!" >>"$DIR/pids"
    i=$((i + 1))
  done
  n=0
  while :; do
    idle=$(sinfo -h -p gpu -t idle -o %D 2>/dev/null | awk '{s += $1} END {print s + 0}')
    [ "$idle" = "$NODES" ] && break
    n=$((n + 1)); [ $n -gt 300 ] && { stop quiet; die "nodes not idle after 30 s (see $DIR/log/slurmd-n*.log)"; }
    sleep 0.1
  done
  cat >"$DIR/env" <<EOF
SLURM_CONF='$DIR/slurm.conf'; export SLURM_CONF
FLEETSIM_SLURM_DIR='$DIR'; export FLEETSIM_SLURM_DIR
FLEETSIM_SLURM_PARTITION=gpu; export FLEETSIM_SLURM_PARTITION
FLEETSIM_SLURM_HELD_PARTITION=ext; export FLEETSIM_SLURM_HELD_PARTITION
MUNGE_SOCKET='$sock'; export MUNGE_SOCKET
EOF
  echo "slurm: cluster up in $DIR ($NODES nodes x $GPUS_PER_NODE GPUs, slurmctld port $base; . $DIR/env)"
}

# stop [quiet]: cancel jobs so that no slurmstepd is orphaned, then SIGTERM
# the daemons we started, all at once (each takes 1-2 s to exit), SIGKILL
# what is left after 10 s, and munged last (the others talk through it).
stop() {
  [ -s "$DIR/pids" ] || { [ "${1:-}" = quiet ] || echo "slurm: nothing running in $DIR"; return 0; }
  SLURM_CONF="$DIR/slurm.conf"; export SLURM_CONF
  ctld=$(awk '$1 == "slurmctld" {print $2}' "$DIR/pids")
  if alive "$ctld"; then
    ids=$(squeue -h -o %i 2>/dev/null)
    [ -n "$ids" ] && scancel $ids 2>/dev/null
    n=0
    while [ -n "$(squeue -h -t R,CG,S -o %i 2>/dev/null)" ] && [ $n -lt 100 ]; do n=$((n + 1)); sleep 0.1; done
  fi
  daemons=$(awk '$1 != "munged" {print $2}' "$DIR/pids")
  munged_pid=$(awk '$1 == "munged" {print $2}' "$DIR/pids")
  for pid in $daemons; do alive "$pid" && kill -TERM "$pid" 2>/dev/null; done
  n=0
  while [ $n -lt 100 ]; do
    left=""; for pid in $daemons; do alive "$pid" && left="$left $pid"; done
    [ -z "$left" ] && break
    n=$((n + 1)); sleep 0.1
  done
  for pid in $daemons; do alive "$pid" && kill -KILL "$pid" 2>/dev/null; done
  if alive "$munged_pid"; then
    kill -TERM "$munged_pid" 2>/dev/null
    n=0; while alive "$munged_pid" && [ $n -lt 50 ]; do n=$((n + 1)); sleep 0.1; done
    alive "$munged_pid" && kill -KILL "$munged_pid" 2>/dev/null
  fi
  wait 2>/dev/null
  : >"$DIR/pids"
  [ "${1:-}" = quiet ] || echo "slurm: stopped the cluster in $DIR"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
