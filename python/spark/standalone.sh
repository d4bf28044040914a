#!/usr/bin/env bash
# A standalone Spark cluster on 127.0.0.1: one master and two workers (one core each), from
# the PySpark installed in $PYTHON's environment (PyPI's pyspark ships spark-class).
#
#   python/spark/standalone.sh start DIR [PORT]   # prints the master URL once both workers
#                                                 # have registered; logs and pids in DIR
#   python/spark/standalone.sh stop DIR
#
# Environment: PYTHON (default python3), WORKER_MEMORY (default 2g), WORKERS (default 2).
set -euo pipefail
action=${1:?usage: standalone.sh start|stop DIR [PORT]}
dir=${2:?usage: standalone.sh start|stop DIR [PORT]}
port=${3:-7077}
python=${PYTHON:-python3}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

stop() {
  for pidfile in "$dir"/*.pid; do
    [ -e "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

wait_for() { # FILE PATTERN WHAT
  for _ in $(seq 600); do
    if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "standalone.sh: $3 did not start within 60 s; its log, $1:" >&2
  tail -20 "$1" >&2 || true
  stop
  exit 1
}

case "$action" in
  start)
    spark_home=$("$python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
    command -v java >/dev/null || { echo "standalone.sh: java not found (Java 17)" >&2; exit 1; }
    export SPARK_HOME=$spark_home SPARK_LOCAL_IP=127.0.0.1 SPARK_MASTER_HOST=127.0.0.1
    export SPARK_LOG_DIR=$dir SPARK_WORKER_DIR=$dir/work
    stop
    nohup "$spark_home/bin/spark-class" org.apache.spark.deploy.master.Master \
      --host 127.0.0.1 --port "$port" --webui-port 0 >"$dir/master.log" 2>&1 </dev/null &
    echo $! >"$dir/master.pid"
    wait_for "$dir/master.log" "I have been elected leader" "the master"
    for worker in $(seq "${WORKERS:-2}"); do
      nohup "$spark_home/bin/spark-class" org.apache.spark.deploy.worker.Worker \
        --host 127.0.0.1 --cores 1 --memory "${WORKER_MEMORY:-2g}" --webui-port 0 \
        --work-dir "$dir/work$worker" "spark://127.0.0.1:$port" \
        >"$dir/worker$worker.log" 2>&1 </dev/null &
      echo $! >"$dir/worker$worker.pid"
    done
    for worker in $(seq "${WORKERS:-2}"); do
      wait_for "$dir/worker$worker.log" "Successfully registered with master" "worker $worker"
    done
    echo "spark://127.0.0.1:$port"
    ;;
  stop) stop ;;
  *) echo "usage: standalone.sh start|stop DIR [PORT]" >&2; exit 2 ;;
esac
