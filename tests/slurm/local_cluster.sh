#!/bin/bash
# local_cluster.sh: a real one-node Slurm (munged + slurmctld + slurmd) on this machine, for tests.
#   local_cluster.sh install          apt-get install slurmctld slurmd slurm-client munge (Debian),
#                                     if missing
#   local_cluster.sh start DIR        write DIR/etc/slurm.conf, start the daemons, wait until idle
#   local_cluster.sh stop DIR         stop exactly the daemons started for DIR, by their PIDs
# Clients need SLURM_CONF=DIR/etc/slurm.conf (printed by start). Recipe: shared/docs/SLURM-LOCAL.md.
# The daemons listen on a free pair of ports (not Slurm's default 6817/6818), so the test runs
# beside a real Slurm installation or another test cluster on the same host (a chroot shares the
# host's network). bash for /dev/tcp, used to find the free ports.
set -eu

cmd=${1:?usage: local_cluster.sh install|start DIR|stop DIR}

install_slurm() {
  if command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
     command -v sbatch >/dev/null 2>&1 && command -v munged >/dev/null 2>&1; then
    return 0
  fi
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  # The daemons, the clients and the basic plugins (munge auth, pmix, linuxproc); not the
  # recommended database, monitoring and -dev plugin packages of slurm-wlm.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    slurmctld slurmd slurm-client munge
}

# Wait until PID is gone or a zombie (killed daemons linger <defunct> for a few seconds).
wait_gone() {
  pid=$1; i=0
  while [ $i -lt 100 ]; do
    state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
    case "$state" in ""|Z*) return 0 ;; esac
    sleep 0.1; i=$((i + 1))
  done
  return 1
}

stop_pidfile() {
  f=$1
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    if ! wait_gone "$pid"; then
      kill -9 "$pid" 2>/dev/null || true
      wait_gone "$pid" || echo "local_cluster: pid $pid did not exit" >&2
    fi
  fi
  rm -f "$f"
}

# port_free PORT: nothing accepts connections on localhost:PORT.
port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# free_ports: print a port P with P and P+1 free, from a range keyed by this process.
free_ports() {
  base=$((20000 + ($$ * 7) % 20000)); k=0
  while [ $k -lt 200 ]; do
    p=$((base + 2 * k))
    if port_free "$p" && port_free $((p + 1)); then echo "$p"; return 0; fi
    k=$((k + 1))
  done
  echo "local_cluster: no free pair of ports near $base" >&2
  return 1
}

case "$cmd" in
install)
  install_slurm
  ;;
start)
  dir=${2:?usage: local_cluster.sh start DIR}
  mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
  mkdir -p "$dir/etc" "$dir/state" "$dir/spool" "$dir/run" "$dir/log" "$dir/munge"
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(free -m | awk '/^Mem:/ {print int($2 * 0.9)}')
  port=$(free_ports)
  # A requeued job waits cred_expire seconds (default 120) before it may start again: that
  # delay is what keeps its new launch credential from being refused as revoked ("Job credential
  # revoked" when a requeued job is forced to start at once). Shorter here, so tests need not
  # force anything.
  cred_expire=${NS_SLURM_CRED_EXPIRE:-15}
  cat > "$dir/etc/slurm.conf" <<CONF
ClusterName=normsweeptest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=cred_expire=$cred_expire
CryptoType=crypto/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
JobRequeue=1
KillWait=5
MinJobAge=300
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  # munged: the system socket path is what the Slurm munge plugins use.
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
    [ -f /etc/munge/munge.key ] || { mungekey --create 2>/dev/null || create-munge-key -f; }
    runuser -u munge -- /usr/sbin/munged -F > "$dir/log/munged.log" 2>&1 &
    echo $! > "$dir/run/munged.pid"
    i=0
    until munge -n 2>/dev/null | unmunge >/dev/null 2>&1; do
      i=$((i + 1)); [ $i -lt 50 ] || { echo "local_cluster: munged did not start" >&2; exit 1; }
      sleep 0.1
    done
  fi
  export SLURM_CONF="$dir/etc/slurm.conf"
  # slurmd initialises its cgroup plugin even when nothing uses cgroups (proctrack/linuxproc,
  # task/none), and refuses to start where no cgroup file system is mounted at /sys/fs/cgroup
  # ("No filesystem mounted on /sys/fs/cgroup": a chroot, a minimal container). There it gets
  # the cgroup v1 layout its probe looks for -- a tmpfs with a cgroup hierarchy at systemd/ --
  # made of a new, empty named hierarchy that nothing else uses; stop unmounts both.
  if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = sysfs ]; then
    mount -t tmpfs -o size=1m,mode=755 normsweep-slurm-test /sys/fs/cgroup &&
      echo /sys/fs/cgroup > "$dir/run/cgroup.mount" && mkdir /sys/fs/cgroup/systemd &&
      mount -t cgroup -o none,name=normsweep-slurm-test cgroup /sys/fs/cgroup/systemd &&
      echo /sys/fs/cgroup/systemd > "$dir/run/cgroup.mount"
  fi
  # alive D...: each daemon D still runs (not ended, nor a zombie), else its log's end and exit 1
  alive() {
    local d state
    for d in "$@"; do
      state=$(ps -o stat= -p "$(cat "$dir/run/$d.daemon.pid")" 2>/dev/null || true)
      case "$state" in
        ""|Z*) echo "local_cluster: $d exited at start:" >&2; tail -n 5 "$dir/log/$d.out" >&2
               exit 1 ;;
      esac
    done
  }
  slurmctld -D -c -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
  echo $! > "$dir/run/slurmctld.daemon.pid"
  # slurmd registers with slurmctld: start it once slurmctld answers
  i=0
  until scontrol ping 2>/dev/null | grep -q "is UP"; do
    alive slurmctld
    i=$((i + 1))
    [ $i -lt 150 ] || { echo "local_cluster: slurmctld does not answer; logs in $dir/log" >&2; exit 1; }
    sleep 0.2
  done
  slurmd -D -f "$SLURM_CONF" > "$dir/log/slurmd.out" 2>&1 &
  echo $! > "$dir/run/slurmd.daemon.pid"
  i=0
  until sinfo -h -o %T 2>/dev/null | grep -q idle; do
    alive slurmctld slurmd
    i=$((i + 1))
    if [ $i -ge 100 ]; then
      echo "local_cluster: node did not become idle; logs in $dir/log" >&2
      sinfo >&2 || true
      exit 1
    fi
    sleep 0.2
  done
  echo "SLURM_CONF=$SLURM_CONF"
  ;;
stop)
  dir=${2:?usage: local_cluster.sh stop DIR}
  stop_pidfile "$dir/run/slurmd.daemon.pid"
  stop_pidfile "$dir/run/slurmctld.daemon.pid"
  stop_pidfile "$dir/run/munged.pid"
  if [ -f "$dir/run/cgroup.mount" ]; then
    [ "$(cat "$dir/run/cgroup.mount")" = /sys/fs/cgroup/systemd ] && umount /sys/fs/cgroup/systemd
    umount /sys/fs/cgroup && rm -f "$dir/run/cgroup.mount"
  fi
  ;;
*)
  echo "usage: local_cluster.sh install|start DIR|stop DIR" >&2
  exit 2
  ;;
esac
