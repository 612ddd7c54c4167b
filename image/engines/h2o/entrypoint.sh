#!/bin/sh
# The H2O-3 engine's node: H2O in the foreground as PID 1 (the JVM ends cleanly on SIGTERM).
# The operator's environment:
#   JAVA_OPTS         options for the JVM; without -Xmx the heap is sized from the memory limit
#   CLASSPATH         added after h2o.jar (extensions, JDBC drivers)
#   H2O_OPTS          H2O's own options, last, so they win over the ones set here
#   H2O_CONTEXT_PATH  the path H2O's REST API and Flow are served under (-context_path)
#   H2O_KUBERNETES_SERVICE_DNS, H2O_NODE_EXPECTED_COUNT, H2O_NODE_LOOKUP_TIMEOUT,
#   H2O_KUBERNETES_API_PORT: read by H2O itself (water.k8s): the nodes find each other through
#   the headless Service's DNS name and serve /kubernetes/isLeaderNode on the API port.
# The root is read-only and only /tmp is writable: H2O's ice_root (spills, logs) and Java's
# temporary files go there.
set -eu
# JAVA_OPTS and H2O_OPTS are lists of words, as a shell would split them; never globs.
set -f

heap=
case " ${JAVA_OPTS:-} " in
  *" -Xmx"*) ;;
  # Half of the container's memory: the rest is for what H2O keeps outside the Java heap
  # (XGBoost's native memory, thread stacks, metaspace, the page cache of spilled data).
  *) heap=-XX:MaxRAMPercentage=50 ;;
esac

set -- -port 54321 -ice_root /tmp/h2o
if [ -n "${H2O_CONTEXT_PATH:-}" ]; then set -- "$@" -context_path "$H2O_CONTEXT_PATH"; fi

# -cp rather than -jar, so that CLASSPATH adds to it; the --add-opens are those of h2o.jar's
# manifest, which the JVM reads only with -jar.
# shellcheck disable=SC2086
exec java $heap -Djava.io.tmpdir=/tmp \
  --add-opens java.base/java.lang=ALL-UNNAMED \
  --add-opens java.base/java.util=ALL-UNNAMED \
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED \
  ${JAVA_OPTS:-} \
  -cp "/opt/h2o/h2o.jar${CLASSPATH:+:$CLASSPATH}" water.H2OApp "$@" ${H2O_OPTS:-}
