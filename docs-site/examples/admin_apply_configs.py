"""Administrators: keep the offered profiles, versions and images in code.

Each apply_* call makes the workspace hold exactly the listed items: items not listed
are deleted and listed ones are created afresh. Run it from a deployment pipeline after
changes.
"""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.constraint.profile_constraint_duration import (
    ProfileConstraintDuration,
)
from h2o_engine_manager.clients.constraint.profile_constraint_numeric import (
    ProfileConstraintNumeric,
)
from h2o_engine_manager.clients.h2o_engine_profile.h2o_engine_profile_config import (
    H2OEngineProfileConfig,
)
from h2o_engine_manager.clients.h2o_engine_version.h2o_engine_version_config import (
    H2OEngineVersionConfig,
)
from h2o_engine_manager.clients.notebook_engine_image.image_config import (
    NotebookEngineImageConfig,
)

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)

profiles = clients.h2o_engine_profile_client.apply_h2o_engine_profile_configs(
    configs=[
        H2OEngineProfileConfig(
            h2o_engine_profile_id="small",
            display_name="Small clusters",
            priority=1,
            assigned_oidc_roles_enabled=False,
            node_count_constraint=ProfileConstraintNumeric(
                minimum="1", default="1", maximum="2"
            ),
            cpu_constraint=ProfileConstraintNumeric(
                minimum="1", default="2", maximum="4"
            ),
            gpu_constraint=ProfileConstraintNumeric(
                minimum="0", default="0", maximum="0"
            ),
            memory_bytes_constraint=ProfileConstraintNumeric(
                minimum="1Gi", default="8Gi", maximum="16Gi"
            ),
            max_idle_duration_constraint=ProfileConstraintDuration(
                minimum="15m", default="1h", maximum="4h"
            ),
            max_running_duration_constraint=ProfileConstraintDuration(
                minimum="1h", default="4h", maximum="1d"
            ),
        ),
        H2OEngineProfileConfig(
            h2o_engine_profile_id="large",
            display_name="Large clusters",
            priority=2,
            assigned_oidc_roles_enabled=True,
            assigned_oidc_roles=["data-engineers"],
            node_count_constraint=ProfileConstraintNumeric(
                minimum="2", default="4", maximum="16"
            ),
            cpu_constraint=ProfileConstraintNumeric(
                minimum="4", default="8", maximum="32"
            ),
            gpu_constraint=ProfileConstraintNumeric(
                minimum="0", default="0", maximum="0"
            ),
            memory_bytes_constraint=ProfileConstraintNumeric(
                minimum="16Gi", default="64Gi", maximum="256Gi"
            ),
            max_idle_duration_constraint=ProfileConstraintDuration(
                minimum="15m", default="1h", maximum="4h"
            ),
            max_running_duration_constraint=ProfileConstraintDuration(
                minimum="1h", default="8h", maximum="2d"
            ),
        ),
    ],
)
versions = clients.h2o_engine_version_client.apply_h2o_engine_version_configs(
    configs=[
        H2OEngineVersionConfig(
            h2o_engine_version_id="3.46.0.6",
            image="registry.example.com/h2oai/h2o-3:3.46.0.6",
            aliases=["latest"],
        ),
        H2OEngineVersionConfig(
            h2o_engine_version_id="3.44.0.3",
            image="registry.example.com/h2oai/h2o-3:3.44.0.3",
            deprecated=True,
        ),
    ],
)
images = clients.notebook_engine_image_client.apply_notebook_engine_image_configs(
    configs=[
        NotebookEngineImageConfig(
            notebook_engine_image_id="python",
            display_name="Python 3.12",
            image="registry.example.com/notebooks/python:3.12",
        ),
        NotebookEngineImageConfig(
            notebook_engine_image_id="r",
            display_name="R 4.4",
            image="registry.example.com/notebooks/r:4.4",
        ),
    ],
)

print("H2O profiles:", [profile.name for profile in profiles])
print("H2O versions:", [f"{version.name} {version.aliases}" for version in versions])
print("notebook images:", [image.name for image in images])
