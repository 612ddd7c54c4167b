"""Change, pause, resume, resize and delete a notebook engine."""

import os

import h2o_engine_manager

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)
notebooks = clients.notebook_engine_client
name = "workspaces/default/notebookEngines/exploration"

engine = notebooks.get_notebook_engine(name=name)
engine.display_name = "Churn exploration"
engine.max_idle_duration = "4h"
engine = notebooks.update_notebook_engine(
    notebook_engine=engine, update_mask="display_name,max_idle_duration"
)
print(f"{engine.display_name}: pauses after {engine.max_idle_duration} idle")

# Pause keeps the engine's storage; resume starts it again with the same files.
notebooks.pause_notebook_engine(name=name)
engine = notebooks.wait(name=name, timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value}")

engine = notebooks.resize_notebook_engine_storage(name=name, new_storage="50Gi")
print(f"storage {engine.storage_bytes}")

notebooks.resume_notebook_engine(name=name)
engine = notebooks.wait(name=name, timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value}")

for engine in notebooks.list_all_notebook_engines(parent="workspaces/default"):
    print(f"{engine.name}: {engine.display_name}")

notebooks.delete_notebook_engine(name=name)
print("gone:", notebooks.wait(name=name, timeout_seconds=600) is None)
