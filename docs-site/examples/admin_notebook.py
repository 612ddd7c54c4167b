"""Administrators: offer notebook engines.

Creates a notebook engine profile that checks out a team repository into every new
notebook, and a notebook image, in workspaces/global.
"""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.constraint.profile_constraint_duration import (
    ProfileConstraintDuration,
)
from h2o_engine_manager.clients.constraint.profile_constraint_numeric import (
    ProfileConstraintNumeric,
)
from h2o_engine_manager.clients.notebook_engine_image.image import NotebookEngineImage
from h2o_engine_manager.clients.notebook_engine_profile.profile import (
    NotebookEngineProfile,
)

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)

profile = clients.notebook_engine_profile_client.create_notebook_engine_profile(
    parent="workspaces/global",
    notebook_engine_profile_id="standard",
    notebook_engine_profile=NotebookEngineProfile(
        display_name="Standard",
        assigned_oidc_roles_enabled=False,
        cpu_constraint=ProfileConstraintNumeric(minimum="1", default="2", maximum="8"),
        gpu_constraint=ProfileConstraintNumeric(minimum="0", default="0", maximum="0"),
        memory_bytes_constraint=ProfileConstraintNumeric(
            minimum="1Gi", default="4Gi", maximum="32Gi"
        ),
        storage_bytes_constraint=ProfileConstraintNumeric(
            minimum="1Gi", default="10Gi", maximum="200Gi"
        ),
        max_idle_duration_constraint=ProfileConstraintDuration(
            minimum="15m", default="2h", maximum="1d"
        ),
        max_running_duration_constraint=ProfileConstraintDuration(
            minimum="1h", default="12h", maximum="7d"
        ),
        sync_git_repository_enabled=True,
        git_repository="https://git.example.com/data-science/notebooks.git",
    ),
)
image = clients.notebook_engine_image_client.create_notebook_engine_image(
    parent="workspaces/global",
    notebook_engine_image_id="python",
    notebook_engine_image=NotebookEngineImage(
        display_name="Python 3.12 with scikit-learn",
        image="registry.example.com/notebooks/python-scikit:3.12",
    ),
)

# The server fills the checkout defaults: the HEAD revision, into a folder named
# "Example".
print(
    f"{profile.name}: clones {profile.git_repository} "
    f"at {profile.git_ref} into {profile.git_directory_name}/"
)
print(f"{image.name}: {image.image} (enabled: {image.enabled})")
