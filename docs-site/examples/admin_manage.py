"""Administrators: roll out a new DAI version, share a profile with a team, retire an
image."""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.dai_engine_version.version import DAIEngineVersion

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)
versions = clients.dai_engine_version_client
profiles = clients.dai_engine_profile_client
images = clients.notebook_engine_image_client

# A new release, tried out under the "beta" alias, then promoted to "latest".
versions.create_dai_engine_version(
    parent="workspaces/global",
    dai_engine_version_id="1.11.2",
    dai_engine_version=DAIEngineVersion(
        image="registry.example.com/h2oai/dai:1.11.2", aliases=["beta"]
    ),
)
# Assigning aliases replaces the version's aliases and takes them from the versions
# holding them.
versions.assign_dai_engine_version_aliases(
    name="workspaces/global/daiEngineVersions/1.11.2", aliases=["latest"]
)
print(
    "latest is",
    versions.get_dai_engine_version(
        name="workspaces/global/daiEngineVersions/latest"
    ).name,
)

old = versions.get_dai_engine_version(name="workspaces/global/daiEngineVersions/1.11.1")
old.deprecated = True
versions.update_dai_engine_version(dai_engine_version=old, update_mask="deprecated")
for version in versions.list_all_dai_engine_versions(parent="workspaces/global"):
    print(
        f"  {version.name}: aliases {version.aliases}, deprecated {version.deprecated}"
    )

# A copy of the standard profile for one team, with a larger memory default.
team = profiles.copy_dai_engine_profile(
    name="workspaces/global/daiEngineProfiles/standard",
    parent="workspaces/team-a",
    dai_engine_profile_id="team-a-standard",
)
team.memory_bytes_constraint.default = "32Gi"
team.display_name = "Team A"
team = profiles.update_dai_engine_profile(
    dai_engine_profile=team, update_mask="memory_bytes_constraint,display_name"
)
print(f"{team.name}: memory default {team.memory_bytes_constraint.default}")

# A disabled image stays on existing notebooks but cannot be used for new ones.
image = images.get_notebook_engine_image(
    name="workspaces/global/notebookEngineImages/python"
)
image.enabled = False
images.update_notebook_engine_image(notebook_engine_image=image, update_mask="enabled")
print(image.name, "enabled:", images.get_notebook_engine_image(name=image.name).enabled)
