"""Log in to AI Engine Manager and see what you may use.

Reads the server address and an OIDC refresh token from the environment, exchanges the
token at the identity provider, checks that the server answers, and builds every client.
"""

import os

import h2o_engine_manager

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],  # e.g. https://engine-manager.example.com
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],  # e.g. https://auth.example.com/realms/ai
    client_id=os.environ["AIEM_CLIENT_ID"],
    default_workspace_id="default",
)

# Profiles assigned to you (through your roles) are the ones you can create engines
# from.
profiles = clients.dai_engine_profile_client.list_all_assigned_dai_engine_profiles(
    parent="workspaces/global"
)
for profile in profiles:
    print(f"DAI profile {profile.name} ({profile.display_name})")

versions = clients.dai_engine_version_client.list_all_dai_engine_versions(
    parent="workspaces/global"
)
for version in versions:
    print(f"DAI version {version.name} aliases={version.aliases}")
