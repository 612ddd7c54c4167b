"""Administrators: offer H2O engines (multi-node H2O-3 clusters).

Creates an H2O engine profile and an H2O version in workspaces/global.
"""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.constraint.profile_constraint_duration import (
    ProfileConstraintDuration,
)
from h2o_engine_manager.clients.constraint.profile_constraint_numeric import (
    ProfileConstraintNumeric,
)
from h2o_engine_manager.clients.h2o_engine_profile.h2o_engine_profile import (
    H2OEngineProfile,
)
from h2o_engine_manager.clients.h2o_engine_version.version import H2OEngineVersion

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)

# cpu, gpu and memory are per node; the cumulative maximum caps one user's running
# clusters.
profile = clients.h2o_engine_profile_client.create_h2o_engine_profile(
    parent="workspaces/global",
    h2o_engine_profile_id="standard",
    h2o_engine_profile=H2OEngineProfile(
        display_name="Standard",
        assigned_oidc_roles_enabled=False,
        max_running_engines=3,
        node_count_constraint=ProfileConstraintNumeric(
            minimum="1", default="1", maximum="8", cumulative_maximum="12"
        ),
        cpu_constraint=ProfileConstraintNumeric(minimum="1", default="4", maximum="16"),
        gpu_constraint=ProfileConstraintNumeric(minimum="0", default="0", maximum="0"),
        memory_bytes_constraint=ProfileConstraintNumeric(
            minimum="2Gi", default="16Gi", maximum="64Gi"
        ),
        max_idle_duration_constraint=ProfileConstraintDuration(
            minimum="15m", default="2h", maximum="1d"
        ),
        max_running_duration_constraint=ProfileConstraintDuration(
            minimum="1h", default="8h", maximum="3d"
        ),
        java_options="-XX:+UseG1GC",
        h2o_options="-nthreads -1",
    ),
)
version = clients.h2o_engine_version_client.create_h2o_engine_version(
    parent="workspaces/global",
    h2o_engine_version_id="3.46.0.6",
    h2o_engine_version=H2OEngineVersion(
        image="registry.example.com/h2oai/h2o-3:3.46.0.6", aliases=["latest"]
    ),
)

nodes = profile.node_count_constraint
print(
    f"{profile.name}: {nodes.minimum}-{nodes.maximum} nodes, "
    f"at most {nodes.cumulative_maximum} running per user"
)
print(f"{version.name}: aliases {version.aliases}")
