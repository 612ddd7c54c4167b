"""Drives the published h2o-engine-manager client, unmodified, to run an H2O engine for real.

Usage: python real_h2o.py <aiem_url> <workspace> create|terminate
create: a user creates a two-node H2O engine from the real-node catalogue (profile and version
"real" in the workspace "global") and waits until it runs.
terminate: the user terminates it, waits for TERMINATED, and deletes it.
Prints one line per step and exits non-zero on the first mismatch.
"""
import sys
import time

from compat_login import connection
from compat_steps import check, state
from h2o_engine_manager.clients.h2o_engine.client import H2OEngineClient

user = connection(sys.argv[1], "user")
workspace, phase = sys.argv[2], sys.argv[3]
engines = H2OEngineClient(connection_config=user, default_workspace_id=workspace)
# Starting the JVMs and forming the cloud takes seconds; a loaded two-core machine, minutes.
WAIT = 300

if phase == "create":
    engine = engines.create_engine(
        engine_id="cluster",
        node_count=2,
        cpu=1,
        memory_bytes="1Gi",
        profile="workspaces/global/h2oEngineProfiles/real",
        h2o_engine_version="workspaces/global/h2oEngineVersions/real",
    )
    check("a two-node H2O engine is created", engine.node_count == 2)
    engine.wait(timeout_seconds=WAIT)
    check(f"wait() returns once the engine runs (it is {state(engine)})", state(engine).removeprefix("STATE_") == "RUNNING")
    check("a running engine has its API address", engine.api_url.endswith(f"/workspaces/{workspace}/h2oEngines/cluster/"))
else:
    engine = engines.get_engine(engine_id="cluster")
    engine.terminate()
    engine.wait(timeout_seconds=WAIT)
    check("wait() returns once the engine is terminated", state(engine).removeprefix("STATE_") == "TERMINATED")
    engine.delete()
    # Deletion finishes once the operator has removed what the engine owned.
    deadline = time.monotonic() + WAIT
    while "cluster" in [e.engine_id for e in engines.list_all_engines()] and time.monotonic() < deadline:
        time.sleep(1)
    check("a deleted engine is gone from the list", "cluster" not in [e.engine_id for e in engines.list_all_engines()])
print("all steps passed")
