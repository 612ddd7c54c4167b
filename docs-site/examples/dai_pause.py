"""Pause a running Driverless AI engine (its data volume stays), then resume it."""

import os

import h2o_engine_manager

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
    default_workspace_id="default",
)
engine = clients.dai_engine_client.get_engine(engine_id="churn-model")

engine.pause()
print(f"{engine.state.value}, reconciling {engine.reconciling}")
# wait() returns once the engine has stopped moving: here, when it is paused.
engine.wait(timeout_seconds=600)
print(engine.state.value)

engine.resume()
print(f"{engine.state.value}, reconciling {engine.reconciling}")
