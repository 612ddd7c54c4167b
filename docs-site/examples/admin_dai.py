"""Administrators: offer Driverless AI engines.

Creates two DAI engine profiles and two DAI versions in workspaces/global, where users
of every workspace find them. The "gpu" profile is only for members of the "gpu-users"
role.
"""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.constraint.profile_constraint_duration import (
    ProfileConstraintDuration,
)
from h2o_engine_manager.clients.constraint.profile_constraint_numeric import (
    ProfileConstraintNumeric,
)
from h2o_engine_manager.clients.dai_engine_profile.config_editability import (
    ConfigEditability,
)
from h2o_engine_manager.clients.dai_engine_profile.dai_engine_profile import (
    DAIEngineProfile,
)
from h2o_engine_manager.clients.dai_engine_version.version import DAIEngineVersion

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)
profiles = clients.dai_engine_profile_client
versions = clients.dai_engine_version_client

# Everyone: up to 16 cores and 64 GiB, paused after 4 idle hours, at most two running
# engines.
profiles.create_dai_engine_profile(
    parent="workspaces/global",
    dai_engine_profile_id="standard",
    dai_engine_profile=DAIEngineProfile(
        display_name="Standard",
        priority=10,
        assigned_oidc_roles_enabled=False,
        max_running_engines=2,
        cpu_constraint=ProfileConstraintNumeric(minimum="1", default="4", maximum="16"),
        gpu_constraint=ProfileConstraintNumeric(minimum="0", default="0", maximum="0"),
        memory_bytes_constraint=ProfileConstraintNumeric(
            minimum="2Gi", default="16Gi", maximum="64Gi"
        ),
        storage_bytes_constraint=ProfileConstraintNumeric(
            minimum="10Gi", default="64Gi", maximum="1Ti"
        ),
        max_idle_duration_constraint=ProfileConstraintDuration(
            minimum="15m", default="4h", maximum="1d"
        ),
        max_running_duration_constraint=ProfileConstraintDuration(
            minimum="1h", default="1d", maximum="7d"
        ),
        # Users may only change the keys the base configuration sets.
        config_editability=ConfigEditability.CONFIG_EDITABILITY_BASE_CONFIG_ONLY,
        base_configuration={"max_runtime_minutes": "1440", "max_cores": "0"},
    ),
)

# Members of "gpu-users": one to four GPUs on the GPU nodes, which carry a NoSchedule
# taint.
profiles.create_dai_engine_profile(
    parent="workspaces/global",
    dai_engine_profile_id="gpu",
    dai_engine_profile=DAIEngineProfile(
        display_name="GPU",
        priority=20,
        assigned_oidc_roles_enabled=True,
        assigned_oidc_roles=["gpu-users"],
        max_running_engines=1,
        cpu_constraint=ProfileConstraintNumeric(minimum="4", default="8", maximum="32"),
        gpu_constraint=ProfileConstraintNumeric(minimum="1", default="1", maximum="4"),
        memory_bytes_constraint=ProfileConstraintNumeric(
            minimum="16Gi", default="64Gi", maximum="256Gi"
        ),
        storage_bytes_constraint=ProfileConstraintNumeric(
            minimum="64Gi", default="256Gi", maximum="2Ti"
        ),
        max_idle_duration_constraint=ProfileConstraintDuration(
            minimum="15m", default="1h", maximum="4h"
        ),
        max_running_duration_constraint=ProfileConstraintDuration(
            minimum="1h", default="12h", maximum="2d"
        ),
        config_editability=ConfigEditability.CONFIG_EDITABILITY_FULL,
        gpu_resource_name="nvidia.com/gpu",
        yaml_gpu_tolerations=(
            "- key: nvidia.com/gpu\n" "  operator: Exists\n" "  effect: NoSchedule\n"
        ),
    ),
)

# Two DAI releases; "latest" points at the newer one, the older one is on its way out.
versions.create_dai_engine_version(
    parent="workspaces/global",
    dai_engine_version_id="1.10.7",
    dai_engine_version=DAIEngineVersion(
        image="registry.example.com/h2oai/dai:1.10.7", deprecated=True
    ),
)
versions.create_dai_engine_version(
    parent="workspaces/global",
    dai_engine_version_id="1.11.1",
    dai_engine_version=DAIEngineVersion(
        image="registry.example.com/h2oai/dai:1.11.1",
        aliases=["latest"],
        image_pull_secrets=["registry-credentials"],
    ),
)

for profile in profiles.list_all_dai_engine_profiles(parent="workspaces/global"):
    print(
        f"{profile.name}: cpu {profile.cpu_constraint.default}, "
        f"gpu {profile.gpu_constraint.default}, "
        f"memory {profile.memory_bytes_constraint.default}, "
        f"roles {profile.assigned_oidc_roles or 'everyone'}"
    )
for version in versions.list_all_dai_engine_versions(parent="workspaces/global"):
    print(f"{version.name}: aliases {version.aliases}, deprecated {version.deprecated}")
