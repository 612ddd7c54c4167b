"""Move a Driverless AI engine to a newer version, and hand it over to a colleague."""

import os

import h2o_engine_manager

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
    default_workspace_id="default",
)
dai = clients.dai_engine_client

engine = dai.create_engine(
    engine_id="fraud-model",
    display_name="Fraud model",
    profile="workspaces/global/daiEngineProfiles/standard",
    dai_engine_version="workspaces/global/daiEngineVersions/1.10.7",
)
engine.wait(timeout_seconds=600)
print(
    f"{engine.display_name} runs DAI "
    f"{engine.dai_engine_version_info.name.split('/')[-1]}"
)

# An upgrade needs a paused engine and a newer version; the engine keeps its data.
engine.pause()
engine.wait(timeout_seconds=600)
engine.upgrade_dai_engine_version(
    new_dai_engine_version="workspaces/global/daiEngineVersions/latest"
)
print(f"upgraded to {engine.dai_engine_version}")
engine.resume()
engine.wait(timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value} again")

# Administrators can make another user the engine's owner (for example when someone
# leaves).
engine.migrate_creator(new_creator="users/bob")
print(f"{engine.name} now belongs to {engine.creator}")
