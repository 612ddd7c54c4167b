"""Your first engine in five minutes: sign in, create a Driverless AI engine, open it, pause it.

Reads the server address and an OIDC refresh token from the environment (with `make run`,
from .run/stack.json), creates an engine from the first profile assigned to you and the
version "latest" points at, waits until it runs, prints the address to open it at, then
pauses it: its data stays, and it costs nothing until you resume it.
"""

import os

import h2o_engine_manager

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
    default_workspace_id="default",
)

# Left out, the profile is the first one assigned to you, and CPU, memory, storage and the
# idle limit are that profile's defaults.
engine = clients.dai_engine_client.create_engine(
    engine_id="my-first-engine",
    dai_engine_version="workspaces/global/daiEngineVersions/latest",
)
print(f"created {engine.name} from {engine.profile}")

engine.wait(timeout_seconds=600)
print(f"{engine.state.value}: open {engine.login_url}")

engine.pause()
engine.wait(timeout_seconds=600)
print(f"{engine.state.value}: resume it with engine.resume()")
